// Package protocol is Madebook's next_action engine: a pure function from the
// facts Madebook holds about one session to the Brief its agent is given.
//
// It never touches the database, the network or the clock: every input is a
// value the caller read (a row Madebook computed or a person set), and the
// time is a parameter. Every rule of the execution protocol is therefore a
// table test.
package protocol

import "time"

// PlanStatus is where a session's execution plan stands.
type PlanStatus string

// The plan statuses. PlanNone means no plan has been proposed yet.
const (
	PlanNone     PlanStatus = ""
	PlanProposed PlanStatus = "proposed"
	PlanApproved PlanStatus = "approved"
	PlanRejected PlanStatus = "rejected"
	// PlanChangesRequested: a lead asked for changes to the plan, with an
	// instruction (seed 002's CONFIRMING → ARCHITECTURE_REVISING).
	PlanChangesRequested PlanStatus = "changes_requested"
)

// Severity is a policy's severity, set by the organisation that wrote it.
type Severity string

// The policy severities, most severe first.
const (
	SeverityCritical Severity = "critical"
	SeverityHigh     Severity = "high"
	SeverityMedium   Severity = "medium"
	SeverityLow      Severity = "low"
)

// Facts is everything Madebook knows about one session that can change what
// its agent is told to do. The zero value is a session with nothing in its
// way. The brief Decide gives points into the facts (its reasons' Words and
// files): they must not change while the brief is read.
type Facts struct {
	// Pause is set when a person pulled the brake on the session.
	Pause *Pause
	// HighRisk is the mission's high-risk flag: its plan needs a lead's approval.
	HighRisk bool
	// Plan is the session's latest execution plan.
	Plan Plan
	// Decisions are the session's open decision gates.
	Decisions []Decision
	// Remediations are the session's open remediation requests.
	Remediations []Remediation
	// Violations are the session's open policy violations.
	Violations []Violation
	// Deviations are departures from the workspace's architecture rules.
	Deviations []Deviation
	// Breaches are mission contract clauses the session's change breaks.
	Breaches []Breach
	// Risk is the scored risk of the session's change; nil before any change.
	Risk *Risk
	// Collisions are other sessions building against symbols this one changed.
	Collisions []Collision
	// Lifecycle is the session's seed-002 lifecycle state and since when it
	// has held it. Only the revising states fire (plan_revising, BLOCKED);
	// the zero value, an untracked session, fires nothing.
	Lifecycle Lifecycle
	// PermissionPrompts are the session's pending permission prompts: each
	// fires permission_requested (DECISION_REQUIRED).
	PermissionPrompts []PermissionPrompt
}

// The lifecycle states the protocol recognises, spelled as the lifecycle
// spells them. In both the plan is being revised, so no code change is
// accepted: ARCHITECTURE_REVISING after a lead asked for a modification
// or a requirement changed at design or interface level, INTERRUPTING on
// the way there. Every other state, and the empty string, fires nothing.
const (
	LifecycleArchitectureRevising = "ARCHITECTURE_REVISING"
	LifecycleInterrupting         = "INTERRUPTING"
)

// Lifecycle is where a session stands in its seed-002 lifecycle, as far as
// the protocol cares. The caller passes the session's current state as it
// is stored, whatever it is, and the protocol decides whether it fires: it
// fires (plan_revising, BLOCKED) only in LifecycleArchitectureRevising and
// LifecycleInterrupting. CONFIRMING fires nothing here: its wait is the
// plan approval, which HighRisk and Plan already carry (plan_not_approved).
type Lifecycle struct {
	// State is the session's lifecycle state, e.g. "ARCHITECTURE_REVISING";
	// empty or "IDLE" for an untracked session. It is matched exactly.
	State string
	// Since is when the session entered State (the time of the transition
	// into it): the reason's age, for ordering.
	Since time.Time
}

// Revising reports whether the session's plan is being revised, so that
// no code change is accepted until the revised plan is confirmed.
func (l Lifecycle) Revising() bool {
	return l.State == LifecycleArchitectureRevising || l.State == LifecycleInterrupting
}

// PermissionPrompt is a pending permission prompt: the session's agent
// reported permission.prompt.requested and no person has answered it yet.
// Pass only unanswered prompts; each fires permission_requested
// (DECISION_REQUIRED) with ref ID, blocking ToolScope(Tool), when Tool is
// set, and every path in Paths, and allowing nothing.
type PermissionPrompt struct {
	ID     string
	Prompt string // the question as the agent's client put it
	// Options are the answers a person may choose, by key, e.g.
	// {"1": "Allow", "2": "Deny"}. The protocol carries them and does not
	// read them.
	Options  map[string]string
	Tool     string   // the tool the prompt is about, e.g. "Bash"; may be empty
	Paths    []string // the paths it names; may be empty
	OpenedAt time.Time
}

// Pause is a person's brake on a session.
type Pause struct {
	Reason string
	By     string
	At     time.Time
}

// Plan is the session's latest execution plan, as far as the protocol cares.
type Plan struct {
	Status     PlanStatus
	Note       string // the lead's note or instruction when it was rejected or changes were asked for
	ProposedAt time.Time
}

// Decision is an open decision gate, opened by the agent.
type Decision struct {
	Ref          string
	Title        string
	Question     string
	Proposal     string
	BlockedScope []string
	AllowedScope []string
	OpenedAt     time.Time
	// TTL is the mission's gate_ttl: how long the gate may wait on a
	// person before it expires. Zero: it never does.
	TTL time.Duration
	// ExpiredAt is when Madebook recorded the gate as expired (the
	// sweep's stamp); zero when it has not. A gate once recorded expired
	// stays expired whatever its mission's gate_ttl becomes.
	ExpiredAt time.Time
}

// Expiry reports whether the gate is expired at now, and when it expired.
// See GateExpiry.
func (d Decision) Expiry(now time.Time) (time.Time, bool) {
	return GateExpiry(d.OpenedAt, d.TTL, d.ExpiredAt, now)
}

// GateExpiry is the rule of gates that expire: a gate opened at opened,
// on a mission whose gate_ttl is ttl (zero: never), is expired at now when
// it has been open for ttl or longer, or when Madebook recorded it as
// expired (stamped, non-zero). It returns when the gate expired: opened
// plus ttl when the ttl has run out, else the stamp. An expired gate still
// blocks what it blocked; only a person's resolution lifts it.
func GateExpiry(opened time.Time, ttl time.Duration, stamped, now time.Time) (time.Time, bool) {
	if ttl > 0 {
		if at := opened.Add(ttl); !now.Before(at) {
			return at, true
		}
	}
	if !stamped.IsZero() {
		return stamped, true
	}
	return time.Time{}, false
}

// Remediation is an open remediation request.
type Remediation struct {
	ID          string
	Required    bool
	Instruction string
	Files       []string
	CreatedAt   time.Time
	// For is the ID of the violation or deviation that raised it (a high
	// violation's or an enforced rule's remediation), empty for one a
	// person or a collision raised. While that fact is among the facts and
	// fires REMEDIATE itself (high_violation, rule_deviation), its reason
	// stands for the remediation, which gives none of its own: one fact,
	// one reason.
	For string
}

// Violation is an open policy violation found in the session's change.
type Violation struct {
	ID       string
	Policy   string
	Severity Severity
	// BlockMerge is set when the policy's action is block_merge rather than
	// violation: the code may be written, it will not ship.
	BlockMerge bool
	// Match names what matched, never the secret value itself.
	Match string
	// File is where it was found.
	File string
	At   time.Time
	// Breach, when set, says the violation is a breach of a blocked
	// scope that no policy found: a call wrote into it before its
	// decision was made. It is critical; its reason names the call, the
	// scope and the files.
	Breach *ScopeBreach
}

// ScopeBreach is what a coding agent's hook saw: an allowed call changed
// files inside a blocked scope (an open decision gate's) while the gate
// was open.
type ScopeBreach struct {
	// Call names the call: the tool, and the start of its command
	// ("Bash (make migrate)").
	Call string
	// Scope are the blocked scope entries the call wrote into; none when
	// neither the hook nor an open gate named them.
	Scope []string
	// Files are the files it changed there.
	Files []string
	// Ungoverned says the call ran with no check at all: no hook asked
	// Madebook before it ran (the executor's transcript holds it, no check
	// names it). Scope is then empty and Files are the paths it named.
	Ungoverned bool
}

// Remediates reports whether the violation fires REMEDIATE
// (high_violation): a high severity policy whose action is violation, not
// block_merge. Such a violation raises a required remediation.
func (v Violation) Remediates() bool {
	return !v.BlockMerge && v.Severity == SeverityHigh
}

// Deviation is a change that adds a departure from an architecture rule.
type Deviation struct {
	ID        string
	Departure string // what the change used, e.g. "redux-toolkit"
	Chosen    string // the workspace's approach, e.g. "React Query"
	Concern   string // e.g. "server state"
	Support   int    // components that use Chosen
	Total     int    // components that address Concern
	Enforced  bool
	Files     []string
	At        time.Time
}

// Enforceable reports whether the deviation holds the agent to the rule:
// the rule is enforced and its confidence (Support/Total) is at least 70%.
func (d Deviation) Enforceable() bool {
	return d.Enforced && d.Total > 0 && d.Support*100 >= 70*d.Total
}

// Instruction is what an enforceable deviation's reason (rule_deviation)
// says, naming the compliant alternative: "redux-toolkit departs from this
// workspace's approach. Use React Query — chosen for server state in 31
// of 34 components." The remediation it raises carries the same words.
func (d Deviation) Instruction() string {
	var buf [256]byte
	return string(appendEnforced(buf[:0], &d))
}

// ConfidencePercent is the rule's confidence, rounded down, so that a rule
// shown as 70% is always at or above the enforcement threshold.
func (d Deviation) ConfidencePercent() int {
	if d.Total <= 0 {
		return 0
	}
	return d.Support * 100 / d.Total
}

// ClauseKind is the kind of a mission contract clause.
type ClauseKind string

// The contract clause kinds.
const (
	ForbidPath       ClauseKind = "forbid_path"
	RequirePath      ClauseKind = "require_path"
	ForbidDependency ClauseKind = "forbid_dependency"
	MaxFilesChanged  ClauseKind = "max_files_changed"
)

// Breach is a mission contract clause the session's change breaks.
type Breach struct {
	ID    string
	Kind  ClauseKind
	Value string   // the clause's value: a glob, a dependency, a number
	Found []string // what broke it: the paths or dependencies
	Count int      // for max_files_changed, the files the change touches
	At    time.Time
}

// Risk is the scored risk of the session's change.
type Risk struct {
	Score int
	Band  string // low, medium, high, critical
	Gate  string // what the change needs before merge at this band
	At    time.Time
}

// Collision is another session building against a symbol this one changed.
type Collision struct {
	ID           string
	Symbol       string
	OtherSession string
	OtherAgent   string
	At           time.Time
}
