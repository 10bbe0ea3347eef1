// Package activity is the durable record of what admins do: who changed
// the users, agent keys, tokens, policies, rules, risk gates, tools and
// webhook endpoints, when, and what each change was before and after.
// Every admin write calls Record in its own transaction, so a change and
// its record commit together or not at all; a refused action records
// nothing. No record holds a secret: Record redacts one it is handed.
package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/errs"
)

// State is what the thing an action changed looked like, before or after
// it, as JSON object fields; nil where there is nothing (before a
// creation, after a deletion).
type State map[string]any

// Entry is one admin action.
type Entry struct {
	ID int64 `json:"id"`
	// At is when the action was done.
	At time.Time `json:"at"`
	// Actor is who did it: a person's email, or "cli" (with the operating
	// system's user, "cli:ann") for the local command line.
	Actor string `json:"actor"`
	// Action is what was done, e.g. "policy.disable" (Actions lists them).
	Action string `json:"action"`
	// Target is what it was done to, e.g. "policy 3 (No console.log)".
	Target string `json:"target"`
	// Before and After are the target's state around the action, as JSON
	// objects, or null.
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// The actions recorded.
const (
	UserAdd       = "user.add"
	UserRole      = "user.role"
	UserDisable   = "user.disable"
	UserEnable    = "user.enable"
	KeyCreate     = "key.create"
	KeyRevoke     = "key.revoke"
	TokenCreate   = "token.create"
	TokenRevoke   = "token.revoke"
	PolicyCreate  = "policy.create"
	PolicyDisable = "policy.disable"
	PolicyEnable  = "policy.enable"
	PolicyDelete  = "policy.delete"
	RuleCreate    = "rule.create"
	RulesImport   = "rules.import"
	RiskGatesSet  = "risk_gates.set"
	ToolSet       = "tool.set"
	ToolDelete    = "tool.delete"
	WebhookCreate = "webhook.create"
	WebhookDelete = "webhook.delete"
	WebhookTest   = "webhook.test"
	// A mission's: created, changed, and a lead's change that lowers a
	// protection of a two-person mission asked for, approved by a second
	// lead (applied) or rejected.
	MissionCreate        = "mission.create"
	MissionUpdate        = "mission.update"
	MissionChangeRequest = "mission.change.request"
	MissionChangeApprove = "mission.change.approve"
	MissionChangeReject  = "mission.change.reject"
	redactedSecret       = "(set)"
)

// Actions are every action recorded, in the order the Activity page's
// filter offers them.
var Actions = []string{UserAdd, UserRole, UserDisable, UserEnable, KeyCreate, KeyRevoke, TokenCreate, TokenRevoke,
	PolicyCreate,
	PolicyDisable, PolicyEnable, PolicyDelete, RuleCreate, RulesImport, RiskGatesSet, ToolSet, ToolDelete, WebhookCreate,
	WebhookDelete, WebhookTest}

// secretFields are the field names whose value is a secret wherever they
// appear in a State: Record keeps only that there is one.
var secretFields = map[string]bool{"secret": true, "password": true, "password_hash": true, "token": true,
	"token_hash": true, "key": true, "key_hash": true}

// Record writes one admin action in q, which must be the transaction of
// the change it records. before and after are redacted first: a value
// under a secret's name (secret, password, token, key and their hashes)
// is stored as "(set)".
func Record(ctx context.Context, q db.Querier, at time.Time, actor, action, target string, before, after State) error {
	b, err := encode(before)
	if err != nil {
		return fmt.Errorf("record %s: %w", action, err)
	}
	a, err := encode(after)
	if err != nil {
		return fmt.Errorf("record %s: %w", action, err)
	}
	if err := db.AppendActivity(ctx, q, db.NewActivity{At: db.FormatTime(at), Actor: actor, Action: action,
		Target: target, BeforeJSON: b, AfterJSON: a}); err != nil {
		return fmt.Errorf("record %s: %w", action, err)
	}
	return nil
}

// Answered records a person's action on a session, as its timeline line
// says it (a gate resolved, a plan approved, a session paused, a
// violation cleared, an ask answered, …), in q, the transaction that
// writes that line: the action is the line's kind, the target the
// session and the line's ref, and after what the line says.
func Answered(ctx context.Context, q db.Querier, at time.Time, who, session, kind, ref, detail string) error {
	target := "session " + session
	if ref != "" {
		target += " " + ref
	}
	return Record(ctx, q, at, who, kind, target, nil, State{"session": session, "ref": ref, "detail": detail})
}

// encode stores a state as a JSON object, redacted, or NULL for none.
func encode(s State) (sql.NullString, error) {
	if s == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(redact(s))
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// redact returns s with every secret replaced by "(set)", at any depth.
func redact(s State) State {
	out := make(State, len(s))
	for k, v := range s {
		switch {
		case secretFields[k]:
			if v == nil || v == "" {
				out[k] = v
			} else {
				out[k] = redactedSecret
			}
		default:
			out[k] = redactValue(v)
		}
	}
	return out
}

func redactValue(v any) any {
	switch v := v.(type) {
	case State:
		return redact(v)
	case map[string]any:
		return redact(v)
	case []State:
		out := make([]State, len(v))
		for i, s := range v {
			out[i] = redact(s)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(e)
		}
		return out
	}
	return v
}

// Changed reports whether an action changed anything: an update that
// leaves the state as it was records nothing.
func Changed(before, after State) bool {
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	return string(b) != string(a)
}

// Page is a window of the record, newest first.
type Page struct {
	// Limit is how many entries at most (DefaultLimit when 0).
	Limit int
	// Before, when set, starts the page below this id (the Next of the
	// page before).
	Before int64
	// Action, when set, keeps the actions that start with it ("policy"
	// keeps policy.create, policy.delete, …).
	Action string
	// Actor, when set, keeps one person's actions (their email, or "cli").
	Actor string
	// Since, when not zero, keeps the actions done at or after it.
	Since time.Time
}

// Limits of a page.
const (
	DefaultLimit = 50
	MaxLimit     = 500
	MaxFilter    = 100 // characters of the action prefix
)

// FromRow converts a stored row; an error names the row.
func FromRow(r db.AdminActivity) (Entry, error) {
	c := db.StoredRow("admin_activity", r.ID)
	e := Entry{ID: r.ID, At: c.Time("at", r.At), Actor: r.Actor, Action: r.Action, Target: r.Target,
		Before: raw(c, "before_json", r.BeforeJson), After: raw(c, "after_json", r.AfterJson)}
	if err := c.Err(); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// raw reads a stored state: JSON null for NULL, and the row's error for
// text that is not a JSON object.
func raw(c *db.Stored, column string, v sql.NullString) json.RawMessage {
	if !v.Valid {
		return json.RawMessage("null")
	}
	var m map[string]any
	if c.JSON(column, v.String, &m); c.Err() != nil {
		return json.RawMessage("null")
	}
	return json.RawMessage(v.String)
}

// The refusals of a page out of bounds, from the query or the listing.
var (
	ErrLimit  = errs.E(errs.Invalid, "invalid_limit", "The limit must be a whole number from 1 to %d.", MaxLimit).In("limit")
	ErrBefore = errs.E(errs.Invalid, "invalid_before", "before must be the id of an entry, as a page's next_before gives it.").In("before")
)

// ErrSince refuses a since that is not a time.
var ErrSince = errs.E(errs.Invalid, "invalid_since", "since must be an RFC 3339 time, e.g. 2026-12-01T09:00:00Z.").In("since")

// ParseQuery reads a page of GET /api/v1/activity from its parameters:
// actor (an email, or cli), kind (an action or its prefix: "decision",
// "mission.change"), since (an RFC 3339 time), limit, and next (the
// cursor a page's next gives). Errors: invalid_limit, invalid_before
// (about next), invalid_since.
func ParseQuery(actor, kind, since, limit, next string) (Page, error) {
	p, err := ParsePage(limit, next, kind)
	if err != nil {
		return p, err
	}
	p.Actor = actor
	if since != "" {
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			return p, ErrSince
		}
		p.Since = t
	}
	return p, nil
}

// ParsePage reads a page from a request's query: ?limit= (a whole number,
// DefaultLimit when empty), ?before= (an id, from the newest when empty)
// and ?action= (a prefix). The ranges are checked by the listing.
// Errors: invalid_limit, invalid_before.
func ParsePage(limit, before, action string) (Page, error) {
	p := Page{Action: action}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > MaxLimit {
			return p, ErrLimit
		}
		p.Limit = n
	}
	if before != "" {
		n, err := strconv.ParseInt(before, 10, 64)
		if err != nil || n < 1 {
			return p, ErrBefore
		}
		p.Before = n
	}
	return p, nil
}
