package governance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

// SessionFilter narrows and pages the sessions list (SessionService.Page).
// An empty field matches everything.
type SessionFilter struct {
	Mission string // the mission's slug
	// State keeps the sessions whose next action is this protocol state,
	// by its wire name ("BLOCKED").
	State      string
	Agent      string // the agent's name (the agent key's)
	Executor   string // SessionSummary.Executor: "claude-code"
	ExternalID string // the id the agent's client gave the session
	// Q keeps the sessions whose title holds it, ignoring case.
	Q string
	// Limit is how many sessions a page holds: DefaultLimit when 0, at
	// most MaxLimit. Next is the cursor of the page before's Next ("" for
	// the first page).
	Limit int
	Next  string
}

// Validate refuses a state that does not exist, a value too long to name
// anything and a limit out of bounds. Errors: unknown_state,
// filter_too_long, invalid_limit.
func (f SessionFilter) Validate() error {
	if _, ok := protocol.ParseState(f.State); f.State != "" && !ok {
		return errs.E(errs.Invalid, "unknown_state", "There is no state called %q: choose one of %s.", short(f.State), stateNames()).In("state")
	}
	for _, v := range []struct{ name, v string }{{"mission", f.Mission}, {"agent", f.Agent}, {"executor", f.Executor},
		{"external_id", f.ExternalID}, {"q", f.Q}} {
		if n := utf8.RuneCountInString(v.v); n > maxFilter {
			return errs.E(errs.Invalid, "filter_too_long", "The %s filter is %d characters long; at most %d are allowed.", v.name, n, maxFilter).In(v.name)
		}
	}
	if f.Limit < 0 || f.Limit > MaxLimit {
		return activity.ErrLimit
	}
	return nil
}

// SessionPage is one page of the sessions list.
type SessionPage struct {
	// Items are most severe next action first (HARD_STOP, BLOCKED,
	// DECISION_REQUIRED, REMEDIATE, CONTINUE_WITH_WARNING, CONTINUE), then
	// oldest first, then by id.
	Items []SessionSummary `json:"items"`
	// Next is the cursor of the page after ("" on the last page).
	Next string `json:"next,omitempty"`
}

// sessionPlace is a session's place in the list's order, as a cursor
// holds it.
type sessionPlace struct {
	State     int       `json:"s"`
	CreatedAt time.Time `json:"c"`
	ID        string    `json:"i"`
}

func compareSessionPlaces(a, b sessionPlace) int {
	if a.State != b.State {
		return b.State - a.State
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func sessionPlaceOf(s SessionSummary) sessionPlace {
	return sessionPlace{State: int(s.NextAction), CreatedAt: s.CreatedAt, ID: s.ID}
}

// Page lists a page of the sessions under the filter, each with its next
// action as its brief would say it (computed by the same engine from the
// same cached inputs, delivering nothing): most severe first, then
// oldest. A person sees every session, an agent key only its own. The
// console's sessions list and GET /api/v1/sessions both call it. Errors:
// forbidden (neither a person nor an agent), those of
// SessionFilter.Validate, invalid_next.
func (s *SessionService) Page(ctx context.Context, actor auth.Actor, f SessionFilter) (SessionPage, error) {
	if !actor.IsPerson() && !actor.IsAgent() {
		return SessionPage{}, errs.E(errs.Forbidden, "forbidden", "Sign in, or call with an agent key, to list sessions.")
	}
	if err := f.Validate(); err != nil {
		return SessionPage{}, err
	}
	limit := f.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	var after *sessionPlace
	if f.Next != "" {
		after = &sessionPlace{}
		if err := decodeCursor(f.Next, after); err != nil {
			return SessionPage{}, err
		}
		if after.ID == "" || after.CreatedAt.IsZero() {
			return SessionPage{}, errNext
		}
	}
	state, byState := protocol.ParseState(f.State)
	var key int64
	if !actor.IsPerson() {
		key = actor.KeyID
	}
	now := s.core.now()
	rows, err := s.core.store.Reader().ListSessionsFiltered(ctx, db.ListSessionsFilteredParams{Mission: f.Mission, Agent: f.Agent,
		Executor: f.Executor, ExternalID: f.ExternalID, AgentKeyID: key})
	if err != nil {
		return SessionPage{}, fmt.Errorf("list sessions: %w", err)
	}
	q := strings.ToLower(f.Q)
	list := make([]SessionSummary, 0, len(rows))
	for _, r := range rows {
		if q != "" && !strings.Contains(strings.ToLower(r.Title), q) {
			continue
		}
		in, err := s.briefs.views.view(ctx, r.ID, now)
		if err != nil {
			return SessionPage{}, fmt.Errorf("list sessions: %s: %w", r.ID, err)
		}
		b := assemble(in, nil, now)
		if byState && b.NextAction != state {
			continue
		}
		sess, err := s.sessionFrom(db.GetSessionRow{ID: r.ID, AgentKeyID: r.AgentKeyID, Agent: r.Agent, AgentLabel: r.AgentLabel,
			Title: r.Title, Lifecycle: r.Lifecycle, PausedAt: in.state.PausedAt, PauseReason: in.state.PauseReason,
			LastBriefAt: r.LastBriefAt, CreatedAt: r.CreatedAt, ExternalID: r.ExternalID, Root: in.state.Root, MissionSlug: r.MissionSlug, MissionHighRisk: in.state.HighRisk})
		if err != nil {
			return SessionPage{}, fmt.Errorf("list sessions: %w", err)
		}
		c := db.StoredRow("sessions", r.ID)
		updated := c.Time("updated_at", r.UpdatedAt)
		if err := c.Err(); err != nil {
			return SessionPage{}, fmt.Errorf("list sessions: %w", err)
		}
		list = append(list, SessionSummary{Session: sess, Tracked: in.state.LifecycleAt.Valid, NextAction: b.NextAction, Reason: b.Reason,
			ParkedAsks: int(r.ParkedAsks), Executor: executorOf(r.Agent, r.AgentLabel), UpdatedAt: updated})
	}
	slices.SortFunc(list, func(a, b SessionSummary) int { return compareSessionPlaces(sessionPlaceOf(a), sessionPlaceOf(b)) })
	from := 0
	if after != nil {
		from, _ = slices.BinarySearchFunc(list, *after, func(s SessionSummary, p sessionPlace) int {
			if compareSessionPlaces(sessionPlaceOf(s), p) <= 0 {
				return -1
			}
			return 1
		})
	}
	out := SessionPage{Items: list[from:min(from+limit, len(list))]}
	if from+limit < len(list) {
		out.Next = encodeCursor(sessionPlaceOf(out.Items[len(out.Items)-1]))
	}
	return out, nil
}

// executorOf is a session's executor: what its client called itself,
// else its agent's name.
func executorOf(agent, label string) string {
	if label != "" {
		return label
	}
	return agent
}
