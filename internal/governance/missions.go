package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/glob"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/protocol"
)

// Mission is what a set of sessions is working towards.
type Mission struct {
	Slug     string `json:"slug"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	HighRisk bool   `json:"high_risk"`
	// TwoPerson says a gate's resolution, a plan's confirmation and the
	// clearing of a critical violation take two different leads.
	TwoPerson bool     `json:"two_person"`
	Evidence  []string `json:"evidence"`
	Contract  []Clause `json:"contract"`
	// GateTTL is how long the mission's gates may wait on a person before
	// they expire; zero: never.
	GateTTL   GateTTL   `json:"gate_ttl"`
	CreatedAt time.Time `json:"created_at"`
}

// GateTTL is how long a gate may wait on a person before it expires
// (still blocking, first in the Attention view, escalated); zero: never.
// JSON and forms carry it as a Go duration without zero units, e.g. "4h",
// "1h30m", and "" for none.
type GateTTL time.Duration

// The bounds of a mission's gate_ttl.
const (
	MinGateTTL = GateTTL(time.Minute)
	MaxGateTTL = GateTTL(30 * 24 * time.Hour)
)

// ParseGateTTL reads a gate_ttl as people write it: a Go duration such as
// "4h", "90m" or "2h30m", from MinGateTTL to MaxGateTTL in whole seconds;
// "" (or only spaces) is none. Errors: invalid_gate_ttl (about the field
// gate_ttl).
func ParseGateTTL(s string) (GateTTL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	invalid := func(format string, args ...any) error {
		return errs.E(errs.Invalid, "invalid_gate_ttl", format, args...).In("gate_ttl")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, invalid("gate_ttl %q is not a duration: write it as 4h, 90m or 2h30m, or leave it empty for gates that never expire.", clip(s, 40))
	}
	switch t := GateTTL(d); {
	case t < MinGateTTL:
		return 0, invalid("gate_ttl %s is shorter than %s: a person needs time to answer (leave it empty for gates that never expire).", s, MinGateTTL)
	case t > MaxGateTTL:
		return 0, invalid("gate_ttl %s is longer than %s (30 days).", s, MaxGateTTL)
	case d%time.Second != 0:
		return 0, invalid("gate_ttl %s is not a whole number of seconds.", s)
	default:
		return t, nil
	}
}

// clip cuts s to at most n runes, marking the cut, to quote it in a message.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// String is the gate_ttl as people write it, "" for none.
func (t GateTTL) String() string {
	if t <= 0 {
		return ""
	}
	return protocol.FormatDuration(time.Duration(t))
}

// Seconds is the gate_ttl as it is stored.
func (t GateTTL) Seconds() int64 { return int64(time.Duration(t) / time.Second) }

// MarshalText writes the gate_ttl as String does.
func (t GateTTL) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a gate_ttl as ParseGateTTL does.
func (t *GateTTL) UnmarshalText(b []byte) error {
	v, err := ParseGateTTL(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// gateTTLOf reads a stored gate_ttl (seconds).
func gateTTLOf(seconds int64) GateTTL { return GateTTL(time.Duration(seconds) * time.Second) }

// Clause is one term of a mission's contract.
type Clause = change.Clause

// The limits of a mission's fields, in characters (runes) or entries.
const (
	MaxMissionTitle = input.Name // the mission's title
	MaxMissionText  = 20000      // what the mission is about
	// MaxMissionEvidence is the most kinds of evidence a mission may
	// require; each is at most MaxEvidenceKind characters, as the evidence
	// an agent reports.
	MaxMissionEvidence = 20
	MaxContractClauses = 50  // the most clauses of a contract
	MaxClauseValue     = 500 // the longest value of a clause: a path glob, a dependency, a number
)

// MissionInput is what a lead gives to create or edit a mission.
type MissionInput struct {
	Slug     string `json:"slug"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	HighRisk bool   `json:"high_risk"`
	// TwoPerson asks for two different leads to approve (see Mission).
	TwoPerson bool     `json:"two_person"`
	Evidence  []string `json:"evidence"`
	Contract  []Clause `json:"contract"`
	// GateTTL is how long the mission's gates may wait before they expire,
	// as ParseGateTTL reads it: "4h", "90m"; "" or absent for never.
	GateTTL string `json:"gate_ttl"`
}

// MissionService creates, lists and edits missions.
type MissionService struct{ core *core }

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Create creates a mission. Errors: forbidden (not a lead), those of
// MissionInput.Validate, slug_taken (about the field slug).
func (s *MissionService) Create(ctx context.Context, actor auth.Actor, in MissionInput) (Mission, error) {
	if err := actor.RequireLead("create a mission"); err != nil {
		return Mission{}, err
	}
	m, err := in.Validate()
	if err != nil {
		return Mission{}, err
	}
	contract, err := json.Marshal(m.Contract)
	if err != nil {
		return Mission{}, fmt.Errorf("encode contract: %w", err)
	}
	var row db.Mission
	err = s.core.write(ctx, func(q db.Querier) error {
		if _, err := q.GetMissionBySlug(ctx, m.Slug); err == nil {
			return errs.E(errs.Conflict, "slug_taken", "A mission with the slug %q already exists.", m.Slug).In("slug")
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		row, err = q.CreateMission(ctx, db.CreateMissionParams{Slug: m.Slug, Title: m.Title, Text: m.Text, HighRisk: m.HighRisk,
			TwoPerson: m.TwoPerson, Evidence: encodeList(m.Evidence), Contract: string(contract), GateTtl: m.GateTTL.Seconds(),
			CreatedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}, CreatedAt: db.FormatTime(s.core.now())})
		if err != nil {
			return err
		}
		return s.core.did(ctx, q, actor, activity.MissionCreate, missionTarget(m.Slug), nil, missionState(m))
	})
	if err != nil {
		return Mission{}, fmt.Errorf("create mission %s: %w", m.Slug, err)
	}
	if m, err = missionFrom(row); err != nil {
		return Mission{}, fmt.Errorf("create mission %s: %w", in.Slug, err)
	}
	return m, nil
}

// List lists every mission by slug. Any person or agent may read them.
func (s *MissionService) List(ctx context.Context) ([]Mission, error) {
	rows, err := s.core.store.Reader().ListMissions(ctx)
	if err != nil {
		return nil, fmt.Errorf("list missions: %w", err)
	}
	out := make([]Mission, len(rows))
	for i, r := range rows {
		if out[i], err = missionFrom(r); err != nil {
			return nil, fmt.Errorf("list missions: %w", err)
		}
	}
	return out, nil
}

// MissionSummary is a mission with how many sessions work on it.
type MissionSummary struct {
	Mission
	Sessions int `json:"sessions"`
}

// ListSummaries lists every mission by slug with its number of
// sessions. Any person may read them.
func (s *MissionService) ListSummaries(ctx context.Context) ([]MissionSummary, error) {
	rows, err := s.core.store.Reader().ListMissionsWithSessionCounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("list missions: %w", err)
	}
	out := make([]MissionSummary, len(rows))
	for i, r := range rows {
		m, err := missionFrom(r.Mission)
		if err != nil {
			return nil, fmt.Errorf("list missions: %w", err)
		}
		out[i] = MissionSummary{Mission: m, Sessions: int(r.Sessions)}
	}
	return out, nil
}

// Get returns the mission with the slug. Any person or agent may
// read it. Errors: mission_not_found.
func (s *MissionService) Get(ctx context.Context, slug string) (Mission, error) {
	row, err := s.core.store.Reader().GetMissionBySlug(ctx, slug)
	if errors.Is(err, sql.ErrNoRows) {
		return Mission{}, missionNotFound(slug)
	} else if err != nil {
		return Mission{}, fmt.Errorf("get mission %s: %w", slug, err)
	}
	m, err := missionFrom(row)
	if err != nil {
		return Mission{}, fmt.Errorf("get mission %s: %w", slug, err)
	}
	return m, nil
}

// Update changes a mission's title, text, high-risk flag, two-person
// flag, required evidence, contract and gate_ttl; the slug never changes
// (in.Slug is ignored). It is Patch with every field named.
func (s *MissionService) Update(ctx context.Context, actor auth.Actor, slug string, in MissionInput) (MissionEdit, error) {
	return s.Patch(ctx, actor, slug, MissionPatch{Title: &in.Title, Text: &in.Text, HighRisk: &in.HighRisk,
		TwoPerson: &in.TwoPerson, Evidence: &in.Evidence, Contract: &in.Contract, GateTTL: &in.GateTTL})
}

// MissionPatch names the fields of a mission to change; a nil field keeps
// its value.
type MissionPatch struct {
	Title     *string   `json:"title,omitempty"`
	Text      *string   `json:"text,omitempty"`
	HighRisk  *bool     `json:"high_risk,omitempty"`
	TwoPerson *bool     `json:"two_person,omitempty"`
	Evidence  *[]string `json:"evidence,omitempty"`
	Contract  *[]Clause `json:"contract,omitempty"`
	// GateTTL is as MissionInput's; "" lifts it (gates never expire).
	GateTTL *string `json:"gate_ttl,omitempty"`
}

// Validate returns the patch with the fields it names trimmed, or the
// first of them over its limit or invalid. Errors as MissionInput.Validate
// but invalid_slug.
func (p MissionPatch) Validate() (MissionPatch, error) {
	out := MissionPatch{HighRisk: p.HighRisk, TwoPerson: p.TwoPerson}
	if p.Title != nil {
		v, err := validTitle(*p.Title)
		if err != nil {
			return out, err
		}
		out.Title = &v
	}
	if p.Text != nil {
		v, err := input.Optional("text", *p.Text, MaxMissionText)
		if err != nil {
			return out, err
		}
		out.Text = &v
	}
	if p.Evidence != nil {
		v, err := validEvidence(*p.Evidence)
		if err != nil {
			return out, err
		}
		out.Evidence = &v
	}
	if p.Contract != nil {
		v, err := validContract(*p.Contract)
		if err != nil {
			return out, err
		}
		out.Contract = &v
	}
	if p.GateTTL != nil {
		t, err := ParseGateTTL(*p.GateTTL)
		if err != nil {
			return out, err
		}
		v := t.String()
		out.GateTTL = &v
	}
	return out, nil
}

// applyTo returns the mission with the patch's fields changed; p must be
// valid.
func (p MissionPatch) applyTo(m Mission) Mission {
	if p.Title != nil {
		m.Title = *p.Title
	}
	if p.Text != nil {
		m.Text = *p.Text
	}
	if p.HighRisk != nil {
		m.HighRisk = *p.HighRisk
	}
	if p.TwoPerson != nil {
		m.TwoPerson = *p.TwoPerson
	}
	if p.Evidence != nil {
		m.Evidence = *p.Evidence
	}
	if p.Contract != nil {
		m.Contract = *p.Contract
	}
	if p.GateTTL != nil {
		m.GateTTL, _ = ParseGateTTL(*p.GateTTL) // valid: Validate read it
	}
	return m
}

// MissionEdit is what an edit of a mission did: the mission as it is now,
// and, when the edit lowers a protection of a two-person mission and a
// lead asked for it, the change that waits for a second lead (the
// mission is then unchanged).
type MissionEdit struct {
	Mission
	Pending *MissionChange `json:"-"`
}

// Patch changes the fields the patch names, reading and writing the
// mission in one transaction so that two people editing different fields
// at once both keep their change. A change that alters anything records a
// "mission.updated" event, naming who changed what, on every session of
// the mission (that is the session's record of why its brief changed,
// e.g. BLOCKED until an approved plan once the mission is high-risk), and
// a mission.update in the activity record with the mission before and
// after.
//
// A change that lowers a protection (Lowers) is an admin's: it takes
// effect at once. A lead's waits, on a two-person mission, for a second,
// different lead's approval (MissionEdit.Pending; ApproveChange), and is
// refused elsewhere. Errors: forbidden (not a lead), lowers_protection
// (a lead lowering a protection of a mission that does not take two
// people), mission_not_found, and those of MissionInput.Validate but
// invalid_slug.
func (s *MissionService) Patch(ctx context.Context, actor auth.Actor, slug string, p MissionPatch) (MissionEdit, error) {
	if err := actor.RequireLead("edit a mission"); err != nil {
		return MissionEdit{}, err
	}
	if !slugPattern.MatchString(slug) {
		return MissionEdit{}, missionNotFound(slug)
	}
	var (
		row     db.Mission
		pending *MissionChange
	)
	err := s.core.write(ctx, func(q db.Querier) error {
		old, err := q.GetMissionBySlug(ctx, slug)
		if errors.Is(err, sql.ErrNoRows) {
			return missionNotFound(slug) // before the input is checked
		} else if err != nil {
			return err
		}
		if p, err = p.Validate(); err != nil {
			return err
		}
		cur, err := missionFrom(old)
		if err != nil {
			return err
		}
		row = old
		m := p.applyTo(cur)
		lowers := Lowers(cur, m)
		switch {
		case len(lowers) == 0 || actor.IsAdmin():
		case !cur.TwoPerson:
			return errs.E(errs.Forbidden, "lowers_protection",
				"This change lowers a protection of mission %q (%s): on a mission that does not take two people, only an admin can do that.",
				slug, strings.Join(lowers, "; "))
		default:
			pending, err = s.requestChange(ctx, q, actor, old, cur, m, p, lowers)
			return err
		}
		row, err = s.update(ctx, q, actor, old, cur, m, "")
		return err
	})
	if err != nil {
		return MissionEdit{}, fmt.Errorf("update mission %s: %w", slug, err)
	}
	m, err := missionFrom(row)
	if err != nil {
		return MissionEdit{}, fmt.Errorf("update mission %s: %w", slug, err)
	}
	return MissionEdit{Mission: m, Pending: pending}, nil
}

// update writes the mission as m in q, if it changes anything, telling
// every session of the mission and recording it (why, when not "", says
// more for the timeline: whose change a second lead approved).
func (s *MissionService) update(ctx context.Context, q db.Querier, actor auth.Actor, old db.Mission, cur, m Mission, why string) (db.Mission, error) {
	changed := missionChanges(cur, m)
	if changed == "" {
		return old, nil // nothing to write, and nothing for the sessions to hear
	}
	contract, err := json.Marshal(m.Contract)
	if err != nil {
		return old, fmt.Errorf("encode contract: %w", err)
	}
	now := s.core.now()
	row, err := q.UpdateMission(ctx, db.UpdateMissionParams{ID: old.ID, Title: m.Title, Text: m.Text, HighRisk: m.HighRisk,
		TwoPerson: m.TwoPerson, Evidence: encodeList(m.Evidence), Contract: string(contract), GateTtl: m.GateTTL.Seconds(),
		UpdatedAt: db.FormatTime(now)})
	if err != nil {
		return old, err
	}
	sessions, err := q.ListMissionSessionIDs(ctx, old.ID)
	if err != nil {
		return old, err
	}
	detail := changed
	if why != "" {
		detail += " (" + why + ")"
	}
	for _, id := range sessions {
		if err := s.core.told(ctx, q, id, actor, now, "mission.updated", old.Slug, detail); err != nil {
			return old, err
		}
	}
	return row, s.core.did(ctx, q, actor, activity.MissionUpdate, missionTarget(old.Slug), missionState(cur), missionState(m))
}

// missionChanges says what an edit changes, for the timeline: e.g.
// "high-risk: no → yes; contract". Empty when nothing changes.
func missionChanges(old, m Mission) string {
	var out []string
	if old.HighRisk != m.HighRisk {
		out = append(out, fmt.Sprintf("high-risk: %s → %s", yesNo(old.HighRisk), yesNo(m.HighRisk)))
	}
	if old.TwoPerson != m.TwoPerson {
		out = append(out, fmt.Sprintf("two people: %s → %s", yesNo(old.TwoPerson), yesNo(m.TwoPerson)))
	}
	if old.Title != m.Title {
		out = append(out, "title")
	}
	if old.Text != m.Text {
		out = append(out, "text")
	}
	if !slices.Equal(old.Evidence, m.Evidence) {
		out = append(out, "required evidence")
	}
	if !slices.Equal(old.Contract, m.Contract) {
		out = append(out, "contract")
	}
	if old.GateTTL != m.GateTTL {
		out = append(out, fmt.Sprintf("gate TTL: %s → %s", orNever(old.GateTTL), orNever(m.GateTTL)))
	}
	return strings.Join(out, "; ")
}

// orNever is a gate_ttl for the timeline: "never" when there is none.
func orNever(t GateTTL) string {
	if t <= 0 {
		return "never"
	}
	return t.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func missionNotFound(slug string) error {
	return errs.E(errs.NotFound, "mission_not_found", "No mission has the slug %q.", slug)
}

// Validate returns the mission the input describes, trimmed, or the first
// field that is missing, over its limit or invalid; every error names its
// field. Errors: invalid_slug, title_required, title_too_long,
// text_too_long, too_many_entries, empty_entry, evidence_too_long,
// invalid_clause, contract_too_long, invalid_gate_ttl.
func (in MissionInput) Validate() (Mission, error) {
	m := Mission{Slug: in.Slug, HighRisk: in.HighRisk, TwoPerson: in.TwoPerson}
	if !slugPattern.MatchString(in.Slug) {
		return m, errs.E(errs.Invalid, "invalid_slug", "The slug %q must be 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit.", in.Slug).In("slug")
	}
	var err error
	if m.Title, err = validTitle(in.Title); err != nil {
		return m, err
	}
	if m.Text, err = input.Optional("text", in.Text, MaxMissionText); err != nil {
		return m, err
	}
	if m.Evidence, err = validEvidence(in.Evidence); err != nil {
		return m, err
	}
	if m.Contract, err = validContract(in.Contract); err != nil {
		return m, err
	}
	if m.GateTTL, err = ParseGateTTL(in.GateTTL); err != nil {
		return m, err
	}
	return m, nil
}

func validTitle(title string) (string, error) {
	return input.Required("title", title, MaxMissionTitle)
}

func validEvidence(kinds []string) ([]string, error) {
	return input.List("evidence", kinds, MaxMissionEvidence, MaxEvidenceKind)
}

// validContract checks every clause: a known kind, and a value that kind
// can use. Errors: too_many_entries, invalid_clause, contract_too_long (a
// value over MaxClauseValue), invalid_characters (a control character in a
// value), all about the field contract.
func validContract(clauses []Clause) ([]Clause, error) {
	if len(clauses) > MaxContractClauses {
		return nil, errs.E(errs.Invalid, "too_many_entries", "contract has %d clauses; at most %d are allowed.", len(clauses), MaxContractClauses).In("contract")
	}
	invalid := func(format string, args ...any) error {
		return errs.E(errs.Invalid, "invalid_clause", format, args...).In("contract")
	}
	out := make([]Clause, 0, len(clauses))
	for i, c := range clauses {
		c.Value = strings.TrimSpace(c.Value)
		if c.Value == "" {
			return nil, invalid("Contract clause %d has no value.", i+1)
		}
		if n := utf8.RuneCountInString(c.Value); n > MaxClauseValue {
			return nil, errs.E(errs.Invalid, "contract_too_long", "Contract clause %d is %d characters; at most %d are allowed.", i+1, n, MaxClauseValue).In("contract")
		}
		if _, err := input.CleanLine("contract", c.Value); err != nil {
			return nil, err
		}
		switch c.Kind {
		case protocol.ForbidPath, protocol.RequirePath:
			if err := glob.Valid(c.Value); err != nil {
				return nil, invalid("Contract clause %d: %v.", i+1, err)
			}
		case protocol.ForbidDependency:
		case protocol.MaxFilesChanged:
			if n, err := strconv.Atoi(c.Value); err != nil || n < 1 {
				return nil, invalid("Contract clause %d: max_files_changed needs a positive whole number, not %q.", i+1, c.Value)
			}
		default:
			return nil, invalid("Contract clause %d has kind %q: use forbid_path, require_path, forbid_dependency or max_files_changed.", i+1, c.Kind)
		}
		out = append(out, c)
	}
	return out, nil
}

// missionFrom converts a missions row; an error names the row.
func missionFrom(r db.Mission) (Mission, error) {
	c := db.StoredRow("missions", r.Slug)
	m := Mission{Slug: r.Slug, Title: r.Title, Text: r.Text, HighRisk: r.HighRisk, TwoPerson: r.TwoPerson,
		Evidence: c.List("evidence", r.Evidence),
		Contract: []Clause{}, GateTTL: gateTTLOf(r.GateTtl), CreatedAt: c.Time("created_at", r.CreatedAt)}
	c.JSON("contract", r.Contract, &m.Contract)
	if err := c.Err(); err != nil {
		return Mission{}, err
	}
	return m, nil
}
