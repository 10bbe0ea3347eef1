package protocol

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
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
	// Text is the reason's words, written out when read (see Words).
	Text Words `json:"text"`
	// Files are the files the reason is about, when it names any: the
	// fact's own list (a violation's one file, a prompt's paths, a
	// remediation's or a deviation's files, a forbidden path's finds),
	// only read.
	Files []string `json:"files,omitempty"`
}

// Brief is what the engine decides for one session at one moment.
type Brief struct {
	NextAction State `json:"next_action"`
	// Reason is the first reason at NextAction, as one sentence:
	// ContinueText when nothing is in the agent's way.
	Reason Words `json:"reason"`
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
// It is pure and deterministic: the same facts give the same brief. It
// does not change the facts, and its texts read them (see Words).
//
// Deciding is sorting small keys: each reason that fires is a key on the
// stack (its state, when its fact began, and where the fact is), put in
// order; only then are the brief's reasons written, in order, into one
// slice, and its scopes into one more. No text is written: a reason's
// Words point at its fact, and its files are its fact's.
func Decide(f Facts, now time.Time) Brief {
	b := Brief{
		NextAction:   Continue,
		Reasons:      []Reason{},
		Also:         []Reason{},
		BlockedScope: []string{},
		AllowedScope: []string{},
		GeneratedAt:  now.UTC(),
	}
	switch n := reasonCount(&f); {
	case n == 0:
		return b
	case n <= 4:
		var buf [4]key
		var ord [4]int32
		decide(&b, &f, keys(&f, now, buf[:0]), ord[:])
	case n <= maxStack:
		var buf [maxStack]key
		var ord [maxStack]int32
		decide(&b, &f, keys(&f, now, buf[:0]), ord[:])
	default:
		decide(&b, &f, keys(&f, now, make([]key, 0, n)), make([]int32, n))
	}
	return b
}

// maxStack is the most reasons decided on the stack, and maxInsertion
// the most of one state sorted by insertion.
const (
	maxStack     = 32
	maxInsertion = 32
)

// key is a reason while it is decided: what orders it, and where its fact
// is. The reason itself is written only once the order is known. A key
// holds no pointer, so sorting moves plain bytes: the collector's write
// barrier never runs on a key.
type key struct {
	// sec and nsec are when its fact began (Unix time): the older first,
	// within a state.
	sec  int64
	nsec int32
	// i is the fact's index in its list (Violations, Decisions, …).
	i int32
	// files is how many files the reason names (its scopes may name
	// them).
	files int32
	state uint8 // a State
	code  codeIndex
	kind  textKind
}

// codeIndex is a Code as a small number: the keys carry it, and codes
// spells it.
type codeIndex uint8

const (
	ciCriticalViolation codeIndex = iota
	ciPaused
	ciPlanNotApproved
	ciPlanRevising
	ciDecisionOpen
	ciDecisionExpired
	ciPermissionRequested
	ciRemediationRequired
	ciHighViolation
	ciRuleDeviation
	ciContractViolated
	ciRemediationAdvisory
	ciRiskHigh
	ciCollision
	ciBlockMerge
	ciRuleAdvisory
	ciPolicyWarning
)

var codes = [...]Code{
	ciCriticalViolation:   CodeCriticalViolation,
	ciPaused:              CodePaused,
	ciPlanNotApproved:     CodePlanNotApproved,
	ciPlanRevising:        CodePlanRevising,
	ciDecisionOpen:        CodeDecisionOpen,
	ciDecisionExpired:     CodeDecisionExpired,
	ciPermissionRequested: CodePermissionRequested,
	ciRemediationRequired: CodeRemediationRequired,
	ciHighViolation:       CodeHighViolation,
	ciRuleDeviation:       CodeRuleDeviation,
	ciContractViolated:    CodeContractViolated,
	ciRemediationAdvisory: CodeRemediationAdvisory,
	ciRiskHigh:            CodeRiskHigh,
	ciCollision:           CodeCollision,
	ciBlockMerge:          CodeBlockMerge,
	ciRuleAdvisory:        CodeRuleAdvisory,
	ciPolicyWarning:       CodePolicyWarning,
}

// reasonCount is how many reasons the facts can give at most: one per
// fact, plus the pause, the plan, the lifecycle and the risk when they
// fire.
func reasonCount(f *Facts) int {
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

// keys writes the key of every reason that fires at now, in the facts'
// order, into ks (which has room for reasonCount of them), and returns
// them.
func keys(f *Facts, now time.Time, ks []key) []key {
	n := 0
	ks = ks[:cap(ks)]
	add := func(state State, code codeIndex, kind textKind, at time.Time, i, files int) {
		k := &ks[n]
		k.sec, k.nsec, k.i, k.files = at.Unix(), int32(at.Nanosecond()), int32(i), int32(files)
		k.state, k.code, k.kind = uint8(state), code, kind
		n++
	}
	for i := range f.Violations {
		v := &f.Violations[i]
		files := 0
		switch {
		case v.Breach != nil:
			files = len(v.Breach.Files)
		case v.File != "":
			files = 1
		}
		state, code := violationState(v)
		add(state, code, textViolation, v.At, i, files)
	}
	if p := f.Pause; p != nil {
		add(Blocked, ciPaused, textPause, p.At, 0, 0)
	}
	if f.HighRisk && f.Plan.Status != PlanApproved {
		add(Blocked, ciPlanNotApproved, textLiteral, f.Plan.ProposedAt, 0, 0)
	}
	if l := &f.Lifecycle; l.Revising() {
		add(Blocked, ciPlanRevising, textLiteral, l.Since, 0, 0)
	}
	for i := range f.Decisions {
		d := &f.Decisions[i]
		// GateExpiry's rule, telling which way the gate expired.
		code, kind := ciDecisionOpen, textGateOpen
		switch {
		case d.TTL > 0 && !now.Before(d.OpenedAt.Add(d.TTL)):
			code, kind = ciDecisionExpired, textGateTTL
		case !d.ExpiredAt.IsZero():
			code, kind = ciDecisionExpired, textGateStamped
		}
		add(DecisionRequired, code, kind, d.OpenedAt, i, 0)
	}
	for i := range f.PermissionPrompts {
		p := &f.PermissionPrompts[i]
		add(DecisionRequired, ciPermissionRequested, textPermission, p.OpenedAt, i, len(p.Paths))
	}
	for i := range f.Remediations {
		m := &f.Remediations[i]
		if m.For != "" && standsFor(f, m.For) {
			continue // the fact's own REMEDIATE reason stands for it
		}
		state, code := ContinueWithWarning, ciRemediationAdvisory
		if m.Required {
			state, code = Remediate, ciRemediationRequired
		}
		add(state, code, textRemediation, m.CreatedAt, i, len(m.Files))
	}
	for i := range f.Deviations {
		d := &f.Deviations[i]
		state, code := ContinueWithWarning, ciRuleAdvisory
		if d.Enforceable() {
			state, code = Remediate, ciRuleDeviation
		}
		add(state, code, textDeviation, d.At, i, len(d.Files))
	}
	for i := range f.Breaches {
		c := &f.Breaches[i]
		add(Remediate, ciContractViolated, textBreach, c.At, i, len(breachFiles(c)))
	}
	if r := f.Risk; highRisk(r) {
		add(ContinueWithWarning, ciRiskHigh, textRisk, r.At, 0, 0)
	}
	for i := range f.Collisions {
		c := &f.Collisions[i]
		add(ContinueWithWarning, ciCollision, textCollision, c.At, i, 0)
	}
	return ks[:n]
}

// violationState is the state and code a violation fires.
func violationState(v *Violation) (State, codeIndex) {
	switch {
	case v.Breach != nil:
		return HardStop, ciCriticalViolation
	case v.BlockMerge:
		return ContinueWithWarning, ciBlockMerge
	case v.Severity == SeverityCritical:
		return HardStop, ciCriticalViolation
	case v.Remediates():
		return Remediate, ciHighViolation
	default:
		return ContinueWithWarning, ciPolicyWarning
	}
}

// standsFor reports whether the violation or deviation with the id is
// among the facts and fires REMEDIATE itself, so that its reason stands
// for the remediation it raised.
func standsFor(f *Facts, id string) bool {
	for i := range f.Violations {
		if v := &f.Violations[i]; v.ID == id {
			return v.Remediates()
		}
	}
	for i := range f.Deviations {
		if d := &f.Deviations[i]; d.ID == id {
			return d.Enforceable()
		}
	}
	return false
}

func breachFiles(b *Breach) []string {
	if b.Kind == ForbidPath {
		return b.Found
	}
	return nil
}

// reason writes the reason k into r: its ref, its Words pointing at its
// fact, and its files, its fact's own list (or the one file a violation
// names).
func (f *Facts) reason(k *key, r *Reason) {
	r.State, r.Code = State(k.state), codes[k.code]
	switch k.code {
	case ciCriticalViolation, ciHighViolation, ciBlockMerge, ciPolicyWarning:
		v := &f.Violations[k.i]
		r.Ref, r.Text = v.ID, factWords(textViolation, v)
		switch {
		case v.Breach != nil:
			r.Files = v.Breach.Files
		case v.File != "":
			r.Files = unsafe.Slice(&v.File, 1)
		}
	case ciPaused:
		r.Text = factWords(textPause, f.Pause)
	case ciPlanNotApproved:
		r.Ref, r.Text = "plan", planText(f.Plan)
	case ciPlanRevising:
		r.Ref, r.Text = "plan", revisingText(f.Lifecycle.State)
	case ciDecisionOpen, ciDecisionExpired:
		d := &f.Decisions[k.i]
		r.Ref, r.Text = d.Ref, factWords(k.kind, d)
	case ciPermissionRequested:
		p := &f.PermissionPrompts[k.i]
		r.Ref, r.Text, r.Files = p.ID, factWords(textPermission, p), p.Paths
	case ciRemediationRequired, ciRemediationAdvisory:
		m := &f.Remediations[k.i]
		r.Ref, r.Text, r.Files = m.ID, factWords(textRemediation, m), m.Files
	case ciRuleDeviation, ciRuleAdvisory:
		d := &f.Deviations[k.i]
		r.Ref, r.Text, r.Files = d.ID, factWords(textDeviation, d), d.Files
	case ciContractViolated:
		c := &f.Breaches[k.i]
		r.Ref, r.Text, r.Files = c.ID, factWords(textBreach, c), breachFiles(c)
	case ciRiskHigh:
		r.Text = factWords(textRisk, f.Risk)
	case ciCollision:
		c := &f.Collisions[k.i]
		r.Ref, r.Text = c.ID, factWords(textCollision, c)
	}
}

// ref is the ref of the reason k.
func (f *Facts) ref(k *key) string {
	var r Reason
	f.reason(k, &r)
	return r.Ref
}

// text is the Words of the reason k.
func (f *Facts) text(k *key) Words {
	var r Reason
	f.reason(k, &r)
	return r.Text
}

// compareKeys orders reasons most severe state first, then oldest, then
// by ref, then by code and text so that the order is total. The texts
// are written out only when everything else ties.
func compareKeys(f *Facts, a, b *key) int {
	if a.state != b.state {
		return int(b.state) - int(a.state)
	}
	if a.sec != b.sec {
		if a.sec < b.sec {
			return -1
		}
		return 1
	}
	if a.nsec != b.nsec {
		return int(a.nsec - b.nsec)
	}
	if c := strings.Compare(f.ref(a), f.ref(b)); c != 0 {
		return c
	}
	if a.code != b.code {
		return strings.Compare(string(codes[a.code]), string(codes[b.code]))
	}
	return compareTexts(f.text(a), f.text(b))
}

// decide fills in b from the keys of the reasons that fired (at least
// one): ordered by compareKeys, stably, the most severe state's are b's
// reasons and scopes, the others b.Also. ord has room for an index per
// key.
func decide(b *Brief, f *Facts, ks []key, ord []int32) {
	// By state first, counting: each key's index goes straight to its
	// state's place, most severe first, in the facts' order.
	var at [HardStop + 2]int
	for i := range ks {
		at[HardStop-State(ks[i].state)+1]++
	}
	for s := 1; s < len(at); s++ {
		at[s] += at[s-1]
	}
	ord = ord[:len(ks)]
	for i := range ks {
		s := HardStop - State(ks[i].state)
		ord[at[s]] = int32(i)
		at[s]++
	}
	// Then each state's keys by age, ref, code and text: a few, mostly in
	// order already, by insertion; many by a stable sort.
	from := 0
	for s := range HardStop + 1 {
		bucket := ord[from:at[s]]
		from = at[s]
		if len(bucket) <= maxInsertion {
			for i := 1; i < len(bucket); i++ {
				for j := i; j > 0; j-- {
					a, b := &ks[bucket[j]], &ks[bucket[j-1]]
					// The older first; compareKeys only when as old.
					if a.sec > b.sec || a.sec == b.sec && (a.nsec > b.nsec || a.nsec == b.nsec && compareKeys(f, a, b) >= 0) {
						break
					}
					bucket[j], bucket[j-1] = bucket[j-1], bucket[j]
				}
			}
		} else {
			slices.SortStableFunc(bucket, func(x, y int32) int { return compareKeys(f, &ks[x], &ks[y]) })
		}
	}
	top := ks[ord[0]].state
	n := 0
	for n < len(ord) && ks[ord[n]].state == top {
		n++
	}
	rs := make([]Reason, len(ks))
	for i, o := range ord {
		f.reason(&ks[o], &rs[i])
	}
	b.NextAction = State(top)
	b.Reason = rs[0].Text
	b.Reasons = rs[:n:n]
	b.Also = rs[n:len(rs):len(rs)]
	if nb, na, tools := scopeRoom(f, ks, ord[:n]); nb+na > 0 {
		// Both lists in one allocation: blocked the front of it, allowed
		// the back.
		both := make([]string, nb+na)
		b.BlockedScope, b.AllowedScope = scopes(f, ks, ord[:n], rs[:n], both[:0:nb], both[nb:nb:nb+na], tools)
	}
}

// scopeRoom is how many entries the scopes of the reasons ks[i] for i in
// top can hold at most, blocked and allowed, and how many bytes their
// tools' scope entries ("tool:Bash") take.
func scopeRoom(f *Facts, ks []key, top []int32) (nb, na, tools int) {
	for _, i := range top {
		k := &ks[i]
		blocked, allowed, own := fixedScopes(f, k)
		nb += len(blocked)
		na += len(allowed)
		switch own {
		case ownBlocked:
			nb += int(k.files)
			if tool := f.PermissionPrompts[k.i].Tool; tool != "" {
				nb++
				tools += len(ScopeToolPrefix) + len(tool)
			}
		case ownAllowed:
			na += int(k.files)
		}
	}
	return nb, na, tools
}

// owned says which scope a reason's own files are: a permission prompt
// blocks its paths (and its tool), and a REMEDIATE reason allows its
// files.
type owned uint8

const (
	ownNone owned = iota
	ownBlocked
	ownAllowed
)

// fixedScopes are the scope lists the reason k names besides its own
// files, and which scope its files are.
func fixedScopes(f *Facts, k *key) (blocked, allowed []string, own owned) {
	switch k.code {
	case ciCriticalViolation:
		return scopeAllWork, nil, ownNone
	case ciPaused:
		return scopeAllSessionWork, nil, ownNone
	case ciPlanNotApproved, ciPlanRevising:
		return scopePlanBlocked, scopePlanAllowed, ownNone
	case ciDecisionOpen, ciDecisionExpired:
		d := &f.Decisions[k.i]
		return d.BlockedScope, d.AllowedScope, ownNone
	case ciPermissionRequested:
		return nil, nil, ownBlocked
	case ciRemediationRequired, ciHighViolation, ciRuleDeviation, ciContractViolated:
		return nil, nil, ownAllowed
	}
	return nil, nil, ownNone
}

// scopes merges the scope lists of the reasons ks[i] for i in top (those
// at the chosen state, rs their reasons) into blocked and allowed, which
// have room for every entry. What any reason blocks is never also allowed, and a reason
// that blocks all work leaves nothing allowed. A permission prompt's tool
// comes before its paths; the tools' entries share one string of tools
// bytes.
func scopes(f *Facts, ks []key, top []int32, rs []Reason, blocked, allowed []string, tools int) ([]string, []string) {
	var names strings.Builder
	names.Grow(tools)
	all := false
	for i, o := range top {
		k := &ks[o]
		list, _, own := fixedScopes(f, k)
		if own == ownBlocked {
			if tool := f.PermissionPrompts[k.i].Tool; tool != "" {
				start := names.Len()
				names.WriteString(ScopeToolPrefix)
				names.WriteString(tool)
				blocked = appendNew(blocked, names.String()[start:])
			}
			list = rs[i].Files
		}
		for _, s := range list {
			if s == ScopeAllWork || s == ScopeAllSessionWork {
				all = true
			}
			blocked = appendNew(blocked, s)
		}
	}
	if all {
		return blocked, allowed
	}
	for i, o := range top {
		_, list, own := fixedScopes(f, &ks[o])
		if own == ownAllowed {
			list = rs[i].Files
		}
		for _, s := range list {
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
