// Package governance is Madebook's core use cases: missions, sessions,
// decision gates, plans, the pause brake, remediation requests, and the
// brief that tells an agent what to do next. Each use case is one
// transaction; rows become domain types at this boundary.
package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
)

// MaxScopeEntries is the most entries a gate's blocked or allowed scope may
// hold. More is refused, never silently cut.
const MaxScopeEntries = 20

// Service runs the governance use cases.
type Service struct {
	store   db.Transactor
	now     func() time.Time
	touches touches
	cache   *stateCache
	// compiled is the policy set, compiled once per version of the policies.
	compiled struct {
		mu sync.Mutex
		p  *compiledPolicies
	}
}

// NewService returns the governance service. now is the clock (tests pass
// a fixed one).
func NewService(store db.Transactor, now func() time.Time) *Service {
	return &Service{store: store, now: func() time.Time { return now().UTC() }, touches: touches{pending: map[string]time.Time{}},
		cache: newStateCache()}
}

// sessionFor loads a session and checks that the actor may see it: any
// person, or the agent whose key opened it. Errors: session_not_found,
// forbidden.
func sessionFor(ctx context.Context, q db.Querier, actor auth.Actor, id string) (db.GetSessionRow, error) {
	s, err := q.GetSession(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return s, errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", id)
	} else if err != nil {
		return s, fmt.Errorf("load session %s: %w", id, err)
	}
	return s, checkOwner(actor, s.AgentKeyID)
}

// checkOwner lets any person through, and an agent only to its own sessions.
func checkOwner(actor auth.Actor, keyID int64) error {
	if actor.IsPerson() || (actor.IsAgent() && actor.KeyID == keyID) {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "This session belongs to another agent key.")
}

// ownSession loads a session for a call only its own agent may make.
func ownSession(ctx context.Context, q db.Querier, actor auth.Actor, id, what string) (db.GetSessionRow, error) {
	if err := actor.RequireAgent(what); err != nil {
		return db.GetSessionRow{}, err
	}
	return sessionFor(ctx, q, actor, id)
}

// event records one line of a session's timeline.
func (s *Service) event(ctx context.Context, q db.Querier, session string, actor auth.Actor, at time.Time, kind, ref, detail string) error {
	if err := q.AddEvent(ctx, db.AddEventParams{SessionID: session, At: db.FormatTime(at), Actor: actor.Label(),
		Kind: kind, Ref: ref, Detail: detail}); err != nil {
		return fmt.Errorf("record %s: %w", kind, err)
	}
	return nil
}

// encodeList stores a list as a JSON array.
func encodeList(list []string) string {
	if list == nil {
		list = []string{}
	}
	b, err := json.Marshal(list)
	if err != nil {
		panic(err) // a []string always marshals
	}
	return string(b)
}

// decodeList reads a list stored by encodeList.
func decodeList(s string) []string {
	list := []string{}
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		panic(fmt.Errorf("stored list %q: %w", s, err))
	}
	return list
}

// cleanList trims every entry and refuses empty ones and lists over max.
func cleanList(field string, list []string, max int) ([]string, error) {
	if len(list) > max {
		return nil, errs.E(errs.Invalid, "too_many_entries", "%s has %d entries; at most %d are allowed.", field, len(list), max)
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, errs.E(errs.Invalid, "empty_entry", "%s entry %d is empty.", field, i+1)
		}
		out = append(out, e)
	}
	return out, nil
}

// required trims a field and refuses it empty or over max characters.
func required(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errs.E(errs.Invalid, field+"_required", "The %s is required.", strings.ReplaceAll(field, "_", " "))
	}
	return optional(field, v, max)
}

// optional trims a field and refuses it over max characters.
func optional(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if n := len([]rune(v)); n > max {
		return "", errs.E(errs.Invalid, field+"_too_long", "The %s is %d characters; at most %d are allowed.", strings.ReplaceAll(field, "_", " "), n, max)
	}
	return v, nil
}

// timePtr returns nil for NULL, so that JSON leaves the field out.
func timePtr(s sql.NullString) *time.Time {
	if !s.Valid {
		return nil
	}
	t := db.MustTime(s.String)
	return &t
}

// Now is the service's clock, for views that say how long ago things were.
func (s *Service) Now() time.Time { return s.now() }
