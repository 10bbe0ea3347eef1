package protocol_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/protocol"
)

// textCase is one fact alone and the exact words of its reason.
type textCase struct {
	name  string
	facts protocol.Facts
	want  string
}

// textCases are every kind of reason text, and every variant of each
// (what is optional in the fact, what is quoted), with the words the
// engine gave them when it wrote every text out as it decided.
func textCases() []textCase {
	vio := func(sev protocol.Severity, blockMerge bool, match, file string) protocol.Facts {
		return protocol.Facts{Violations: []protocol.Violation{{ID: "VIO-1", Policy: "Secrets in source", Severity: sev,
			BlockMerge: blockMerge, Match: match, File: file, At: at(1)}}}
	}
	pause := func(reason string) protocol.Facts {
		return protocol.Facts{Pause: &protocol.Pause{Reason: reason, By: "ana", At: at(1)}}
	}
	plan := func(s protocol.PlanStatus, note string) protocol.Facts {
		return protocol.Facts{HighRisk: true, Plan: protocol.Plan{Status: s, Note: note, ProposedAt: at(2)}}
	}
	lifecycle := func(state string) protocol.Facts {
		return protocol.Facts{Lifecycle: protocol.Lifecycle{State: state, Since: at(3)}}
	}
	gate := func(question string, opened int, ttl time.Duration, stamped time.Time) protocol.Facts {
		return protocol.Facts{Decisions: []protocol.Decision{{Ref: "DEC-7", Question: question, BlockedScope: []string{"db"},
			OpenedAt: at(opened), TTL: ttl, ExpiredAt: stamped}}}
	}
	perm := func(tool, question string, paths ...string) protocol.Facts {
		return protocol.Facts{PermissionPrompts: []protocol.PermissionPrompt{{ID: "PRM-7", Prompt: question, Tool: tool,
			Paths: paths, OpenedAt: at(4)}}}
	}
	rem := func(required bool, instruction string) protocol.Facts {
		return protocol.Facts{Remediations: []protocol.Remediation{{ID: "REM-7", Required: required, Instruction: instruction,
			Files: []string{"a.go"}, CreatedAt: at(5)}}}
	}
	dev := func(support, total int, enforced bool) protocol.Facts {
		return protocol.Facts{Deviations: []protocol.Deviation{{ID: "DEV-7", Departure: "moment", Chosen: "date-fns",
			Concern: "dates", Support: support, Total: total, Enforced: enforced, Files: []string{"d.ts"}, At: at(6)}}}
	}
	breach := func(kind protocol.ClauseKind, value string, count int, found ...string) protocol.Facts {
		return protocol.Facts{Breaches: []protocol.Breach{{ID: "CL-7", Kind: kind, Value: value, Found: found, Count: count, At: at(7)}}}
	}
	risk := func(score int, band, gate string) protocol.Facts {
		return protocol.Facts{Risk: &protocol.Risk{Score: score, Band: band, Gate: gate, At: at(8)}}
	}
	coll := func(agent string) protocol.Facts {
		return protocol.Facts{Collisions: []protocol.Collision{{ID: "COL-7", Symbol: "billing.Charge", OtherSession: "S-77",
			OtherAgent: agent, At: at(9)}}}
	}
	return []textCase{
		{"a critical violation with a match and a file", vio(protocol.SeverityCritical, false, "AWS_SECRET_ACCESS_KEY", "config/deploy.sh"),
			"Secrets in source was violated by AWS_SECRET_ACCESS_KEY. Found in config/deploy.sh. This is a critical control: stop, and do not work around it."},
		{"a critical violation with neither", vio(protocol.SeverityCritical, false, "", ""),
			"Secrets in source was violated. This is a critical control: stop, and do not work around it."},
		{"a breach of a blocked scope", protocol.Facts{Violations: []protocol.Violation{{ID: "VIO-1", Policy: "Blocked scope breached",
			Severity: protocol.SeverityCritical, Match: "Write", File: "db/x.sql", At: at(1),
			Breach: &protocol.ScopeBreach{Call: "Write", Scope: []string{"db", "tool:Write"}, Files: []string{"db/x.sql"}}}}},
			"Write wrote into the blocked scope db, tool:Write before its decision was made: db/x.sql. This is a critical control: stop, and do not work around it."},
		{"a breach of a blocked scope no gate named", protocol.Facts{Violations: []protocol.Violation{{ID: "VIO-1",
			Policy: "Blocked scope breached", Severity: protocol.SeverityCritical, Match: "Bash", File: "db/x.sql", At: at(1),
			Breach: &protocol.ScopeBreach{Call: "Bash", Files: []string{"db/x.sql"}}}}},
			"Bash wrote into a blocked scope before its decision was made: db/x.sql. This is a critical control: stop, and do not work around it."},
		{"a high violation with a match only", vio(protocol.SeverityHigh, false, "fmt.Sprintf(\"SELECT", ""),
			"Secrets in source was violated by fmt.Sprintf(\"SELECT. Fix it, then report the change again."},
		{"a high violation with a file only", vio(protocol.SeverityHigh, false, "", "db/report.go"),
			"Secrets in source was violated. Found in db/report.go. Fix it, then report the change again."},
		{"a block_merge violation", vio(protocol.SeverityCritical, true, "GPL-3.0", "go.mod"),
			"Secrets in source was violated by GPL-3.0. Found in go.mod. Keep working: the merge will not ship until the policy's conditions are met."},
		{"a medium violation", vio(protocol.SeverityMedium, false, "TODO", "web/app.go"),
			"Secrets in source was violated by TODO. Found in web/app.go. This is a medium-severity policy: keep working, and fix it before merge."},
		{"a low violation", vio(protocol.SeverityLow, false, "ServeHTTP", "web/routes.go"),
			"Secrets in source was violated by ServeHTTP. Found in web/routes.go. This is a low-severity policy: keep working, and fix it before merge."},

		{"a pause with a reason", pause("Wrong branch, wait for Ana"),
			`A person paused this session: "Wrong branch, wait for Ana". Stop all work in this session until the brake is released.`},
		{"a pause with a reason in spaces", pause("  Hold on \t"),
			`A person paused this session: "Hold on". Stop all work in this session until the brake is released.`},
		{"a pause with a reason to escape", pause("Say \"stop\"\nnow — é"),
			`A person paused this session: "Say \"stop\"\nnow — é". Stop all work in this session until the brake is released.`},
		{"a pause without a reason", pause(""),
			"A person paused this session. Stop all work in this session until the brake is released."},
		{"a pause whose reason is spaces", pause("  "),
			"A person paused this session. Stop all work in this session until the brake is released."},

		{"a high-risk mission with no plan", plan(protocol.PlanNone, ""),
			"This mission is high-risk and has no approved execution plan. Propose one; no code change is accepted until a lead approves it."},
		{"a plan proposed", plan(protocol.PlanProposed, "ignored"),
			"This mission is high-risk and its execution plan is waiting for a lead's approval. No code change is accepted until it is approved: read the repository or revise the plan."},
		{"a plan rejected with a note", plan(protocol.PlanRejected, " Split the migration out "),
			`This mission is high-risk and a lead rejected its execution plan: "Split the migration out". Revise the plan and propose it again; no code change is accepted until one is approved.`},
		{"a plan rejected with a note to escape", plan(protocol.PlanRejected, `Not "this"`),
			`This mission is high-risk and a lead rejected its execution plan: "Not \"this\"". Revise the plan and propose it again; no code change is accepted until one is approved.`},
		{"a plan rejected without a note", plan(protocol.PlanRejected, " "),
			"This mission is high-risk and a lead rejected its execution plan. Revise the plan and propose it again; no code change is accepted until one is approved."},
		{"changes asked to a plan", plan(protocol.PlanChangesRequested, "Gate the migration"),
			`This mission is high-risk and a lead asked for changes to its execution plan: "Gate the migration". Revise the plan as asked and propose it again; no code change is accepted until one is approved.`},
		{"changes asked to a plan without an instruction", plan(protocol.PlanChangesRequested, ""),
			`This mission is high-risk and a lead asked for changes to its execution plan: "". Revise the plan as asked and propose it again; no code change is accepted until one is approved.`},
		{"a plan of an unknown status", plan("withdrawn", "x"),
			"This mission is high-risk and has no approved execution plan. Propose one; no code change is accepted until a lead approves it."},

		{"a plan revised after a lead asked for a modification", lifecycle(protocol.LifecycleArchitectureRevising),
			"The plan is being revised (ARCHITECTURE_REVISING): make no code change until the revised plan is confirmed. You may read the repository and revise the plan."},
		{"a plan revised after a requirement changed", lifecycle(protocol.LifecycleInterrupting),
			"A requirement changed and the plan is being revised (INTERRUPTING): make no code change until the revised plan is confirmed. You may read the repository and revise the plan."},

		{"an open gate", gate("Drop the legacy billing table?", 3, 0, time.Time{}),
			"DEC-7 is waiting on a person: Drop the legacy billing table?"},
		{"an open gate whose ttl has not run out", gate("Drop it?", 100, time.Hour, time.Time{}),
			"DEC-7 is waiting on a person: Drop it?"},
		{"a gate whose ttl ran out", gate("Drop the legacy billing table?", 4, 90*time.Minute, time.Time{}),
			"DEC-7 expired unanswered after 1h30m: Drop the legacy billing table? Nothing on its blocked scope proceeds; a lead can still resolve it."},
		{"a gate whose ttl ran out, asking without a stop", gate("Drop the table", 4, 90*time.Minute, time.Time{}),
			"DEC-7 expired unanswered after 1h30m: Drop the table. Nothing on its blocked scope proceeds; a lead can still resolve it."},
		{"a gate whose ttl ran out, asking nothing (two spaces, as always)", gate("", 4, 90*time.Minute, time.Time{}),
			"DEC-7 expired unanswered after 1h30m:  Nothing on its blocked scope proceeds; a lead can still resolve it."},
		{"a gate whose ttl ran out exactly now", gate("Now!", 0, 2*time.Hour, time.Time{}),
			"DEC-7 expired unanswered after 2h: Now! Nothing on its blocked scope proceeds; a lead can still resolve it."},
		{"a gate stamped expired under an earlier ttl", gate("Keep it?", 10, 0, at(40).Add(30*time.Second)),
			"DEC-7 expired unanswered after 30m: Keep it? Nothing on its blocked scope proceeds; a lead can still resolve it."},
		{"a gate stamped expired before its new ttl runs out", gate("Keep it?", 100, 5*time.Hour, at(100).Add(45*time.Second)),
			"DEC-7 expired unanswered after 45s: Keep it? Nothing on its blocked scope proceeds; a lead can still resolve it."},

		{"a prompt about a tool on two paths", perm("Bash", "Run the migration?", "migrations/0042.sql", "db/seed.sql"),
			`Permission prompt PRM-7 asks to use Bash on migrations/0042.sql, db/seed.sql: "Run the migration?". A person must answer it; until then, do not use Bash on those paths.`},
		{"a prompt about a tool on one path", perm("Edit", "Edit the router?", "web/routes.go"),
			`Permission prompt PRM-7 asks to use Edit on web/routes.go: "Edit the router?". A person must answer it; until then, do not use Edit on that path.`},
		{"a prompt about a tool", perm("Bash", " Run the tests? "),
			`Permission prompt PRM-7 asks to use Bash: "Run the tests?". A person must answer it; until then, do not use Bash.`},
		{"a prompt about one path", perm("", "Touch it?", "a.go"),
			`Permission prompt PRM-7 asks to touch a.go: "Touch it?". A person must answer it; until then, do not touch that path.`},
		{"a prompt about paths, asking nothing", perm("", "", "a.go", "b.go"),
			"Permission prompt PRM-7 asks to touch a.go, b.go. A person must answer it; until then, do not touch those paths."},
		{"a prompt about nothing", perm("", "  "),
			"Permission prompt PRM-7 is waiting. A person must answer it; until then, do not do what it asks."},
		{"a prompt to escape", perm("Bash", "rm -rf \"$HOME\"\t?"),
			`Permission prompt PRM-7 asks to use Bash: "rm -rf \"$HOME\"\t?". A person must answer it; until then, do not use Bash.`},

		{"a required remediation", rem(true, "Re-read billing.Charge: its signature changed."),
			"Fix this, then report again: Re-read billing.Charge: its signature changed."},
		{"an advisory remediation", rem(false, "Consider a table test."),
			"Advisory: Consider a table test."},

		{"an enforceable deviation", dev(31, 34, true),
			"moment departs from this workspace's approach. Use date-fns — chosen for dates in 31 of 34 components."},
		{"a deviation held below 70%", dev(11, 20, true),
			"moment departs from this workspace's approach (date-fns, inferred with 55% confidence — advisory)."},
		{"a deviation from a rule not enforced", dev(34, 34, false),
			"moment departs from this workspace's approach (date-fns, inferred with 100% confidence — advisory)."},
		{"a deviation from a rule of no components", dev(0, 0, true),
			"moment departs from this workspace's approach (date-fns, inferred with 0% confidence — advisory)."},

		{"a forbidden path", breach(protocol.ForbidPath, "migrations/**", 0, "migrations/0042.sql", "migrations/0043.sql"),
			"The mission contract forbids changes to migrations/**; this change touches migrations/0042.sql, migrations/0043.sql. Undo those changes."},
		{"a required path", breach(protocol.RequirePath, "CHANGELOG.md", 0),
			"The mission contract requires a change to CHANGELOG.md; this change has none. Make that change."},
		{"a forbidden dependency", breach(protocol.ForbidDependency, "left-pad", 0, "left-pad@1.3.0"),
			"The mission contract forbids the dependency left-pad; this change adds left-pad@1.3.0. Remove it."},
		{"too many files", breach(protocol.MaxFilesChanged, "20", 31),
			"The mission contract allows at most 20 changed files; this change touches 31. Narrow the change."},
		{"a clause of an unknown kind", breach("max_lines", "500", 0),
			"The mission contract clause max_lines 500 is broken by this change."},

		{"a high risk", risk(82, "high", "a lead's review"),
			"This change scores 82 of 100, high risk. Before it merges it needs a lead's review. Keep working."},
		{"a critical risk with no gate named", risk(97, "critical", ""),
			"This change scores 97 of 100, critical risk. Before it merges it needs a person's review. Keep working."},

		{"a collision with an agent named", coll("claude-code"),
			"Session S-77 (claude-code) builds against billing.Charge, which this session changed. Madebook is re-briefing it; you do not need to stop."},
		{"a collision with no agent named", coll(""),
			"Session S-77 builds against billing.Charge, which this session changed. Madebook is re-briefing it; you do not need to stop."},
	}
}

// Every kind of reason reads, word for word, as it always has.
func TestEveryTextReadsAsBefore(t *testing.T) {
	for _, c := range textCases() {
		t.Run(c.name, func(t *testing.T) {
			b := protocol.Decide(c.facts, now)
			if len(b.Reasons)+len(b.Also) != 1 {
				t.Fatalf("%d reasons, want 1", len(b.Reasons)+len(b.Also))
			}
			if got := b.Reason.String(); got != c.want {
				t.Errorf("reason =\n  %q\nwant\n  %q", got, c.want)
			}
		})
	}
}

// Words are written out the same way by every way of reading them, and
// read as written once the brief is encoded and decoded.
func TestEveryWayOfReadingWordsReadsTheSame(t *testing.T) {
	for _, c := range textCases() {
		t.Run(c.name, func(t *testing.T) {
			b := protocol.Decide(c.facts, now)
			all := append(slices.Clone(b.Reasons), b.Also...)
			w := all[0].Text
			if got := string(w.Append([]byte("prefix:"))); got != "prefix:"+c.want {
				t.Errorf("Append = %q", got)
			}
			if got, err := w.MarshalText(); err != nil || string(got) != c.want {
				t.Errorf("MarshalText = %q, %v", got, err)
			}
			if got := fmt.Sprint(w); got != c.want {
				t.Errorf("fmt prints %q", got)
			}
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			var back protocol.Brief
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			backAll := append(slices.Clone(back.Reasons), back.Also...)
			if back.Reason.String() != b.Reason.String() || len(backAll) != 1 || backAll[0].Text.String() != c.want {
				t.Errorf("read back %q, reasons %v", back.Reason, backAll)
			}
			if again, err := json.Marshal(back); err != nil || !bytes.Equal(again, raw) {
				t.Errorf("re-encoded\n  %s\nwas\n  %s", again, raw)
			}
		})
	}
	t.Run("the table has every code, and each way a gate expires", func(t *testing.T) {
		seen := map[protocol.Code]int{}
		for _, c := range textCases() {
			for _, r := range protocol.Decide(c.facts, now).Reasons {
				seen[r.Code]++
			}
		}
		for _, c := range causes() {
			if seen[c.code] == 0 {
				t.Errorf("no text case has code %s", c.code)
			}
		}
		if seen[protocol.CodeDecisionExpired] < 6 {
			t.Errorf("%d expired gates, want both ways a gate expires, with and without a stop", seen[protocol.CodeDecisionExpired])
		}
	})
}

// Words encode as the string they read would: a reason's "text" and a
// brief's "reason" are byte for byte what they were as strings.
func TestWordsEncodeAsTheirString(t *testing.T) {
	for _, s := range []string{"", "plain", `a "quoted" \ word`, "<script>&amp;</script>", "line\nbreak\ttab\x00nul",
		"\u2028\u2029 é ✓ \U0001F600", "bad \xff utf-8", protocol.ContinueText} {
		type asWords struct {
			Text protocol.Words `json:"text"`
		}
		type asString struct {
			Text string `json:"text"`
		}
		got, err := json.Marshal(asWords{protocol.Literal(s)})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(asString{s})
		if !bytes.Equal(got, want) {
			t.Errorf("Literal(%q) encodes as %s, a string as %s", s, got, want)
		}
		var back asWords
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		var backString asString
		_ = json.Unmarshal(want, &backString)
		if back.Text.String() != backString.Text {
			t.Errorf("%s decodes to %q, as a string to %q", got, back.Text, backString.Text)
		}
	}
	t.Run("the zero Words read and encode as the reason to continue", func(t *testing.T) {
		var w protocol.Words
		if w.String() != protocol.ContinueText {
			t.Errorf("zero Words read %q", w.String())
		}
		if got, _ := json.Marshal(w); string(got) != `"Nothing is in your way: continue the mission."` {
			t.Errorf("zero Words encode as %s", got)
		}
		b := protocol.Decide(protocol.Facts{}, now)
		if b.Reason.String() != protocol.ContinueText {
			t.Errorf("a quiet brief's reason reads %q", b.Reason)
		}
	})
	t.Run("a literal reads exactly its string, the empty one too", func(t *testing.T) {
		for _, s := range []string{"", "x", protocol.ContinueText} {
			if got := protocol.Literal(s).String(); got != s {
				t.Errorf("Literal(%q) reads %q", s, got)
			}
		}
	})
}

// What the caller does with its brief, or with another one, changes no
// words it has: they are values pointing at the facts, not at the brief
// or at a buffer Decide reuses.
func TestWordsOutliveWhatTheCallerDoesWithTheBrief(t *testing.T) {
	f := everything()
	b := protocol.Decide(f, now)
	all := append(slices.Clone(b.Reasons), b.Also...)
	want := make([]string, len(all))
	for i, r := range all {
		want[i] = r.Text.String()
	}
	reason := b.Reason
	kept := b.Reasons[0].Text

	// Reorder, overwrite and extend the brief's lists; rewrite its refs,
	// files and scopes; decide other briefs, from other facts and from
	// the same.
	slices.Reverse(b.Also)
	for i := range b.Reasons {
		b.Reasons[i].Ref = "changed"
		b.Reasons[i] = protocol.Reason{Text: protocol.Literal("overwritten")}
	}
	b.Also = append(b.Also, protocol.Reason{Text: protocol.Literal("appended")})
	b.Reason = protocol.Literal("replaced")
	for i := range b.BlockedScope {
		b.BlockedScope[i] = "changed"
	}
	for range 3 {
		other := protocol.Decide(busy(), now.Add(time.Hour))
		for _, r := range other.Also {
			_ = r.Text.String()
		}
		_ = protocol.Decide(f, now)
	}

	for i, r := range all {
		if got := r.Text.String(); got != want[i] {
			t.Errorf("reason %d (%s) now reads\n  %q\nwas\n  %q", i, r.Code, got, want[i])
		}
	}
	if reason.String() != want[0] || kept.String() != want[0] {
		t.Errorf("the brief's reason now reads %q and %q, was %q", reason, kept, want[0])
	}
}

// The order's last tie-break is the text: two reasons alike in state, age,
// ref and code are ordered by their words, whichever fact came first.
func TestReasonsAlikeButForTheirWordsAreOrderedByThem(t *testing.T) {
	v := func(policy string) protocol.Violation {
		return protocol.Violation{ID: "VIO-007", Policy: policy, Severity: protocol.SeverityMedium, File: "a.go", At: at(3)}
	}
	c := func(symbol string) protocol.Collision {
		return protocol.Collision{ID: "COL-007", Symbol: symbol, OtherSession: "S-1", At: at(3)}
	}
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		policies := [2]string{"Alpha", "Beta"}
		symbols := [2]string{"a.Func", "b.Func"}
		f := protocol.Facts{
			Violations: []protocol.Violation{v(policies[order[0]]), v(policies[order[1]])},
			Collisions: []protocol.Collision{c(symbols[order[0]]), c(symbols[order[1]])},
		}
		b := protocol.Decide(f, now)
		var got []string
		for _, r := range b.Reasons {
			got = append(got, r.Text.String()[:strings.Index(r.Text.String(), " ")])
		}
		// Same state, age and ref within each pair; the codes tell the pairs
		// apart (collision before policy_warning), then the words.
		if want := []string{"Session", "Session", "Alpha", "Beta"}; !slices.Equal(got, want) {
			t.Errorf("facts in order %v: reasons begin %q, want %q", order, got, want)
		}
		if w := b.Reasons[0].Text.String(); !strings.Contains(w, "a.Func") {
			t.Errorf("facts in order %v: the first collision is %q, want the one about a.Func", order, w)
		}
	}
}

// Words keep the facts they point at alive: a brief read after its facts
// are gone, and the collector has run, still says what it said.
func TestWordsKeepTheirFactsAlive(t *testing.T) {
	want := map[string]bool{}
	briefs := make([]protocol.Brief, 0, len(textCases()))
	for _, c := range textCases() {
		want[c.want] = true
		facts := c.facts // the only reference, dropped at the end of the iteration
		briefs = append(briefs, protocol.Decide(facts, now))
	}
	for range 3 {
		garbage := make([][]byte, 0, 1000)
		for i := range 1000 {
			garbage = append(garbage, bytes.Repeat([]byte{byte(i)}, 200))
		}
		_ = garbage
		runtime.GC()
	}
	for _, b := range briefs {
		for _, r := range append(slices.Clone(b.Reasons), b.Also...) {
			if w := r.Text.String(); !want[w] {
				t.Errorf("after the collector ran, a %s reason reads %q", r.Code, w)
			}
		}
	}
}
