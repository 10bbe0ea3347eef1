package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/ids"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/protocol"
)

// Brief is what an agent is told on `POST /brief`: the engine's decision,
// the open gates and remediations, the resolutions delivered for the first
// time, and the whole protocol text.
type Brief struct {
	Session      string            `json:"session"`
	NextAction   protocol.State    `json:"next_action"`
	Reason       string            `json:"reason"`
	Reasons      []protocol.Reason `json:"reasons"`
	Also         []protocol.Reason `json:"also"`
	BlockedScope []string          `json:"blocked_scope"`
	AllowedScope []string          `json:"allowed_scope"`
	// Decisions are the gates still open.
	Decisions []Decision `json:"decisions"`
	// Resolutions are only what this brief delivers for the first time:
	// gates' resolutions and leads' answers to plans (ref PLAN-<id>).
	Resolutions []Resolution `json:"resolutions"`
	// Remediations are the requests still open.
	Remediations []Remediation `json:"remediations"`
	// Permissions are the answers to permission prompts this brief
	// delivers for the first time.
	Permissions []PermissionAnswer `json:"permissions"`
	// BriefID names this brief: send it as ack on the next brief to
	// acknowledge what this one delivered.
	BriefID     string    `json:"brief_id"`
	GeneratedAt time.Time `json:"generated_at"`
	// Protocol is the whole protocol text (MarshalJSON writes it last).
	Protocol string `json:"-"`
}

// PermissionAnswer is a person's answer to a permission prompt, as
// delivered to the agent: the option chosen and its label.
type PermissionAnswer struct {
	ID         int64     `json:"id"`
	Prompt     string    `json:"prompt"`
	Option     string    `json:"option"`
	Label      string    `json:"label"`
	AnsweredAt time.Time `json:"answered_at"`
	AnsweredBy string    `json:"answered_by"`
	// Redelivered says an earlier brief handed this over and it was not
	// acknowledged within its lease.
	Redelivered bool `json:"redelivered,omitempty"`
}

// Resolution is a person's answer to a gate, as delivered to the agent; a
// lead's answer to a plan is one too (ref PLAN-<id>, resolution the plan's
// new status: approved, changes_requested or rejected).
type Resolution struct {
	Ref         string    `json:"ref"`
	Resolution  string    `json:"resolution"`
	Instruction string    `json:"instruction"`
	ResolvedAt  time.Time `json:"resolved_at"`
	ResolvedBy  string    `json:"resolved_by"`
	// Redelivered says an earlier brief handed this over and it was not
	// acknowledged within its lease.
	Redelivered bool `json:"redelivered,omitempty"`
}

// protocolJSON is the protocol text, JSON-encoded once: every brief carries
// the same few kilobytes.
var protocolJSON, _ = json.Marshal(protocol.Text)

// MarshalJSON encodes the brief, splicing in the pre-encoded protocol text.
// The /brief handler writes its result as is, so the text is neither
// escaped nor re-validated on every brief.
func (b Brief) MarshalJSON() ([]byte, error) {
	type fields Brief // the same fields, without this method
	out, err := json.Marshal(fields(b))
	if err != nil {
		return nil, err
	}
	text := protocolJSON
	if b.Protocol != protocol.Text {
		if text, err = json.Marshal(b.Protocol); err != nil {
			return nil, err
		}
	}
	out = append(out[:len(out)-1], `,"protocol":`...)
	out = append(out, text...)
	return append(out, '}'), nil
}

// UnmarshalJSON decodes a brief, protocol text included.
func (b *Brief) UnmarshalJSON(data []byte) error {
	type fields Brief
	var text struct {
		Protocol string `json:"protocol"`
	}
	if err := json.Unmarshal(data, (*fields)(b)); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &text); err != nil {
		return err
	}
	b.Protocol = text.Protocol
	return nil
}

// BriefService tells agents what to do next, and writes down when each
// session last took a brief.
type BriefService struct {
	core *core
	// views is the read model the brief and the executor gate's check are
	// decided on; the write path's commits and other replicas' notices
	// invalidate it.
	views *readModel
	// touches are the brief times not yet written: briefs record them,
	// sessions show them.
	touches touches
	// lease is how long a delivery waits for its acknowledgement before a
	// brief hands it over again (Options.DeliveryLease).
	lease time.Duration
}

// newBriefService returns the brief service over c, with an empty cache.
func newBriefService(c *core, lease time.Duration) *BriefService {
	return &BriefService{core: c, views: newReadModel(c.store, c.now), touches: touches{pending: map[string]*time.Time{}}, lease: lease}
}

// BriefRequest is what an agent sends to take a brief: its session and,
// optionally, the id of the brief before, acknowledging what that brief
// delivered.
type BriefRequest struct {
	Session string `json:"session" jsonschema:"The session's id (ses_…), as open_session answered it."`
	Ack     string `json:"ack,omitempty" jsonschema:"The brief_id of your last brief (brf_…): acknowledges what it delivered."`
}

// DecodeFlat reads the usual brief request, {"session":"ses_…"} with or
// without an ack, without encoding/json: it is the body agents send most.
// It reports false, writing nothing, for any other body (input.Shallow).
func (r *BriefRequest) DecodeFlat(body []byte) bool {
	return input.Shallow(body, []input.Member{{Name: "session", Str: &r.Session}, {Name: "ack", Str: &r.Ack}})
}

// MaxBriefID is the most characters of a brief id an agent acknowledges.
const MaxBriefID = 64

// DefaultDeliveryLease is how long a delivery waits for its
// acknowledgement before the next brief delivers it again.
const DefaultDeliveryLease = 2 * time.Minute

// Brief tells the agent what to do next and hands over every gate
// resolution, lead's answer to a plan, permission answer and remediation
// request that is due: never delivered, or delivered and not acknowledged
// within the delivery lease (then with "redelivered": true). Each brief
// has an id; in.Ack names the brief before, and stamps what it delivered
// as acknowledged. Reading is the common case and writes nothing; only
// when something is due or acknowledged does the brief take the writer,
// and then the stamps (`UPDATE … RETURNING`, guarded by the lease) and the
// read that builds the brief are one transaction, so racing briefs hand a
// thing over once per lease. Errors: forbidden (not the session's agent),
// session_required, invalid_ack, session_not_found.
func (s *BriefService) Brief(ctx context.Context, actor auth.Actor, in BriefRequest) (Brief, error) {
	b, _, err := s.brief(ctx, actor, in, false)
	return b, err
}

// brief is Brief; with encode, a brief answered from the cache comes back
// encoded instead (the Brief is then zero).
func (s *BriefService) brief(ctx context.Context, actor auth.Actor, in BriefRequest, encode bool) (Brief, EncodedBrief, error) {
	if err := actor.RequireAgent("take a brief (people see a preview on the session)"); err != nil {
		return Brief{}, nil, err
	}
	session := in.Session
	if session == "" {
		return Brief{}, nil, errs.E(errs.Invalid, "session_required", "Name the session: {\"session\":\"ID\"}.").In("session")
	}
	if in.Ack != "" && (!strings.HasPrefix(in.Ack, briefIDPrefix) || len(in.Ack) > MaxBriefID) {
		return Brief{}, nil, errs.E(errs.Invalid, "invalid_ack",
			"ack is the brief_id of an earlier brief (brf_…, at most %d characters).", MaxBriefID).In("ack")
	}
	now := s.core.now()
	inputs, err := s.ownView(ctx, actor, session, now)
	if err != nil {
		return Brief{}, nil, fmt.Errorf("brief %s: %w", session, err)
	}
	if in.Ack != "" && inputs.state.Unacked == 0 {
		// The cached view holds nothing to acknowledge, but another
		// replica may have delivered since its notice reached this one:
		// an acknowledgement is answered from the database, never dropped
		// on a cached view.
		s.views.invalidate([]string{session})
		if inputs, err = s.ownView(ctx, actor, session, now); err != nil {
			return Brief{}, nil, fmt.Errorf("brief %s: %w", session, err)
		}
	}
	id := ids.New(briefIDPrefix)
	var b Brief
	if st := inputs.state; s.due(st, now) || (in.Ack != "" && st.Unacked > 0) {
		err = s.core.write(ctx, func(q db.Querier) error {
			if in.Ack != "" {
				if err := s.ack(ctx, q, actor, session, in.Ack, now); err != nil {
					return err
				}
			}
			b, err = s.briefIn(ctx, q, actor, session, now, id)
			return err
		})
		if err != nil {
			return Brief{}, nil, fmt.Errorf("brief %s: %w", session, err)
		}
	} else if encode {
		enc, err := s.encodedBrief(inputs, now, id)
		if err != nil {
			return Brief{}, nil, fmt.Errorf("brief %s: %w", session, err)
		}
		s.touches.record(session, now)
		return Brief{}, enc, nil
	} else {
		b = assemble(inputs, nil, now)
	}
	b.BriefID = id
	s.touches.record(session, now)
	return b, nil, nil
}

// briefIDPrefix starts every brief's id.
const briefIDPrefix = "brf_"

// due reports whether something waits to be handed over to the session
// now: a thing never delivered, or one whose lease ran out unacknowledged.
func (s *BriefService) due(st db.GetBriefStateRow, now time.Time) bool {
	return st.Unacked > 0 && (st.OldestDelivery == "" || st.OldestDelivery <= db.FormatTime(now.Add(-s.lease)))
}

// ack stamps as acknowledged what brief delivered to the session, and
// records the acknowledgement when it stamped something.
func (s *BriefService) ack(ctx context.Context, q db.Querier, actor auth.Actor, session, brief string, now time.Time) error {
	at := db.NullTime(now)
	n := int64(0)
	for _, stamp := range []func() (int64, error){
		func() (int64, error) {
			return q.AckResolutions(ctx, db.AckResolutionsParams{Now: at, SessionID: session, BriefID: sql.NullString{String: brief, Valid: true}})
		},
		func() (int64, error) {
			return q.AckPlanAnswers(ctx, db.AckPlanAnswersParams{Now: at, SessionID: session, BriefID: sql.NullString{String: brief, Valid: true}})
		},
		func() (int64, error) {
			return q.AckPermissionAnswers(ctx, db.AckPermissionAnswersParams{Now: at, SessionID: session, BriefID: sql.NullString{String: brief, Valid: true}})
		},
		func() (int64, error) {
			return q.AckRemediations(ctx, db.AckRemediationsParams{Now: at, SessionID: session, BriefID: sql.NullString{String: brief, Valid: true}})
		},
	} {
		k, err := stamp()
		if err != nil {
			return fmt.Errorf("acknowledge %s: %w", brief, err)
		}
		n += k
	}
	if n == 0 {
		return nil
	}
	return s.core.event(ctx, q, session, actor, now, "brief.acknowledged", brief, countOf(int(n), "delivery", "deliveries"))
}

// briefIn reads every fact of the session in q's transaction and decides.
// Delivering (Briefs.Brief), it stamps what it hands over and records the
// deliveries in the timeline; the preview (Sessions.Get) shows what the
// next brief would hand over.
//
// brief is the id of the brief that delivers ("" for the preview).
func (s *BriefService) briefIn(ctx context.Context, q db.Querier, actor auth.Actor, session string, now time.Time, brief string) (Brief, error) {
	st, err := q.GetBriefState(ctx, session)
	if err != nil {
		return Brief{}, err
	}
	deliver := brief != ""
	d, err := deliveries(ctx, q, st, now, now.Add(-s.lease), brief)
	if err != nil {
		return Brief{}, err
	}
	people := people{q: q, emails: map[int64]string{}}
	resolutions, err := d.resolutions(ctx, people)
	if err != nil {
		return Brief{}, err
	}
	permissions, err := d.permissions(ctx, people)
	if err != nil {
		return Brief{}, err
	}
	in, err := loadInputs(ctx, q, session)
	if err != nil {
		return Brief{}, err
	}
	if deliver {
		for _, r := range resolutions {
			kind := "resolution"
			if strings.HasPrefix(r.Ref, planRefPrefix) {
				kind = "plan.answer"
			}
			if err := s.core.event(ctx, q, session, actor, now, deliveryKind(kind, r.Redelivered), r.Ref, r.Instruction); err != nil {
				return Brief{}, err
			}
		}
		slices.SortFunc(d.remediations, func(a, b db.DeliverRemediationsRow) int { return int(a.ID - b.ID) })
		for _, r := range d.remediations {
			kind := deliveryKind("remediation", d.again(r.DeliveredAt, r.LastDeliveredAt))
			if err := s.core.event(ctx, q, session, actor, now, kind, fmt.Sprint(r.ID), ""); err != nil {
				return Brief{}, err
			}
		}
		for _, p := range permissions {
			kind := deliveryKind("permission.answer", p.Redelivered)
			if err := s.core.event(ctx, q, session, actor, now, kind, permissionRef(p.ID), p.Option); err != nil {
				return Brief{}, err
			}
		}
	}
	b := assemble(&in, resolutions, now)
	b.Permissions = permissions
	b.Remediations = d.markRedelivered(b.Remediations)
	return b, nil
}

// markRedelivered returns the open remediations with "redelivered" set on
// those this brief hands over again after an unacknowledged delivery's
// lease ran out. It marks a copy: the list may be a cached view's.
func (d delivered) markRedelivered(rs []Remediation) []Remediation {
	again := map[int64]bool{}
	for _, r := range d.remediations {
		if d.again(r.DeliveredAt, r.LastDeliveredAt) {
			again[r.ID] = true
		}
	}
	if len(again) == 0 {
		return rs
	}
	out := slices.Clone(rs)
	for i := range out {
		out[i].Redelivered = again[out[i].ID]
	}
	return out
}

// delivered is what one brief hands over: the rows it stamped (or, for
// the preview, would stamp).
type delivered struct {
	// stamped says the rows were stamped by this brief (not a preview).
	stamped      bool
	decisions    []db.ListUndeliveredResolutionsRow
	plans        []db.Plan
	prompts      []db.PermissionPrompt
	remediations []db.DeliverRemediationsRow
}

// deliveries stamps with brief's id (or, for the preview, brief == "",
// lists) what is due to the session: never delivered, or last delivered
// at or before cutoff and not acknowledged. It reads nothing when st says
// nothing waits. Each stamp is `UPDATE … WHERE … RETURNING`, so two racing
// briefs cannot both hand one thing over within a lease.
func deliveries(ctx context.Context, q db.Querier, st db.GetBriefStateRow, now, cutoff time.Time, brief string) (delivered, error) {
	var d delivered
	if st.Unacked == 0 {
		return d, nil
	}
	at, until, id := db.NullTime(now), db.NullTime(cutoff), sql.NullString{String: brief, Valid: true}
	var err error
	if brief == "" {
		if d.decisions, err = q.ListUndeliveredResolutions(ctx, db.ListUndeliveredResolutionsParams{SessionID: st.ID, Cutoff: until}); err != nil {
			return d, fmt.Errorf("resolutions due: %w", err)
		}
		if d.plans, err = q.ListUndeliveredPlanAnswers(ctx, db.ListUndeliveredPlanAnswersParams{SessionID: st.ID, Cutoff: until}); err != nil {
			return d, fmt.Errorf("plan answers due: %w", err)
		}
		if d.prompts, err = q.ListUndeliveredPermissionAnswers(ctx, db.ListUndeliveredPermissionAnswersParams{SessionID: st.ID, Cutoff: until}); err != nil {
			return d, fmt.Errorf("permission answers due: %w", err)
		}
		return d, nil
	}
	d.stamped = true
	rows, err := q.DeliverResolutions(ctx, db.DeliverResolutionsParams{Now: at, BriefID: id, SessionID: st.ID, Cutoff: until})
	if err != nil {
		return d, fmt.Errorf("deliver resolutions: %w", err)
	}
	for _, r := range rows {
		d.decisions = append(d.decisions, db.ListUndeliveredResolutionsRow(r))
	}
	if d.plans, err = q.DeliverPlanAnswers(ctx, db.DeliverPlanAnswersParams{Now: at, BriefID: id, SessionID: st.ID, Cutoff: until}); err != nil {
		return d, fmt.Errorf("deliver plan answers: %w", err)
	}
	if d.prompts, err = q.DeliverPermissionAnswers(ctx, db.DeliverPermissionAnswersParams{Now: at, BriefID: id, SessionID: st.ID, Cutoff: until}); err != nil {
		return d, fmt.Errorf("deliver permission answers: %w", err)
	}
	if d.remediations, err = q.DeliverRemediations(ctx, db.DeliverRemediationsParams{Now: at, BriefID: id, SessionID: st.ID, Cutoff: until}); err != nil {
		return d, fmt.Errorf("deliver remediations: %w", err)
	}
	return d, nil
}

// again reports whether a row is handed over a second time or more: once
// stamped, its first delivery is not its last; in the preview (nothing
// stamped), it was delivered before.
func (d delivered) again(first, last sql.NullString) bool {
	if d.stamped {
		return first.Valid && last.Valid && first.String != last.String
	}
	return first.Valid
}

// deliveryKind is the timeline kind of a delivery: "<what>.delivered" or
// "<what>.redelivered".
func deliveryKind(what string, again bool) string {
	if again {
		return what + ".redelivered"
	}
	return what + ".delivered"
}

// people names the people who answered, by their email, reading each
// person once per brief.
type people struct {
	q      db.Querier
	emails map[int64]string
}

func (p people) email(ctx context.Context, id sql.NullInt64) (string, error) {
	if !id.Valid {
		return "", nil
	}
	if e, ok := p.emails[id.Int64]; ok {
		return e, nil
	}
	u, err := p.q.GetUser(ctx, id.Int64)
	if err != nil {
		return "", fmt.Errorf("user %d: %w", id.Int64, err)
	}
	p.emails[id.Int64] = u.Email
	return u.Email, nil
}

// planRefPrefix is how a lead's answer to a plan is referred to among the
// resolutions: PLAN-<id>.
const planRefPrefix = "PLAN-"

// resolutions are the gates' resolutions and the leads' answers to plans
// (ref PLAN-<id>, resolution the plan's new status, instruction the note
// or instruction), oldest first.
func (d delivered) resolutions(ctx context.Context, people people) ([]Resolution, error) {
	out := make([]Resolution, 0, len(d.decisions)+len(d.plans))
	for _, r := range d.decisions {
		by, err := people.email(ctx, r.ResolvedBy)
		if err != nil {
			return nil, fmt.Errorf("resolver of %s: %w", r.Ref, err)
		}
		c := db.StoredRow("decisions", r.Ref)
		out = append(out, Resolution{Ref: r.Ref, Resolution: r.Resolution, Instruction: r.Instruction,
			ResolvedAt: c.NullTime("resolved_at", r.ResolvedAt), ResolvedBy: by, Redelivered: d.again(r.DeliveredAt, r.LastDeliveredAt)})
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	for _, p := range d.plans {
		ref := planRefPrefix + strconv.FormatInt(p.ID, 10)
		by, err := people.email(ctx, p.DecidedBy)
		if err != nil {
			return nil, fmt.Errorf("lead who answered %s: %w", ref, err)
		}
		c := db.StoredRow("plans", p.ID)
		out = append(out, Resolution{Ref: ref, Resolution: p.Status, Instruction: p.Note,
			ResolvedAt: c.NullTime("decided_at", p.DecidedAt), ResolvedBy: by, Redelivered: d.again(p.DeliveredAt, p.LastDeliveredAt)})
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b Resolution) int {
		if c := a.ResolvedAt.Compare(b.ResolvedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Ref, b.Ref)
	})
	return out, nil
}

// permissions are the answers to permission prompts, oldest first.
func (d delivered) permissions(ctx context.Context, people people) ([]PermissionAnswer, error) {
	out := make([]PermissionAnswer, 0, len(d.prompts))
	for _, p := range d.prompts {
		by, err := people.email(ctx, p.AnsweredBy)
		if err != nil {
			return nil, fmt.Errorf("person who answered %s: %w", permissionRef(p.ID), err)
		}
		c := db.StoredRow("permission_prompts", p.ID)
		var options map[string]string
		c.JSON("options", p.Options, &options)
		out = append(out, PermissionAnswer{ID: p.ID, Prompt: p.Prompt, Option: p.Answer.String,
			Label: options[p.Answer.String], AnsweredAt: c.NullTime("answered_at", p.AnsweredAt), AnsweredBy: by,
			Redelivered: d.again(p.DeliveredAt, p.LastDeliveredAt)})
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b PermissionAnswer) int {
		if c := a.AnsweredAt.Compare(b.AnsweredAt); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	return out, nil
}

// assemble asks the engine about the inputs and wraps its answer. The
// facts were built when the inputs were read, so a cached brief does no
// more than decide and encode.
func assemble(in *sessionView, resolutions []Resolution, now time.Time) Brief {
	if resolutions == nil {
		resolutions = []Resolution{}
	}
	p := protocol.Decide(in.facts, now)
	return Brief{Session: in.state.ID, NextAction: p.NextAction, Reason: p.Reason.String(), Reasons: p.Reasons, Also: p.Also,
		BlockedScope: p.BlockedScope, AllowedScope: p.AllowedScope, Decisions: in.decisionsAt(now), Remediations: in.remediations,
		Resolutions: resolutions, Permissions: []PermissionAnswer{}, Protocol: protocol.Text, GeneratedAt: p.GeneratedAt}
}

// decisionsAt are the open gates as they stand at now: whether each is
// expired depends on the clock, so it is settled here, on a copy, and
// never in the inputs a cache shares.
func (in *sessionView) decisionsAt(now time.Time) []Decision {
	ttl := gateTTLOf(in.state.GateTtl)
	if ttl <= 0 || len(in.decisions) == 0 {
		return in.decisions // only a stamp expires them, and decisionFrom read it
	}
	out := slices.Clone(in.decisions)
	for i := range out {
		out[i].expireAt(ttl, now)
	}
	return out
}

// rows is what loadInputs reads of a session besides its state.
type rows struct {
	decisions    []db.Decision
	remediations []db.Remediation
	violations   []db.Violation
	deviations   []db.ListOpenDeviationsRow
	breaches     []db.Breach
	collisions   []db.ListOpenCollisionsRow
	prompts      []db.PermissionPrompt
	change       *db.Change

	// scopeBreaches are the breaches of a blocked scope that open
	// violations are (violations.breach_id), read only when there are.
	scopeBreaches []db.ScopeBreach
}

// inputsFrom turns the rows into the engine's facts and the brief's lists.
// An error names the first row that does not convert.
func inputsFrom(st db.GetBriefStateRow, r rows) (sessionView, error) {
	in := sessionView{state: st, decisions: make([]Decision, len(r.decisions)), remediations: make([]Remediation, len(r.remediations)),
		decided: &decided{}}
	f := &in.facts
	f.HighRisk = st.HighRisk
	plan := db.StoredRow("plans", "of session "+st.ID) // the latest
	f.Plan = protocol.Plan{Status: protocol.PlanStatus(st.PlanStatus), Note: st.PlanNote, ProposedAt: plan.Time("proposed_at", st.PlanProposedAt)}
	if err := plan.Err(); err != nil {
		return sessionView{}, err
	}
	if st.LifecycleAt.Valid { // tracked: the lifecycle governs
		sess := db.StoredRow("sessions", st.ID)
		f.Lifecycle = protocol.Lifecycle{State: st.Lifecycle, Since: sess.Time("lifecycle_at", st.LifecycleAt.String)}
		if err := sess.Err(); err != nil {
			return sessionView{}, err
		}
	}
	if st.PausedAt.Valid {
		sess := db.StoredRow("sessions", st.ID)
		f.Pause = &protocol.Pause{Reason: st.PauseReason, At: sess.NullTime("paused_at", st.PausedAt)}
		if err := sess.Err(); err != nil {
			return sessionView{}, err
		}
	}
	ttl := time.Duration(gateTTLOf(st.GateTtl))
	for i, row := range r.decisions {
		d, err := decisionFrom(row, "")
		if err != nil {
			return sessionView{}, err
		}
		in.decisions[i] = d
		var stamped time.Time
		if d.ExpiredAt != nil {
			stamped = *d.ExpiredAt
		}
		// Whether the gate is expired is the engine's to say, at the
		// brief's now: the cached facts carry the rule's inputs, not its
		// answer.
		f.Decisions = append(f.Decisions, protocol.Decision{Ref: d.Ref, Title: d.Title, Question: d.Question,
			Proposal: d.Proposal, BlockedScope: d.BlockedScope, AllowedScope: d.AllowedScope, OpenedAt: d.OpenedAt,
			TTL: ttl, ExpiredAt: stamped})
	}
	for i, row := range r.remediations {
		m, err := remediationFrom(row)
		if err != nil {
			return sessionView{}, err
		}
		in.remediations[i] = m
		f.Remediations = append(f.Remediations, protocol.Remediation{ID: fmt.Sprintf("REM-%d", m.ID),
			Required: m.Severity == SeverityRequired, Instruction: m.Instruction, Files: m.Files, CreatedAt: m.CreatedAt,
			For: m.RaisedBy})
	}
	for _, v := range r.violations {
		c := db.StoredRow("violations", v.ID)
		pv := protocol.Violation{ID: fmt.Sprintf("VIO-%d", v.ID), Policy: v.Policy,
			Severity: protocol.Severity(v.Severity), BlockMerge: v.Action == "block_merge", Match: v.Match, File: v.File,
			At: c.Time("detected_at", v.DetectedAt)}
		if err := c.Err(); err != nil {
			return sessionView{}, err
		}
		if v.BreachID.Valid {
			b, err := scopeBreachOf(r.scopeBreaches, v)
			if err != nil {
				return sessionView{}, err
			}
			pv.Breach = b
		}
		f.Violations = append(f.Violations, pv)
	}
	for _, d := range r.deviations {
		c := db.StoredRow("deviations", d.ID)
		f.Deviations = append(f.Deviations, protocol.Deviation{ID: fmt.Sprintf("DEV-%d", d.ID), Departure: d.Departure,
			Chosen: d.Chosen, Concern: d.Concern, Support: int(d.Support), Total: int(d.Total), Enforced: d.Enforced,
			Files: c.List("files", d.Files), At: c.Time("detected_at", d.DetectedAt)})
		if err := c.Err(); err != nil {
			return sessionView{}, err
		}
	}
	for _, b := range r.breaches {
		c := db.StoredRow("breaches", b.ID)
		f.Breaches = append(f.Breaches, protocol.Breach{ID: fmt.Sprintf("CLAUSE-%d", b.ClauseIndex+1),
			Kind: protocol.ClauseKind(b.Kind), Value: b.Value, Found: c.List("found", b.Found), Count: int(b.Count),
			At: c.Time("detected_at", b.DetectedAt)})
		if err := c.Err(); err != nil {
			return sessionView{}, err
		}
	}
	for _, col := range r.collisions {
		c := db.StoredRow("collisions", col.ID)
		f.Collisions = append(f.Collisions, protocol.Collision{ID: fmt.Sprintf("COL-%d", col.ID), Symbol: col.Symbol,
			OtherSession: col.OtherSession, OtherAgent: col.OtherAgent, At: c.Time("detected_at", col.DetectedAt)})
		if err := c.Err(); err != nil {
			return sessionView{}, err
		}
	}
	for _, row := range r.prompts {
		p, err := promptFrom(row, "")
		if err != nil {
			return sessionView{}, err
		}
		f.PermissionPrompts = append(f.PermissionPrompts, promptFact(p))
	}
	if ch := r.change; ch != nil {
		c := db.StoredRow("changes", ch.SessionID)
		f.Risk = &protocol.Risk{Score: int(ch.RiskScore), Band: ch.RiskBand, Gate: ch.RiskGate, At: c.Time("reported_at", ch.ReportedAt)}
		if err := c.Err(); err != nil {
			return sessionView{}, err
		}
	}
	return in, nil
}

// scopeBreachOf is the breach the violation v is, as the engine words it,
// from the session's open breaches: its call (the violation's match), its
// scope and its files. An error names the row that does not read.
func scopeBreachOf(breaches []db.ScopeBreach, v db.Violation) (*protocol.ScopeBreach, error) {
	for _, b := range breaches {
		if b.ID != v.BreachID.Int64 {
			continue
		}
		c := db.StoredRow("scope_breaches", b.ID)
		out := &protocol.ScopeBreach{Call: v.Match, Scope: c.List("scope", b.Scope), Files: c.List("files", b.Files),
			Ungoverned: b.Kind == BreachUngoverned}
		return out, c.Err()
	}
	return nil, &db.CorruptRowError{Table: "violations", Row: fmt.Sprint(v.ID), Column: "breach_id",
		Err: fmt.Errorf("breach %d is not among the session's open breaches", v.BreachID.Int64)}
}
