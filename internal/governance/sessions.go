package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/ids"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/protocol"
)

// Session is one agent's run at a mission.
type Session struct {
	ID      string `json:"id"`
	Mission string `json:"mission"`
	// Agent is the name of the agent key that opened the session: the
	// agent as Madebook knows it, which no agent can choose.
	Agent string `json:"agent"`
	// AgentLabel is what the agent called itself when it opened the
	// session, when that differs from its key's name: a display label,
	// shown beside Agent, never instead of it.
	AgentLabel string `json:"agent_label,omitempty"`
	Title      string `json:"title"`
	// ExternalID is the id the agent's own client gave the session (a
	// Claude Code session_id), "" when it gave none.
	ExternalID string `json:"external_id,omitempty"`
	// Root is the project root the session works in, as the agent's
	// machine names it; "" until one is known.
	Root        string     `json:"root,omitempty"`
	Lifecycle   string     `json:"lifecycle"`
	Paused      bool       `json:"paused"`
	PauseReason string     `json:"pause_reason,omitempty"`
	PausedAt    *time.Time `json:"paused_at,omitempty"`
	LastBriefAt *time.Time `json:"last_brief_at,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
}

// SessionService opens sessions, shows them, and pauses and resumes them.
type SessionService struct {
	core *core
	// briefs is where a session's brief preview and last brief time come
	// from.
	briefs *BriefService
}

// The limits of a session's fields, in characters (runes).
const (
	MaxSessionMission = 63         // a mission's slug
	MaxSessionAgent   = 100        // the agent's name
	MaxSessionTitle   = input.Name // what the session is about
	// MaxSessionExternalID is the longest id an agent's client gives a
	// session (a Claude Code session_id is a 36-character UUID).
	MaxSessionExternalID = input.Name
	// MaxSessionRoot is the longest project root a session records.
	MaxSessionRoot = 1000
	// MaxPauseReason is the longest reason a person gives for pulling the
	// brake; it is quoted to the agent.
	MaxPauseReason = 2000
)

// SessionInput is what an agent gives to open a session.
type SessionInput struct {
	Mission string `json:"mission" jsonschema:"The slug of the mission to work on (a lead created it)."`
	// Agent is what the agent calls itself: a label kept beside the key's
	// name (Session.AgentLabel), not the session's agent.
	Agent string `json:"agent,omitzero" jsonschema:"The agent's name; the agent key's name when left out."`
	Title string `json:"title,omitzero" jsonschema:"What this session is about, in a few words."`
	// ExternalID, when set, is the id the agent's client knows the session
	// by: opening a session with an external id the agent key already used
	// re-attaches to that session.
	ExternalID string `json:"external_id,omitzero" jsonschema:"Your client's own id for this session (e.g. Claude Code's session id), at most 200 characters: opening again with the same id answers the session it opened (re-attach) instead of a new one."`
	// Root, when set, is the project root the agent works in (absolute):
	// every path its tool calls name is resolved relative to it. A session
	// keeps the first root it is given.
	Root string `json:"root,omitzero" jsonschema:"The project root you work in, an absolute path: the paths your tool calls name are resolved relative to it. A session keeps the first root it is given."`
}

// Validate returns the input trimmed. Errors: mission_required,
// mission_too_long, agent_too_long, title_too_long, external_id_too_long,
// root_too_long, invalid_root (not an absolute path).
func (in SessionInput) Validate() (SessionInput, error) {
	var (
		out SessionInput
		err error
	)
	if out.Mission, err = input.Required("mission", in.Mission, MaxSessionMission); err != nil {
		return out, err
	}
	if out.Agent, err = input.Optional("agent", in.Agent, MaxSessionAgent); err != nil {
		return out, err
	}
	if out.Title, err = input.Optional("title", in.Title, MaxSessionTitle); err != nil {
		return out, err
	}
	if out.ExternalID, err = input.Optional("external_id", in.ExternalID, MaxSessionExternalID); err != nil {
		return out, err
	}
	if out.Root, err = input.Optional("root", in.Root, MaxSessionRoot); err != nil {
		return out, err
	}
	if out.Root != "" && !gate.IsAbs(out.Root) {
		return out, errs.E(errs.Invalid, "invalid_root",
			"\"root\" (%q) is not an absolute path: send the project root as the agent's machine names it (/home/ada/app, C:\\work\\app).", out.Root).In("root")
	}
	return out, nil
}

// Create opens a session on a mission for the calling agent key, as Open
// does, and returns it without saying whether it was new.
func (s *SessionService) Create(ctx context.Context, actor auth.Actor, in SessionInput) (Session, error) {
	out, _, err := s.Open(ctx, actor, in)
	return out, err
}

// Open opens a session on a mission for the calling agent key. The
// session's agent is the key's name; a different name the agent gives is
// kept as its label. With an external id the key
// already used, it opens nothing and returns that session (re-attach),
// with created false; its agent and title stay as first given. Errors:
// forbidden (not an agent), those of SessionInput.Validate,
// unknown_mission, external_id_conflict (the external id names a session
// on another mission).
func (s *SessionService) Open(ctx context.Context, actor auth.Actor, in SessionInput) (out Session, created bool, err error) {
	if err := actor.RequireAgent("open a session"); err != nil {
		return Session{}, false, err
	}
	in, err = in.Validate()
	if err != nil {
		return Session{}, false, err
	}
	slug, agent, title := in.Mission, actor.KeyName, in.Title
	label := in.Agent
	if label == agent {
		label = ""
	}
	external := sql.NullString{String: in.ExternalID, Valid: in.ExternalID != ""}
	now := s.core.now()
	var row db.GetSessionRow
	if external.Valid {
		// A re-attach that changes nothing (the hook's every event) is a
		// read; a new session, a root to record or a conflict is the
		// write's to decide.
		found := false
		err = s.core.store.Read(ctx, func(q db.Querier) error {
			id, err := q.GetSessionIDByExternalID(ctx, db.GetSessionIDByExternalIDParams{AgentKeyID: actor.KeyID, ExternalID: external})
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			} else if err != nil {
				return err
			}
			if row, err = q.GetSession(ctx, id); err != nil {
				return err
			}
			found = row.MissionSlug == slug && (in.Root == "" || row.Root != "")
			return nil
		})
		if err != nil {
			return Session{}, false, fmt.Errorf("open session: %w", err)
		}
		if found {
			if out, err = s.sessionFrom(row); err != nil {
				return Session{}, false, fmt.Errorf("open session: %w", err)
			}
			return out, false, nil
		}
	}
	err = s.core.write(ctx, func(q db.Querier) error {
		if external.Valid {
			id, err := q.GetSessionIDByExternalID(ctx, db.GetSessionIDByExternalIDParams{AgentKeyID: actor.KeyID, ExternalID: external})
			if err == nil {
				if row, err = q.GetSession(ctx, id); err != nil {
					return err
				}
				if row.MissionSlug != slug {
					return errs.E(errs.Conflict, "external_id_conflict",
						"The external id %q already names session %s, on mission %q, not %q: open it on that mission, or use another external id.",
						in.ExternalID, id, row.MissionSlug, slug)
				}
				if in.Root == "" || row.Root != "" {
					return nil
				}
				if err := s.core.setRoot(ctx, q, actor, id, in.Root, now); err != nil {
					return err
				}
				row.Root = in.Root
				return nil
			} else if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		created = true
		m, err := q.GetMissionBySlug(ctx, slug)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.Invalid, "unknown_mission", "No mission has the slug %q: ask a lead to create it.", slug)
		} else if err != nil {
			return err
		}
		id := ids.New("ses_")
		if _, err := q.CreateSession(ctx, db.CreateSessionParams{ID: id, MissionID: m.ID, AgentKeyID: actor.KeyID,
			Agent: agent, AgentLabel: label, Title: title, Lifecycle: "IDLE", CreatedAt: db.FormatTime(now), ExternalID: external}); err != nil {
			return err
		}
		if err := s.core.event(ctx, q, id, actor, now, "session.created", "", title); err != nil {
			return err
		}
		if in.Root != "" {
			if err := s.core.setRoot(ctx, q, actor, id, in.Root, now); err != nil {
				return err
			}
		}
		row, err = q.GetSession(ctx, id)
		return err
	})
	if err != nil {
		return Session{}, false, fmt.Errorf("open session: %w", err)
	}
	if out, err = s.sessionFrom(row); err != nil {
		return Session{}, false, fmt.Errorf("open session: %w", err)
	}
	return out, created, nil
}

// SessionDetail is everything about a session: what the console's session
// page and `GET /api/v1/sessions/{id}` show.
type SessionDetail struct {
	Session
	// Tracked says the agent has reported a lifecycle event: from then on
	// the lifecycle governs (an untracked session reads IDLE and is not
	// gated). LifecycleAt is when it entered its current state.
	Tracked     bool       `json:"tracked"`
	LifecycleAt *time.Time `json:"lifecycle_at,omitempty"`
	// PermissionTemplate is the template the agent's work runs with in its
	// state (main_direct in DIRECT_MODE, per_task in EXECUTING), "" while
	// the state executes nothing or the session is untracked.
	PermissionTemplate string `json:"permission_template,omitempty"`
	// Tasks counts the tasks the agent reported.
	Tasks TaskCounts `json:"tasks"`
	// Brief is the brief the agent would get next, previewed without
	// delivering anything.
	Brief        Brief         `json:"brief"`
	Plan         *Plan         `json:"plan,omitempty"`
	Decisions    []Decision    `json:"decisions"`
	Remediations []Remediation `json:"remediations"`
	Timeline     []Event       `json:"timeline"`
	// Change is the latest change report (each replaces the last), nil
	// before the first; the open findings below are what it left open.
	Change     *ChangeView  `json:"change,omitempty"`
	Violations []Violation  `json:"violations"`
	Deviations []Deviation  `json:"deviations"`
	Breaches   []BreachView `json:"breaches"`
	Collisions []Collision  `json:"collisions"`
	// Evidence is the mission's evidence gate as the session stands.
	Evidence EvidenceStatus `json:"evidence"`
	// Permissions are the permission prompts the agent's client raised,
	// newest first: waiting, answered, delivered.
	Permissions []PermissionPrompt `json:"permissions"`
}

// TaskCounts are the tasks of a session's current cycle (a cycle starts
// when the session leaves IDLE; a task is of the cycle in which its agent
// last reported it): how many its agent created, how many are now in
// progress, completed and failed, how many are done (completed or
// failed) and still open, and how many of the open ones are blocked.
// Earlier counts the tasks of earlier cycles, which no longer count; the
// timeline keeps their events.
type TaskCounts struct {
	Created   int64 `json:"created"`
	Progress  int64 `json:"progress"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	Done      int64 `json:"done"`
	Open      int64 `json:"open"`
	Blocked   int64 `json:"blocked"`
	Earlier   int64 `json:"earlier"`
}

// ChangeView is a session's latest change report and its risk.
type ChangeView struct {
	ReportedAt time.Time   `json:"reported_at"`
	Files      []string    `json:"files"`
	Lines      int64       `json:"lines"`
	Risk       change.Risk `json:"risk"`
}

// EvidenceStatus is the evidence gate of a session: the kinds its mission
// requires, the latest evidence of each kind reported, and the verdict.
type EvidenceStatus struct {
	Required []string       `json:"required"`
	Latest   []EvidenceView `json:"latest"`
	EvidenceGate
}

// EvidenceView is one piece of evidence an agent reported.
type EvidenceView struct {
	Kind       string    `json:"kind"`
	Passed     bool      `json:"passed"`
	Detail     string    `json:"detail,omitempty"`
	ReportedAt time.Time `json:"reported_at"`
}

// Event is one line of a session's timeline: something an agent reported
// or a person did.
type Event struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Kind   string    `json:"kind"`
	Ref    string    `json:"ref,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// Get returns a session with its brief preview, plan, decisions,
// remediations and timeline, from one snapshot. It stamps nothing. Errors:
// session_not_found, forbidden.
func (s *SessionService) Get(ctx context.Context, actor auth.Actor, id string) (SessionDetail, error) {
	var d SessionDetail
	now := s.core.now()
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		row, err := sessionFor(ctx, q, actor, id)
		if err != nil {
			return err
		}
		if d.Session, err = s.sessionFrom(row); err != nil {
			return err
		}
		c := db.StoredRow("sessions", row.ID)
		d.Tracked, d.LifecycleAt = row.LifecycleAt.Valid, c.TimePtr("lifecycle_at", row.LifecycleAt)
		if d.Tracked {
			d.PermissionTemplate = lifecycle.PermissionTemplate(lifecycle.State(row.Lifecycle))
		}
		if err := c.Err(); err != nil {
			return err
		}
		tasks, err := q.CountTasks(ctx, id)
		if err != nil {
			return err
		}
		d.Tasks = TaskCounts(tasks)
		if d.Brief, err = s.briefs.briefIn(ctx, q, actor, id, now, ""); err != nil {
			return err
		}
		if p, err := q.GetLatestPlan(ctx, id); err == nil {
			plan, err := planFrom(p)
			if err != nil {
				return err
			}
			d.Plan = &plan
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		decs, err := q.ListSessionDecisions(ctx, id)
		if err != nil {
			return err
		}
		d.Decisions = make([]Decision, len(decs))
		for i, r := range decs {
			if d.Decisions[i], err = decisionFrom(r.Decision, r.ResolvedByEmail); err != nil {
				return err
			}
			d.Decisions[i].expireAt(gateTTLOf(row.MissionGateTtl), now)
		}
		prompts, err := q.ListSessionPermissionPrompts(ctx, id)
		if err != nil {
			return err
		}
		d.Permissions = make([]PermissionPrompt, len(prompts))
		for i, r := range prompts {
			if d.Permissions[i], err = promptFrom(r.PermissionPrompt, r.AnsweredByEmail); err != nil {
				return err
			}
		}
		rems, err := q.ListSessionRemediations(ctx, id)
		if err != nil {
			return err
		}
		d.Remediations = make([]Remediation, len(rems))
		for i, r := range rems {
			if d.Remediations[i], err = remediationFrom(r); err != nil {
				return err
			}
		}
		evs, err := q.ListSessionEvents(ctx, id)
		if err != nil {
			return err
		}
		d.Timeline = make([]Event, len(evs))
		for i, e := range evs {
			c := db.StoredRow("events", e.ID)
			d.Timeline[i] = Event{At: c.Time("at", e.At), Actor: e.Actor, Kind: e.Kind, Ref: e.Ref, Detail: e.Detail}
			if err := c.Err(); err != nil {
				return err
			}
		}
		if err := changeDetail(ctx, q, &d); err != nil {
			return err
		}
		waiting, err := standingApprovals(ctx, q)
		if err != nil {
			return err
		}
		d.attach(waiting)
		return nil
	})
	if err != nil {
		return SessionDetail{}, fmt.Errorf("get session %s: %w", id, err)
	}
	return d, nil
}

// SessionSummary is one line of the sessions list: the session and what its
// agent would be told next, computed by the same engine from the same
// inputs as its brief, delivering nothing.
type SessionSummary struct {
	Session
	// Tracked says the agent reports its lifecycle (see SessionDetail).
	Tracked    bool           `json:"tracked"`
	NextAction protocol.State `json:"next_action"`
	Reason     string         `json:"reason"`
	// ParkedAsks is how many questions the session's runs are parked on,
	// waiting on a person. The brief does not weigh them (seed 000's
	// precedence has no place for them); the sessions list shows them
	// beside the next action so the two do not contradict each other.
	ParkedAsks int `json:"parked_asks"`
	// Executor is the client the session runs in, as it named itself when
	// it opened the session (AgentLabel: "claude-code" for a session a
	// hook opened), else the agent's name.
	Executor string `json:"executor"`
	// UpdatedAt is when the session's timeline last changed (its creation
	// before anything happened).
	UpdatedAt time.Time `json:"updated_at"`
}

// Pause pulls the brake on a session: its agent is BLOCKED from all work
// until a person releases it. The reason is required: it is quoted to
// the agent and to whoever finds the session paused. Errors: forbidden
// (not a lead), reason_required (empty or blank), reason_too_long,
// invalid_characters, session_not_found, already_paused.
func (s *SessionService) Pause(ctx context.Context, actor auth.Actor, id, reason string) (Session, error) {
	if err := actor.RequireLead("pause a session"); err != nil {
		return Session{}, err
	}
	if strings.TrimSpace(reason) == "" {
		return Session{}, ErrPauseReason
	}
	reason, err := input.Optional("reason", reason, MaxPauseReason)
	if err != nil {
		return Session{}, err
	}
	return s.brake(ctx, actor, id, "session.paused", reason, func(q db.Querier, now time.Time) (int64, error) {
		return q.PauseSession(ctx, db.PauseSessionParams{ID: id, PausedAt: db.NullTime(now),
			PausedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}, PauseReason: reason})
	}, errs.E(errs.Conflict, "already_paused", "The session is already paused; resume it first to pause it with a new reason."))
}

// ErrPauseReason refuses a pause without a reason.
var ErrPauseReason = errs.E(errs.Invalid, "reason_required",
	"Say why the session is paused: the reason is quoted to its agent and to the people who find it paused.").In("reason")

// Resume releases the brake. Errors: forbidden (not a lead),
// session_not_found, not_paused.
func (s *SessionService) Resume(ctx context.Context, actor auth.Actor, id string) (Session, error) {
	if err := actor.RequireLead("resume a session"); err != nil {
		return Session{}, err
	}
	return s.brake(ctx, actor, id, "session.resumed", "", func(q db.Querier, _ time.Time) (int64, error) {
		return q.ResumeSession(ctx, id)
	}, errs.E(errs.Conflict, "not_paused", "The session is not paused."))
}

// brake applies a pause or a resume, records it, and returns the session.
func (s *SessionService) brake(ctx context.Context, actor auth.Actor, id, kind, detail string,
	apply func(db.Querier, time.Time) (int64, error), conflict error) (Session, error) {
	now := s.core.now()
	var row db.GetSessionRow
	err := s.core.write(ctx, func(q db.Querier) error {
		if _, err := sessionFor(ctx, q, actor, id); err != nil {
			return err
		}
		n, err := apply(q, now)
		if err != nil {
			return err
		}
		if n == 0 {
			return conflict
		}
		if err := s.core.event(ctx, q, id, actor, now, kind, "", detail); err != nil {
			return err
		}
		row, err = q.GetSession(ctx, id)
		return err
	})
	if err != nil {
		return Session{}, fmt.Errorf("%s %s: %w", kind, id, err)
	}
	out, err := s.sessionFrom(row)
	if err != nil {
		return Session{}, fmt.Errorf("%s %s: %w", kind, id, err)
	}
	return out, nil
}

// sessionFrom converts a sessions row, with the brief time not yet
// written if it is later; an error names the row.
func (s *SessionService) sessionFrom(r db.GetSessionRow) (Session, error) {
	c := db.StoredRow("sessions", r.ID)
	out := Session{ID: r.ID, Mission: r.MissionSlug, Agent: r.Agent, AgentLabel: r.AgentLabel, Title: r.Title, ExternalID: r.ExternalID.String, Root: r.Root, Lifecycle: r.Lifecycle,
		Paused: r.PausedAt.Valid, PauseReason: r.PauseReason, PausedAt: c.TimePtr("paused_at", r.PausedAt),
		LastBriefAt: c.TimePtr("last_brief_at", r.LastBriefAt), CreatedAt: c.Time("created_at", r.CreatedAt)}
	if err := c.Err(); err != nil {
		return Session{}, err
	}
	if t, ok := s.briefs.touches.last(r.ID); ok && (out.LastBriefAt == nil || t.After(*out.LastBriefAt)) {
		out.LastBriefAt = &t
	}
	return out, nil
}

// changeDetail adds the latest change, its open findings and the evidence
// gate to a session's detail.
func changeDetail(ctx context.Context, q db.Querier, d *SessionDetail) error {
	var risk change.Risk
	c, err := q.GetChange(ctx, d.ID)
	switch {
	case err == nil:
		risk = change.Risk{Score: int(c.RiskScore), Band: c.RiskBand, Gate: c.RiskGate, Factors: []change.Factor{}}
		row := db.StoredRow("changes", c.SessionID)
		if c.RiskFactors != "" && c.RiskFactors != "null" {
			row.JSON("risk_factors", c.RiskFactors, &risk.Factors)
		}
		d.Change = &ChangeView{ReportedAt: row.Time("reported_at", c.ReportedAt), Files: row.List("files", c.Files), Lines: c.Lines, Risk: risk}
		if err := row.Err(); err != nil {
			return err
		}
	case errors.Is(err, sql.ErrNoRows):
	default:
		return err
	}
	open, err := changeResult(ctx, q, d.ID, risk)
	if err != nil {
		return err
	}
	d.Violations, d.Deviations, d.Breaches, d.Collisions = open.Violations, open.Deviations, open.Breaches, open.Collisions
	mrow, err := q.GetMissionBySlug(ctx, d.Mission)
	if err != nil {
		return err
	}
	m, err := missionFrom(mrow)
	if err != nil {
		return err
	}
	ev, err := q.ListEvidence(ctx, d.ID)
	if err != nil {
		return err
	}
	d.Evidence = EvidenceStatus{Required: m.Evidence, Latest: []EvidenceView{}, EvidenceGate: evidenceGate(m.Evidence, ev)}
	latest := map[string]int{}
	for _, e := range ev { // oldest first: the last word wins
		c := db.StoredRow("evidence", e.ID)
		v := EvidenceView{Kind: e.Kind, Passed: e.Passed, Detail: e.Detail, ReportedAt: c.Time("reported_at", e.ReportedAt)}
		if err := c.Err(); err != nil {
			return err
		}
		if i, ok := latest[e.Kind]; ok {
			d.Evidence.Latest[i] = v
			continue
		}
		latest[e.Kind] = len(d.Evidence.Latest)
		d.Evidence.Latest = append(d.Evidence.Latest, v)
	}
	return nil
}
