package protocol

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Words are a reason's text, written out only when they are read.
//
// Decide does not build a reason's sentence: it notes which sentence it
// is and points at the fact it is about (an element of the caller's
// Facts: the violation, the gate, the prompt…), and String, Append and
// MarshalText write the sentence from that fact, word for word as the
// engine always worded it. Deciding is then cheap, and the words cost
// only where they are read: a brief encoded, the console's preview, a
// refusal.
//
// Words therefore read the facts Decide was given, which must not change
// while the Words may still be read (Madebook's facts are built for one
// brief, or cached and only read). Nothing else changes them: Words are
// a value, and no list of the brief is part of them. Two Words are == when
// they are the same sentence about the same fact; compare what they say
// with String.
//
// The zero Words read ContinueText, the reason of a session with nothing
// in its way. Words decoded from JSON, or made by Literal, read the
// string they were given.
type Words struct {
	// p points at the fact the words are about, as kind says
	// (*Violation, *Pause, *Decision, …), or at the first byte of a
	// string of n bytes: the words themselves (textLiteral) or the plan's
	// note, which Facts holds by value. An unsafe.Pointer is a pointer
	// the collector follows; it keeps Words, and so every reason, small:
	// one pointer and no interface.
	p    unsafe.Pointer
	n    uint32
	kind textKind
}

// longString marks n when p points at a whole string: one too long for n.
const longString = math.MaxUint32

// stringWords are Words of the kind whose string is s.
func stringWords(kind textKind, s string) Words {
	if uint64(len(s)) >= longString {
		return longWords(kind, s)
	}
	return Words{p: unsafe.Pointer(unsafe.StringData(s)), n: uint32(len(s)), kind: kind}
}

// longWords keeps s whole on the heap (apart from stringWords, so that
// only such a string is moved there).
func longWords(kind textKind, s string) Words {
	return Words{p: unsafe.Pointer(&s), n: longString, kind: kind}
}

// factWords are Words of the kind about the fact at p.
func factWords[F any](kind textKind, p *F) Words { return Words{p: unsafe.Pointer(p), kind: kind} }

// str is the string of Words made by stringWords.
func (t Words) str() string {
	if t.n == longString {
		return *(*string)(t.p)
	}
	return unsafe.String((*byte)(t.p), int(t.n))
}

// textKind says which sentence Words are, and so what p points at.
type textKind uint8

const (
	textContinue     textKind = iota // ContinueText (the zero Words)
	textLiteral                      // the string, as it is
	textViolation                    // a *Violation
	textPause                        // a *Pause
	textPlanRejected                 // the string is the lead's note
	textPlanChanges                  // the string is the lead's instruction
	textGateOpen                     // a *Decision, still open
	textGateTTL                      // a *Decision whose gate_ttl ran out
	textGateStamped                  // a *Decision recorded expired before its gate_ttl ran out
	textPermission                   // a *PermissionPrompt
	textRemediation                  // a *Remediation
	textDeviation                    // a *Deviation
	textBreach                       // a *Breach
	textRisk                         // a *Risk
	textCollision                    // a *Collision
)

// Literal are Words that read s: a reason's words as they were decoded,
// or given by a caller that has them as a string.
func Literal(s string) Words { return stringWords(textLiteral, s) }

// String returns the words.
func (t Words) String() string {
	switch t.kind {
	case textContinue:
		return ContinueText
	case textLiteral:
		return t.str()
	}
	var buf [256]byte
	return string(t.Append(buf[:0]))
}

// Append appends the words to b.
func (t Words) Append(b []byte) []byte {
	switch t.kind {
	case textContinue:
		return append(b, ContinueText...)
	case textLiteral:
		return append(b, t.str()...)
	case textViolation:
		return appendViolation(b, (*Violation)(t.p))
	case textPause:
		return appendPause(b, (*Pause)(t.p))
	case textPlanRejected:
		if note := strings.TrimSpace(t.str()); note != "" {
			b = append(b, "This mission is high-risk and a lead rejected its execution plan: "...)
			b = appendQuoted(b, note)
			return append(b, ". Revise the plan and propose it again; no code change is accepted until one is approved."...)
		}
		return append(b, planRejectedText...)
	case textPlanChanges:
		b = append(b, "This mission is high-risk and a lead asked for changes to its execution plan: "...)
		b = appendQuoted(b, strings.TrimSpace(t.str()))
		return append(b, ". Revise the plan as asked and propose it again; no code change is accepted until one is approved."...)
	case textGateOpen:
		d := (*Decision)(t.p)
		b = append(b, d.Ref...)
		b = append(b, " is waiting on a person: "...)
		return append(b, d.Question...)
	case textGateTTL:
		d := (*Decision)(t.p)
		return appendExpired(b, d, d.TTL)
	case textGateStamped:
		d := (*Decision)(t.p)
		after := d.ExpiredAt.Sub(d.OpenedAt)
		if after >= time.Minute {
			after = after.Truncate(time.Minute)
		}
		return appendExpired(b, d, after)
	case textPermission:
		return appendPermission(b, (*PermissionPrompt)(t.p))
	case textRemediation:
		m := (*Remediation)(t.p)
		if m.Required {
			b = append(b, "Fix this, then report again: "...)
		} else {
			b = append(b, "Advisory: "...)
		}
		return append(b, m.Instruction...)
	case textDeviation:
		d := (*Deviation)(t.p)
		if d.Enforceable() {
			return appendEnforced(b, d)
		}
		b = append(b, d.Departure...)
		b = append(b, " departs from this workspace's approach ("...)
		b = append(b, d.Chosen...)
		b = append(b, ", inferred with "...)
		b = strconv.AppendInt(b, int64(d.ConfidencePercent()), 10)
		return append(b, "% confidence — advisory)."...)
	case textBreach:
		return appendBreach(b, (*Breach)(t.p))
	case textRisk:
		r := (*Risk)(t.p)
		gate := r.Gate
		if gate == "" {
			gate = "a person's review"
		}
		b = append(b, "This change scores "...)
		b = strconv.AppendInt(b, int64(r.Score), 10)
		b = append(b, " of 100, "...)
		b = append(b, r.Band...)
		b = append(b, " risk. Before it merges it needs "...)
		b = append(b, gate...)
		return append(b, ". Keep working."...)
	case textCollision:
		c := (*Collision)(t.p)
		b = append(b, "Session "...)
		b = append(b, c.OtherSession...)
		if c.OtherAgent != "" {
			b = append(b, " ("...)
			b = append(b, c.OtherAgent...)
			b = append(b, ')')
		}
		b = append(b, " builds against "...)
		b = append(b, c.Symbol...)
		return append(b, ", which this session changed. Madebook is re-briefing it; you do not need to stop."...)
	}
	return b
}

// MarshalText encodes the words: a reason's "text" and a brief's
// "reason" are JSON strings, as they always were.
func (t Words) MarshalText() ([]byte, error) {
	switch t.kind {
	case textContinue:
		return []byte(ContinueText), nil
	case textLiteral:
		return []byte(t.str()), nil
	}
	var buf [256]byte
	return bytes.Clone(t.Append(buf[:0])), nil
}

// UnmarshalText decodes words: the Text reads them as they are.
func (t *Words) UnmarshalText(b []byte) error {
	*t = Literal(string(b))
	return nil
}

// compareTexts orders two texts by their words, writing them out only to
// compare them.
func compareTexts(a, b Words) int {
	var ba, bb [256]byte
	return bytes.Compare(a.Append(ba[:0]), b.Append(bb[:0]))
}

// The texts that say the same whatever the fact.
const (
	pauseText                = "A person paused this session. Stop all work in this session until the brake is released."
	planNoneText             = "This mission is high-risk and has no approved execution plan. Propose one; no code change is accepted until a lead approves it."
	planProposedText         = "This mission is high-risk and its execution plan is waiting for a lead's approval. No code change is accepted until it is approved: read the repository or revise the plan."
	planRejectedText         = "This mission is high-risk and a lead rejected its execution plan. Revise the plan and propose it again; no code change is accepted until one is approved."
	architectureRevisingText = "The plan is being revised (" + LifecycleArchitectureRevising + "): make no code change until the revised plan is confirmed. You may read the repository and revise the plan."
	interruptingText         = "A requirement changed and the plan is being revised (" + LifecycleInterrupting + "): make no code change until the revised plan is confirmed. You may read the repository and revise the plan."
)

// planText is the Text of plan_not_approved for the plan p.
func planText(p Plan) Words {
	switch p.Status {
	case PlanProposed:
		return Literal(planProposedText)
	case PlanRejected:
		return stringWords(textPlanRejected, p.Note)
	case PlanChangesRequested:
		return stringWords(textPlanChanges, p.Note)
	default:
		return Literal(planNoneText)
	}
}

// revisingText is the Text of plan_revising in the lifecycle state.
func revisingText(state string) Words {
	if state == LifecycleInterrupting {
		return Literal(interruptingText)
	}
	return Literal(architectureRevisingText)
}

// appendViolation: "<policy> was violated[ by <match>].[ Found in
// <file>.]", then the state's instruction; a breach of a blocked scope
// is worded by appendScopeBreach.
func appendViolation(b []byte, v *Violation) []byte {
	if v.Breach != nil {
		return appendScopeBreach(b, v.Breach)
	}
	b = append(b, v.Policy...)
	b = append(b, " was violated"...)
	if v.Match != "" {
		b = append(b, " by "...)
		b = append(b, v.Match...)
	}
	b = append(b, '.')
	if v.File != "" {
		b = append(b, " Found in "...)
		b = append(b, v.File...)
		b = append(b, '.')
	}
	switch {
	case v.BlockMerge:
		return append(b, " Keep working: the merge will not ship until the policy's conditions are met."...)
	case v.Severity == SeverityCritical:
		return append(b, " This is a critical control: stop, and do not work around it."...)
	case v.Remediates():
		return append(b, " Fix it, then report the change again."...)
	default:
		b = append(b, " This is a "...)
		b = append(b, v.Severity...)
		return append(b, "-severity policy: keep working, and fix it before merge."...)
	}
}

// appendScopeBreach: "<call> wrote into the blocked scope <scope> before
// its decision was made: <files>.", or, for an ungoverned call, "<call>
// ran without a check: no hook asked Madebook before it ran (<files>).",
// then the critical instruction.
func appendScopeBreach(b []byte, sb *ScopeBreach) []byte {
	b = append(b, sb.Call...)
	if sb.Ungoverned {
		// "<call> ran without a check: no hook asked Madebook before it ran
		// (<files>)."
		b = append(b, " ran without a check: no hook asked Madebook before it ran"...)
		if len(sb.Files) > 0 {
			b = append(b, " ("...)
			b = appendList(b, sb.Files)
			b = append(b, ')')
		}
		return append(b, ". This is a critical control: stop, and do not work around it."...)
	}
	if len(sb.Scope) == 0 {
		b = append(b, " wrote into a blocked scope"...)
	} else {
		b = append(b, " wrote into the blocked scope "...)
		b = appendList(b, sb.Scope)
	}
	b = append(b, " before its decision was made"...)
	if len(sb.Files) > 0 {
		b = append(b, ": "...)
		b = appendList(b, sb.Files)
	}
	return append(b, ". This is a critical control: stop, and do not work around it."...)
}

func appendPause(b []byte, p *Pause) []byte {
	r := strings.TrimSpace(p.Reason)
	if r == "" {
		return append(b, pauseText...)
	}
	b = append(b, "A person paused this session: "...)
	b = appendQuoted(b, r)
	return append(b, ". Stop all work in this session until the brake is released."...)
}

// appendExpired says that a gate expired unanswered, after how long, and
// that it still blocks: "DEC-003 expired unanswered after 4h: <question>
// Nothing on its blocked scope proceeds; a lead can still resolve it."
// How long is the mission's gate_ttl when it ran out; for a gate recorded
// expired under an earlier gate_ttl, how long it had been open then, to
// the minute.
func appendExpired(b []byte, d *Decision, after time.Duration) []byte {
	b = append(b, d.Ref...)
	b = append(b, " expired unanswered after "...)
	b = AppendDuration(b, after)
	b = append(b, ": "...)
	b = append(b, d.Question...)
	if q := d.Question; q != "" && !strings.ContainsAny(q[len(q)-1:], ".?!") {
		b = append(b, '.')
	}
	return append(b, " Nothing on its blocked scope proceeds; a lead can still resolve it."...)
}

// appendPermission says what a pending permission prompt asks, quoting
// its prompt, and that a person must answer it: "Permission prompt <id>
// asks to use <tool> on <paths>: "<prompt>". A person must answer it;
// until then, do not use <tool> on those paths."
func appendPermission(b []byte, p *PermissionPrompt) []byte {
	b = append(b, "Permission prompt "...)
	b = append(b, p.ID...)
	switch {
	case p.Tool != "" && len(p.Paths) > 0:
		b = append(b, " asks to use "...)
		b = append(b, p.Tool...)
		b = append(b, " on "...)
		b = appendList(b, p.Paths)
	case p.Tool != "":
		b = append(b, " asks to use "...)
		b = append(b, p.Tool...)
	case len(p.Paths) > 0:
		b = append(b, " asks to touch "...)
		b = appendList(b, p.Paths)
	default:
		b = append(b, " is waiting"...)
	}
	if q := strings.TrimSpace(p.Prompt); q != "" {
		b = append(b, ": "...)
		b = appendQuoted(b, q)
	}
	b = append(b, ". A person must answer it; until then, do not "...)
	those := " those paths."
	if len(p.Paths) == 1 {
		those = " that path."
	}
	switch {
	case p.Tool != "" && len(p.Paths) > 0:
		b = append(b, "use "...)
		b = append(b, p.Tool...)
		b = append(b, " on"...)
		return append(b, those...)
	case p.Tool != "":
		b = append(b, "use "...)
		b = append(b, p.Tool...)
		return append(b, '.')
	case len(p.Paths) > 0:
		b = append(b, "touch"...)
		return append(b, those...)
	default:
		return append(b, "do what it asks."...)
	}
}

// appendEnforced is the text of rule_deviation, naming the compliant
// alternative.
func appendEnforced(b []byte, d *Deviation) []byte {
	b = append(b, d.Departure...)
	b = append(b, " departs from this workspace's approach. Use "...)
	b = append(b, d.Chosen...)
	b = append(b, " — chosen for "...)
	b = append(b, d.Concern...)
	b = append(b, " in "...)
	b = strconv.AppendInt(b, int64(d.Support), 10)
	b = append(b, " of "...)
	b = strconv.AppendInt(b, int64(d.Total), 10)
	return append(b, " components."...)
}

func appendBreach(b []byte, c *Breach) []byte {
	switch c.Kind {
	case ForbidPath:
		b = append(b, "The mission contract forbids changes to "...)
		b = append(b, c.Value...)
		b = append(b, "; this change touches "...)
		b = appendList(b, c.Found)
		return append(b, ". Undo those changes."...)
	case RequirePath:
		b = append(b, "The mission contract requires a change to "...)
		b = append(b, c.Value...)
		return append(b, "; this change has none. Make that change."...)
	case ForbidDependency:
		b = append(b, "The mission contract forbids the dependency "...)
		b = append(b, c.Value...)
		b = append(b, "; this change adds "...)
		b = appendList(b, c.Found)
		return append(b, ". Remove it."...)
	case MaxFilesChanged:
		b = append(b, "The mission contract allows at most "...)
		b = append(b, c.Value...)
		b = append(b, " changed files; this change touches "...)
		b = strconv.AppendInt(b, int64(c.Count), 10)
		return append(b, ". Narrow the change."...)
	default:
		b = append(b, "The mission contract clause "...)
		b = append(b, c.Kind...)
		b = append(b, ' ')
		b = append(b, c.Value...)
		return append(b, " is broken by this change."...)
	}
}

// appendList appends the entries separated by commas.
func appendList(b []byte, entries []string) []byte {
	for i, e := range entries {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, e...)
	}
	return b
}

// appendQuoted appends s quoted as strconv.Quote (fmt's %q) quotes it;
// the usual case, printable ASCII with no quote or backslash, is s itself
// between quotes.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
