package governance

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/notify"
)

// ActivityService reads the activity record: what every person did, and
// what changed each time (package activity writes it, in each action's
// transaction).
type ActivityService struct{ core *core }

// ActivityPage is a page of the activity record, newest first.
type ActivityPage struct {
	Items []activity.Entry `json:"items"`
	// NextBefore is the cursor of the next, older page (its ?before=, or
	// ?next= on /api/v1/activity); nil on the last page.
	NextBefore *int64 `json:"next_before"`
	// Next is NextBefore as text, "" on the last page.
	Next string `json:"next"`
}

// List returns a page of the activity record, newest first; any person
// may read it. Errors: forbidden, invalid_limit (not 1 to
// activity.MaxLimit), invalid_before (not a positive id),
// action_too_long, actor_too_long, invalid_characters.
func (s *ActivityService) List(ctx context.Context, actor auth.Actor, p activity.Page) (ActivityPage, error) {
	if err := actor.RequirePerson("read the activity record"); err != nil {
		return ActivityPage{}, err
	}
	if p.Limit == 0 {
		p.Limit = activity.DefaultLimit
	}
	if p.Limit < 1 || p.Limit > activity.MaxLimit {
		return ActivityPage{}, activity.ErrLimit
	}
	if p.Before < 0 {
		return ActivityPage{}, activity.ErrBefore
	}
	before := p.Before
	if before == 0 {
		before = math.MaxInt64
	}
	action, err := input.Optional("action", p.Action, activity.MaxFilter)
	if err != nil {
		return ActivityPage{}, err
	}
	who, err := input.Optional("actor", p.Actor, activity.MaxFilter)
	if err != nil {
		return ActivityPage{}, err
	}
	since := ""
	if !p.Since.IsZero() {
		since = db.FormatTime(p.Since)
	}
	rows, err := s.core.store.Reader().ListAdminActivity(ctx, db.ListAdminActivityParams{Before: before, Prefix: action,
		Actor: who, Since: since, Lim: int64(p.Limit) + 1})
	if err != nil {
		return ActivityPage{}, fmt.Errorf("list admin activity: %w", err)
	}
	out := ActivityPage{Items: make([]activity.Entry, 0, min(len(rows), p.Limit))}
	for i, r := range rows {
		if i == p.Limit {
			next := out.Items[i-1].ID
			out.NextBefore, out.Next = &next, strconv.FormatInt(next, 10)
			break
		}
		e, err := activity.FromRow(r)
		if err != nil {
			return ActivityPage{}, fmt.Errorf("list admin activity: %w", err)
		}
		out.Items = append(out.Items, shownEntry(e))
	}
	return out, nil
}

// shownEntry is an entry as it is shown. Webhook URLs are recorded
// redacted (notify.RedactURL); an entry recorded before they were holds
// one whole, in its target and its url fields, and is redacted here.
func shownEntry(e activity.Entry) activity.Entry {
	if !strings.HasPrefix(e.Action, "webhook.") {
		return e
	}
	if i := strings.Index(e.Target, " ("); i >= 0 && strings.HasSuffix(e.Target, ")") && !strings.Contains(e.Target, notify.Mask) {
		e.Target = e.Target[:i+2] + notify.RedactURL(e.Target[i+2:len(e.Target)-1]) + ")"
	}
	e.Before, e.After = shownURL(e.Before), shownURL(e.After)
	return e
}

// shownURL redacts the url field of a recorded state that holds it whole.
func shownURL(state json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if len(state) == 0 || json.Unmarshal(state, &fields) != nil || fields == nil {
		return state
	}
	var u string
	if json.Unmarshal(fields["url"], &u) != nil || u == "" || strings.Contains(u, notify.Mask) || notify.RedactURL(u) == u {
		return state
	}
	b, err := json.Marshal(notify.RedactURL(u))
	if err != nil {
		return state
	}
	fields["url"] = b
	out, err := json.Marshal(fields)
	if err != nil {
		return state
	}
	return out
}
