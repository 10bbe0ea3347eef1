package governance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

// The pages of the JSON lists (the Attention queue, the sessions): limit
// items at most (DefaultLimit when 0, at most MaxLimit), and an opaque
// cursor, next, to the page after. A cursor is the last item's place in
// the list's order (a keyset, not an offset): the next page starts after
// it, so an item that joins or leaves the list between two pages moves no
// other item from one page to another.
const (
	DefaultLimit = activity.DefaultLimit
	MaxLimit     = activity.MaxLimit
)

// ParseLimit reads a page's limit from a query's text: DefaultLimit when
// empty, else a whole number from 1 to MaxLimit. Errors: invalid_limit.
func ParseLimit(text string) (int, error) {
	if text == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, activity.ErrLimit
	}
	return n, nil
}

// errNext refuses a cursor no page gave.
var errNext = errs.E(errs.Invalid, "invalid_next", "next must be the \"next\" of the page before, as it gave it.").In("next")

// encodeCursor makes a place in a list an opaque cursor.
func encodeCursor(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Not input: the cursors are structs of strings, numbers and times.
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a cursor encodeCursor made. Errors: invalid_next.
func decodeCursor(text string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || len(text) > 2000 {
		return errNext
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	if d.Decode(v) != nil || d.More() {
		return errNext
	}
	return nil
}

// AttentionList is one page of the queue as the JSON API lists it.
type AttentionList struct {
	Items []AttentionItem `json:"items"`
	// Next is the cursor of the page after ("" on the last page).
	Next string `json:"next,omitempty"`
}

// itemPlace is an item's place in the queue's order, as a cursor holds it.
type itemPlace struct {
	Expired   bool      `json:"e,omitempty"`
	ExpiredAt time.Time `json:"x,omitzero"`
	State     int       `json:"s"`
	OpenedAt  time.Time `json:"o"`
	Ref       string    `json:"r"`
	Kind      string    `json:"k"`
	Session   string    `json:"n"`
}

func placeOf(it AttentionItem) itemPlace {
	p := itemPlace{Expired: it.Expired, State: int(it.State), OpenedAt: it.OpenedAt, Ref: it.Ref, Kind: it.Kind, Session: it.Session}
	if it.ExpiredAt != nil {
		p.ExpiredAt = *it.ExpiredAt
	}
	return p
}

// comparePlaces is the queue's order (bySeverity: expired gates first, the
// earliest expired first, then most severe, then oldest, then by ref),
// made total by kind and session.
func comparePlaces(a, b itemPlace) int {
	switch {
	case a.Expired && b.Expired:
		if c := a.ExpiredAt.Compare(b.ExpiredAt); c != 0 {
			return c
		}
	case a.Expired:
		return -1
	case b.Expired:
		return 1
	}
	if a.State != b.State {
		return b.State - a.State
	}
	if c := a.OpenedAt.Compare(b.OpenedAt); c != 0 {
		return c
	}
	if c := strings.Compare(a.Ref, b.Ref); c != 0 {
		return c
	}
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return strings.Compare(a.Session, b.Session)
}

// Query lists a page of the queue under the filter, for the JSON API:
// expired gates first, then most severe, then oldest (List's order), up
// to limit items (DefaultLimit when 0) after the cursor next ("" for the
// first page). The filter's Viewer is the person reading: their snoozed
// items are hidden unless f.Snoozed says otherwise. Errors: forbidden
// (the viewer is not a person), those of AttentionFilter.Validate,
// invalid_limit, invalid_next.
func (s *AttentionService) Query(ctx context.Context, f AttentionFilter, limit int, next string) (AttentionList, error) {
	if err := f.Viewer.RequirePerson("read the Attention queue"); err != nil {
		return AttentionList{}, err
	}
	if err := f.Validate(); err != nil {
		return AttentionList{}, err
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > MaxLimit {
		return AttentionList{}, activity.ErrLimit
	}
	var after *itemPlace
	if next != "" {
		after = &itemPlace{}
		if err := decodeCursor(next, after); err != nil {
			return AttentionList{}, err
		}
		if _, err := protocol.State(after.State).MarshalText(); err != nil || after.Kind == "" || after.Session == "" || after.OpenedAt.IsZero() {
			return AttentionList{}, errNext
		}
	}
	var items []AttentionItem
	now := s.core.now()
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		var err error
		items, err = collect(ctx, q, f, now)
		return err
	})
	if err != nil {
		return AttentionList{}, fmt.Errorf("attention: %w", err)
	}
	slices.SortFunc(items, func(a, b AttentionItem) int { return comparePlaces(placeOf(a), placeOf(b)) })
	from := 0
	if after != nil {
		from, _ = slices.BinarySearchFunc(items, *after, func(it AttentionItem, p itemPlace) int {
			if comparePlaces(placeOf(it), p) <= 0 {
				return -1
			}
			return 1
		})
	}
	out := AttentionList{Items: items[from:min(from+limit, len(items))]}
	if from+limit < len(items) {
		out.Next = encodeCursor(placeOf(out.Items[len(out.Items)-1]))
	}
	return out, nil
}
