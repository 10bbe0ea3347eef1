package protocol

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Code names the fact behind a reason. Agents may switch on it.
type Code string

// The reason codes, grouped by the state they produce.
const (
	CodeCriticalViolation   Code = "critical_violation"   // HARD_STOP
	CodePaused              Code = "paused"               // BLOCKED
	CodePlanNotApproved     Code = "plan_not_approved"    // BLOCKED
	CodePlanRevising        Code = "plan_revising"        // BLOCKED
	CodeDecisionOpen        Code = "decision_open"        // DECISION_REQUIRED
	CodeDecisionExpired     Code = "decision_expired"     // DECISION_REQUIRED: a gate open past its mission's gate_ttl
	CodePermissionRequested Code = "permission_requested" // DECISION_REQUIRED
	CodeRemediationRequired Code = "remediation_required" // REMEDIATE
	CodeHighViolation       Code = "high_violation"       // REMEDIATE
	CodeRuleDeviation       Code = "rule_deviation"       // REMEDIATE
	CodeContractViolated    Code = "contract_violated"    // REMEDIATE
	CodeRemediationAdvisory Code = "remediation_advisory" // CONTINUE_WITH_WARNING
	CodeRiskHigh            Code = "risk_high"            // CONTINUE_WITH_WARNING
	CodeCollision           Code = "collision"            // CONTINUE_WITH_WARNING
	CodeBlockMerge          Code = "block_merge"          // CONTINUE_WITH_WARNING
	CodeRuleAdvisory        Code = "rule_advisory"        // CONTINUE_WITH_WARNING
	CodePolicyWarning       Code = "policy_warning"       // CONTINUE_WITH_WARNING: a medium or low violation
)

// Scope entries the protocol itself names.
const (
	ScopeAllWork        = "all work"
	ScopeAllSessionWork = "all work in this session"
	ScopeAnyCodeChange  = "any code change"
	ScopeReadRepository = "reading the repository"
	ScopeRevisePlan     = "revising the plan"
	// ScopeToolPrefix starts the scope entry that names a tool: a pending
	// permission prompt about Bash blocks "tool:Bash". See ToolScope.
	ScopeToolPrefix = "tool:"
)

// ToolScope is the scope entry that names a tool, e.g. "tool:Bash", as a
// pending permission prompt about that tool blocks it. The prefix keeps a
// tool apart from a path of the same name.
func ToolScope(tool string) string { return ScopeToolPrefix + tool }

// The scope lists of the protocol's own reasons. They are only read: scopes
// copies their entries into the brief's own lists.
var (
	scopeAllWork        = []string{ScopeAllWork}
	scopeAllSessionWork = []string{ScopeAllSessionWork}
	scopePlanBlocked    = []string{ScopeAnyCodeChange}
	scopePlanAllowed    = []string{ScopeReadRepository, ScopeRevisePlan}
)

// Reason is one fact that fired, with the state it produces.
type Reason struct {
	State State  `json:"state"`
	Code  Code   `json:"code"`
	Ref   string `json:"ref"`
	Text  string `json:"text"`
	// Files are the files the reason is about, when it names any.
	Files []string `json:"files,omitempty"`
}

// candidate is a reason while it is decided: the Reason a brief carries,
// and what only the decision needs.
type candidate struct {
	Reason
	// at is when its fact began: the older first, within a state.
	at time.Time
	// tool is the scope entry of the tool a permission prompt blocks, e.g.
	// "tool:Bash", blocked before the entries of blocked.
	tool    string
	blocked []string
	allowed []string
}

// Brief is what the engine decides for one session at one moment.
type Brief struct {
	NextAction State `json:"next_action"`
	// Reason is the first reason at NextAction, as one sentence.
	Reason string `json:"reason"`
	// Reasons are every reason at NextAction.
	Reasons []Reason `json:"reasons"`
	// Also are the reasons at every lower state: nothing is dropped.
	Also         []Reason  `json:"also"`
	BlockedScope []string  `json:"blocked_scope"`
	AllowedScope []string  `json:"allowed_scope"`
	GeneratedAt  time.Time `json:"generated_at"`
}

// ContinueText is the reason given when nothing is in the agent's way.
const ContinueText = "Nothing is in your way: continue the mission."

// Decide returns the brief for a session with the given facts at time now.
// It is pure and deterministic: the same facts give the same brief.
//
// The reasons are decided in a buffer on the stack, then copied once, in
// order and without what only the decision needs, into the brief's one
// slice: moving a large value full of pointers on the heap costs a write
// barrier per pointer while the collector runs, which was most of the
// time of a busy session's brief.
func Decide(f Facts, now time.Time) Brief {
	b := Brief{
		NextAction:   Continue,
		Reason:       ContinueText,
		Reasons:      []Reason{},
		Also:         []Reason{},
		BlockedScope: []string{},
		AllowedScope: []string{},
		GeneratedAt:  now.UTC(),
	}
	switch n := reasonCount(f); {
	case n == 0:
		return b
	case n <= 4:
		var buf [4]candidate
		decide(&b, reasons(f, now, buf[:0]))
	case n <= 32:
		var buf [32]candidate
		decide(&b, reasons(f, now, buf[:0]))
	default:
		decide(&b, reasons(f, now, make([]candidate, 0, n)))
	}
	return b
}

// decide fills in b from the reasons that fired (at least one): sorted
// by compareReasons, stably, the most severe state's are b's reasons and
// scopes, the others b.Also.
func decide(b *Brief, cs []candidate) {
	var buf [32]int
	idx := buf[:0]
	if len(cs) > len(buf) {
		idx = make([]int, 0, len(cs))
	}
	for i := range cs {
		idx = append(idx, i)
	}
	cmp := func(i, j int) int {
		if c := compareReasons(&cs[i], &cs[j]); c != 0 {
			return c
		}
		return i - j // stable
	}
	if len(idx) <= len(buf) {
		// Few reasons, mostly in order already: an insertion sort.
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && cmp(idx[j], idx[j-1]) < 0; j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
	} else {
		slices.SortFunc(idx, cmp)
	}
	top := cs[idx[0]].State
	n := 0
	for n < len(idx) && cs[idx[n]].State == top {
		n++
	}
	rs := make([]Reason, len(cs))
	for k, i := range idx {
		rs[k] = cs[i].Reason
	}
	b.NextAction = top
	b.Reason = rs[0].Text
	b.Reasons = rs[:n:n]
	b.Also = rs[n:len(rs):len(rs)]
	b.BlockedScope, b.AllowedScope = scopes(cs, idx[:n])
}

// compareReasons orders reasons most severe state first, then oldest, then
// by ref, then by code and text so that the order is total.
func compareReasons(a, b *candidate) int {
	if a.State != b.State {
		return int(b.State) - int(a.State)
	}
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	if c := strings.Compare(a.Ref, b.Ref); c != 0 {
		return c
	}
	if c := strings.Compare(string(a.Code), string(b.Code)); c != 0 {
		return c
	}
	return strings.Compare(a.Text, b.Text)
}

// scopes merges the scope lists of the reasons cs[i] for i in top, those
// at the chosen state. What any reason blocks is never also allowed, and a
// reason that blocks all work leaves nothing allowed.
func scopes(cs []candidate, top []int) (blocked, allowed []string) {
	// Both lists in one allocation, each with room for every entry the
	// reasons name: blocked the front of it, allowed the back.
	nb, na := 0, 0
	for _, i := range top {
		r := &cs[i]
		nb += len(r.blocked)
		if r.tool != "" {
			nb++
		}
		na += len(r.allowed)
	}
	if nb+na == 0 {
		return []string{}, []string{}
	}
	both := make([]string, nb+na)
	blocked, allowed = both[:0:nb], both[nb:nb:nb+na]
	all := false
	for _, i := range top {
		r := &cs[i]
		if r.tool != "" {
			blocked = appendNew(blocked, r.tool)
		}
		for _, s := range r.blocked {
			if s == ScopeAllWork || s == ScopeAllSessionWork {
				all = true
			}
			blocked = appendNew(blocked, s)
		}
	}
	if all {
		return blocked, allowed
	}
	for _, i := range top {
		r := &cs[i]
		for _, s := range r.allowed {
			if !slices.Contains(blocked, s) {
				allowed = appendNew(allowed, s)
			}
		}
	}
	return blocked, allowed
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// texts holds the texts of one brief's reasons in one buffer: each text is
// a substring of it, so building them costs one allocation rather than one
// each, which was most of Decide's cost. A strings.Builder never changes
// the bytes it has written, so a text stays valid as the buffer grows.
type texts struct{ b strings.Builder }

func (t *texts) write(parts ...string) {
	for _, p := range parts {
		t.b.WriteString(p)
	}
}

// list writes the entries separated by commas.
func (t *texts) list(entries []string) {
	for i, e := range entries {
		if i > 0 {
			t.b.WriteString(", ")
		}
		t.b.WriteString(e)
	}
}

// since returns what was written from start on as one text.
func (t *texts) since(start int) string { return t.b.String()[start:] }

// cat writes the parts and returns them as one text.
func (t *texts) cat(parts ...string) string {
	start := t.b.Len()
	t.write(parts...)
	return t.since(start)
}

// reasonCount is how many reasons the facts can give at most: one per
// fact, plus the pause, the plan, the lifecycle and the risk when they
// fire.
func reasonCount(f Facts) int {
	n := len(f.Violations) + len(f.Decisions) + len(f.PermissionPrompts) + len(f.Remediations) +
		len(f.Deviations) + len(f.Breaches) + len(f.Collisions)
	for _, fires := range [...]bool{f.Pause != nil, f.HighRisk && f.Plan.Status != PlanApproved, f.Lifecycle.Revising(), highRisk(f.Risk)} {
		if fires {
			n++
		}
	}
	return n
}

// highRisk reports whether a risk assessment warns (high or critical).
func highRisk(r *Risk) bool { return r != nil && (r.Band == "high" || r.Band == "critical") }

// reasons appends one reason for every fact that fires at now, in no
// particular order, to rs (which has room for reasonCount of them). Their
// texts share one buffer.
func reasons(f Facts, now time.Time, rs []candidate) []candidate {
	var t texts
	t.b.Grow(160 * reasonCount(f)) // the usual text is shorter; a longer one grows it
	// The violations' one-file lists share one allocation.
	var files []string
	for _, v := range f.Violations {
		if v.File != "" {
			if files == nil {
				files = make([]string, 0, len(f.Violations))
			}
			files = append(files, v.File)
		}
		rs = append(rs, violationReason(&t, v, files))
	}
	if p := f.Pause; p != nil {
		text := "A person paused this session. Stop all work in this session until the brake is released."
		if r := strings.TrimSpace(p.Reason); r != "" {
			q1, q2, q3 := quoted(r)
			text = t.cat("A person paused this session: ", q1, q2, q3, ". Stop all work in this session until the brake is released.")
		}
		rs = append(rs, candidate{Reason: Reason{State: Blocked, Code: CodePaused, Text: text}, at: p.At, blocked: scopeAllSessionWork})
	}
	if f.HighRisk && f.Plan.Status != PlanApproved {
		rs = append(rs, candidate{Reason: Reason{State: Blocked, Code: CodePlanNotApproved, Ref: "plan", Text: planText(&t, f.Plan)}, at: f.Plan.ProposedAt, blocked: scopePlanBlocked, allowed: scopePlanAllowed})
	}
	if l := f.Lifecycle; l.Revising() {
		rs = append(rs, candidate{Reason: Reason{State: Blocked, Code: CodePlanRevising, Ref: "plan", Text: revisingText(l.State)}, at: l.Since, blocked: scopePlanBlocked, allowed: scopePlanAllowed})
	}
	for _, d := range f.Decisions {
		r := candidate{Reason: Reason{State: DecisionRequired, Code: CodeDecisionOpen, Ref: d.Ref}, at: d.OpenedAt, blocked: d.BlockedScope, allowed: d.AllowedScope}
		if _, expired := d.Expiry(now); expired {
			r.Code, r.Text = CodeDecisionExpired, expiredText(&t, d, now)
		} else {
			r.Text = t.cat(d.Ref, " is waiting on a person: ", d.Question)
		}
		rs = append(rs, r)
	}
	for _, p := range f.PermissionPrompts {
		r := candidate{Reason: Reason{State: DecisionRequired, Code: CodePermissionRequested, Ref: p.ID, Files: p.Paths}, at: p.OpenedAt, blocked: p.Paths}
		if p.Tool != "" {
			r.tool = t.cat(ScopeToolPrefix, p.Tool)
		}
		r.Text = permissionText(&t, p)
		rs = append(rs, r)
	}
	for _, m := range f.Remediations {
		if m.For != "" && standsFor(f, m.For) {
			continue // the fact's own REMEDIATE reason stands for it
		}
		r := candidate{Reason: Reason{State: ContinueWithWarning, Code: CodeRemediationAdvisory, Ref: m.ID, Files: m.Files}, at: m.CreatedAt}
		if m.Required {
			r.State, r.Code, r.Text = Remediate, CodeRemediationRequired, t.cat("Fix this, then report again: ", m.Instruction)
			r.allowed = m.Files
		} else {
			r.Text = t.cat("Advisory: ", m.Instruction)
		}
		rs = append(rs, r)
	}
	for _, d := range f.Deviations {
		rs = append(rs, deviationReason(&t, d))
	}
	for _, b := range f.Breaches {
		files := breachFiles(b)
		rs = append(rs, candidate{Reason: Reason{State: Remediate, Code: CodeContractViolated, Ref: b.ID, Text: breachText(&t, b), Files: files}, allowed: files, at: b.At})
	}
	if r := f.Risk; highRisk(r) {
		gate := r.Gate
		if gate == "" {
			gate = "a person's review"
		}
		rs = append(rs, candidate{Reason: Reason{State: ContinueWithWarning, Code: CodeRiskHigh, Text: t.cat("This change scores ", strconv.Itoa(r.Score), " of 100, ", r.Band, " risk. Before it merges it needs ", gate, ". Keep working.")}, at: r.At})
	}
	for _, c := range f.Collisions {
		open, agent, closing := "", "", ""
		if c.OtherAgent != "" {
			open, agent, closing = " (", c.OtherAgent, ")"
		}
		rs = append(rs, candidate{Reason: Reason{State: ContinueWithWarning, Code: CodeCollision, Ref: c.ID, Text: t.cat("Session ", c.OtherSession, open, agent, closing, " builds against ", c.Symbol,
			", which this session changed. Madebook is re-briefing it; you do not need to stop.")}, at: c.At})
	}
	return rs
}

// expiredText says that a gate expired unanswered, after how long, and
// that it still blocks: "DEC-003 expired unanswered after 4h: <question>
// Nothing on its blocked scope proceeds; a lead can still resolve it."
// How long is the mission's gate_ttl when it ran out; for a gate recorded
// expired under an earlier gate_ttl, how long it had been open then, to
// the minute.
func expiredText(t *texts, d Decision, now time.Time) string {
	after := d.TTL
	if d.TTL <= 0 || now.Before(d.OpenedAt.Add(d.TTL)) {
		after = d.ExpiredAt.Sub(d.OpenedAt)
		if after >= time.Minute {
			after = after.Truncate(time.Minute)
		}
	}
	start := t.b.Len()
	var buf [32]byte
	t.write(d.Ref, " expired unanswered after ")
	t.b.Write(AppendDuration(buf[:0], after))
	t.write(": ", d.Question)
	if q := d.Question; q != "" && !strings.ContainsAny(q[len(q)-1:], ".?!") {
		t.write(".")
	}
	t.write(" Nothing on its blocked scope proceeds; a lead can still resolve it.")
	return t.since(start)
}

// FormatDuration writes a duration as people write it and as Go's
// time.ParseDuration reads it back, without zero units: "4h", "1h30m",
// "45m", "2h30m15s"; "0s" for zero. It is how a mission's gate_ttl is
// shown.
func FormatDuration(d time.Duration) string {
	var buf [32]byte
	return string(AppendDuration(buf[:0], d))
}

// AppendDuration appends FormatDuration(d) to b. Fractions of a second
// are dropped.
func AppendDuration(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	secs := int64(d / time.Second)
	if secs == 0 {
		return append(b, "0s"...)
	}
	h, m, s := secs/3600, secs/60%60, secs%60
	if h > 0 {
		b = strconv.AppendInt(b, h, 10)
		b = append(b, 'h')
	}
	if m > 0 {
		b = strconv.AppendInt(b, m, 10)
		b = append(b, 'm')
	}
	if s > 0 {
		b = strconv.AppendInt(b, s, 10)
		b = append(b, 's')
	}
	return b
}

// violationReason is v's reason; files ends with v's file, when it has
// one, which the reason names.
func violationReason(t *texts, v Violation, files []string) candidate {
	// "<policy> was violated[ by <match>].[ Found in <file>.]", then the
	// state's instruction.
	by, in, dot := "", "", ""
	if v.Match != "" {
		by = " by "
	}
	if v.File != "" {
		in, dot = " Found in ", "."
	}
	start := t.b.Len()
	t.write(v.Policy, " was violated", by, v.Match, ".", in, v.File, dot)
	r := candidate{Reason: Reason{Ref: v.ID}, at: v.At}
	if v.File != "" {
		r.Files = files[len(files)-1 : len(files) : len(files)]
	}
	switch {
	case v.BlockMerge:
		r.State, r.Code = ContinueWithWarning, CodeBlockMerge
		t.write(" Keep working: the merge will not ship until the policy's conditions are met.")
	case v.Severity == SeverityCritical:
		r.State, r.Code = HardStop, CodeCriticalViolation
		t.write(" This is a critical control: stop, and do not work around it.")
		r.blocked = scopeAllWork
	case v.Remediates():
		r.State, r.Code = Remediate, CodeHighViolation
		t.write(" Fix it, then report the change again.")
		r.allowed = r.Files
	default:
		r.State, r.Code = ContinueWithWarning, CodePolicyWarning
		t.write(" This is a ", string(v.Severity), "-severity policy: keep working, and fix it before merge.")
	}
	r.Text = t.since(start)
	return r
}

func deviationReason(t *texts, d Deviation) candidate {
	r := candidate{Reason: Reason{Ref: d.ID, Files: d.Files}, at: d.At}
	if d.Enforceable() {
		r.State, r.Code = Remediate, CodeRuleDeviation
		r.Text = enforcedText(t, d)
		r.allowed = d.Files
		return r
	}
	r.State, r.Code = ContinueWithWarning, CodeRuleAdvisory
	r.Text = t.cat(d.Departure, " departs from this workspace's approach (", d.Chosen, ", inferred with ",
		strconv.Itoa(d.ConfidencePercent()), "% confidence — advisory).")
	return r
}

// enforcedText is the text of rule_deviation, naming the compliant
// alternative.
func enforcedText(t *texts, d Deviation) string {
	return t.cat(d.Departure, " departs from this workspace's approach. Use ", d.Chosen, " — chosen for ", d.Concern,
		" in ", strconv.Itoa(d.Support), " of ", strconv.Itoa(d.Total), " components.")
}

// standsFor reports whether the violation or deviation with the id is
// among the facts and fires REMEDIATE itself, so that its reason stands
// for the remediation it raised.
func standsFor(f Facts, id string) bool {
	for _, v := range f.Violations {
		if v.ID == id {
			return v.Remediates()
		}
	}
	for _, d := range f.Deviations {
		if d.ID == id {
			return d.Enforceable()
		}
	}
	return false
}

// The texts of plan_revising, one per revising lifecycle state.
const (
	architectureRevisingText = "The plan is being revised (" + LifecycleArchitectureRevising + "): make no code change until the revised plan is confirmed. You may read the repository and revise the plan."
	interruptingText         = "A requirement changed and the plan is being revised (" + LifecycleInterrupting + "): make no code change until the revised plan is confirmed. You may read the repository and revise the plan."
)

func revisingText(state string) string {
	if state == LifecycleInterrupting {
		return interruptingText
	}
	return architectureRevisingText
}

// permissionText says what a pending permission prompt asks, quoting its
// prompt, and that a person must answer it:
// "Permission prompt <id> asks to use <tool> on <paths>: "<prompt>". A
// person must answer it; until then, do not use <tool> on those paths."
func permissionText(t *texts, p PermissionPrompt) string {
	start := t.b.Len()
	t.write("Permission prompt ", p.ID)
	switch {
	case p.Tool != "" && len(p.Paths) > 0:
		t.write(" asks to use ", p.Tool, " on ")
		t.list(p.Paths)
	case p.Tool != "":
		t.write(" asks to use ", p.Tool)
	case len(p.Paths) > 0:
		t.write(" asks to touch ")
		t.list(p.Paths)
	default:
		t.write(" is waiting")
	}
	if q := strings.TrimSpace(p.Prompt); q != "" {
		q1, q2, q3 := quoted(q)
		t.write(": ", q1, q2, q3)
	}
	t.write(". A person must answer it; until then, do not ")
	those := " those paths."
	if len(p.Paths) == 1 {
		those = " that path."
	}
	switch {
	case p.Tool != "" && len(p.Paths) > 0:
		t.write("use ", p.Tool, " on", those)
	case p.Tool != "":
		t.write("use ", p.Tool, ".")
	case len(p.Paths) > 0:
		t.write("touch", those)
	default:
		t.write("do what it asks.")
	}
	return t.since(start)
}

func planText(t *texts, p Plan) string {
	switch p.Status {
	case PlanProposed:
		return "This mission is high-risk and its execution plan is waiting for a lead's approval. No code change is accepted until it is approved: read the repository or revise the plan."
	case PlanRejected:
		if note := strings.TrimSpace(p.Note); note != "" {
			q1, q2, q3 := quoted(note)
			return t.cat("This mission is high-risk and a lead rejected its execution plan: ", q1, q2, q3, ". Revise the plan and propose it again; no code change is accepted until one is approved.")
		}
		return "This mission is high-risk and a lead rejected its execution plan. Revise the plan and propose it again; no code change is accepted until one is approved."
	case PlanChangesRequested:
		q1, q2, q3 := quoted(strings.TrimSpace(p.Note))
		return t.cat("This mission is high-risk and a lead asked for changes to its execution plan: ", q1, q2, q3, ". Revise the plan as asked and propose it again; no code change is accepted until one is approved.")
	default:
		return "This mission is high-risk and has no approved execution plan. Propose one; no code change is accepted until a lead approves it."
	}
}

// quoted returns s quoted as strconv.Quote (fmt's %q) quotes it, in three
// parts, so that the usual case, printable ASCII with no quote or
// backslash, is s itself between quotes and costs nothing.
func quoted(s string) (string, string, string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", strconv.Quote(s), ""
		}
	}
	return `"`, s, `"`
}

func breachText(t *texts, b Breach) string {
	start := t.b.Len()
	switch b.Kind {
	case ForbidPath:
		t.write("The mission contract forbids changes to ", b.Value, "; this change touches ")
		t.list(b.Found)
		t.write(". Undo those changes.")
	case RequirePath:
		t.write("The mission contract requires a change to ", b.Value, "; this change has none. Make that change.")
	case ForbidDependency:
		t.write("The mission contract forbids the dependency ", b.Value, "; this change adds ")
		t.list(b.Found)
		t.write(". Remove it.")
	case MaxFilesChanged:
		t.write("The mission contract allows at most ", b.Value, " changed files; this change touches ", strconv.Itoa(b.Count), ". Narrow the change.")
	default:
		t.write("The mission contract clause ", string(b.Kind), " ", b.Value, " is broken by this change.")
	}
	return t.since(start)
}

func breachFiles(b Breach) []string {
	if b.Kind == ForbidPath {
		return b.Found
	}
	return nil
}
