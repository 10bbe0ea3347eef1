package governance_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

// consoleLog adds the high policy "No console.log" and returns the env.
func consoleLog(t *testing.T) *changeEnv {
	t.Helper()
	e := newChangeEnv(t, false)
	if _, err := e.kit.Gov.Policies.Create(e.ctx, e.admin, governance.PolicyInput{Name: "No console.log", Severity: "high",
		Kind: "content_regex", Pattern: `console\.log\(`}); err != nil {
		t.Fatal(err)
	}
	return e
}

var (
	tripsConsoleLog = change.Change{Files: []change.File{file("web/app.js", "let a = 1\nconsole.log('x')\n")}}
	cleanOfIt       = change.Change{Files: []change.File{file("web/app.js", "let a = 1\nlog.info('x')\n")}}
)

// detail is the session as a lead sees it.
func (e *changeEnv) detail(t *testing.T, session string) governance.SessionDetail {
	t.Helper()
	d, err := e.kit.Gov.Sessions.Get(e.ctx, e.lead, session)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// open are the session's open remediations.
func (e *changeEnv) open(t *testing.T, session string) []governance.Remediation {
	t.Helper()
	var out []governance.Remediation
	for _, r := range e.detail(t, session).Remediations {
		if r.ClosedAt == nil {
			out = append(out, r)
		}
	}
	return out
}

// events counts the timeline lines of the kind and ref.
func (e *changeEnv) events(t *testing.T, session, kind, ref string) int {
	t.Helper()
	n := 0
	for _, ev := range e.detail(t, session).Timeline {
		if ev.Kind == kind && ev.Ref == ref {
			n++
		}
	}
	return n
}

// remediateReasons are the brief's REMEDIATE reasons, as "code ref", in
// its reasons and also.
func remediateReasons(b governance.Brief) []string {
	var out []string
	for _, r := range append(slices.Clone(b.Reasons), b.Also...) {
		if r.State == protocol.Remediate {
			out = append(out, string(r.Code)+" "+r.Ref)
		}
	}
	return out
}

// attentionOf lists the session's Attention items as "kind ref".
func (e *changeEnv) attentionOf(t *testing.T, session string) []string {
	t.Helper()
	items, err := e.kit.Gov.Attention.List(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		if it.Session == session {
			out = append(out, it.Kind+" "+it.Ref)
		}
	}
	return out
}

func TestAHighViolationRaisesOneRequiredRemediation(t *testing.T) {
	e := consoleLog(t)
	s := e.session(t)
	res := e.report(t, s, tripsConsoleLog)
	if len(res.Violations) != 1 {
		t.Fatalf("violations %+v", res.Violations)
	}
	v := res.Violations[0]
	vio := fmt.Sprintf("VIO-%d", v.ID)

	open := e.open(t, s)
	if len(open) != 1 {
		t.Fatalf("open remediations %+v, want one", open)
	}
	m := open[0]
	rem := strconv.FormatInt(m.ID, 10)
	t.Run("it is required, sourced from the violation, on its file, naming the policy, the match and where", func(t *testing.T) {
		if m.Source != governance.SourceViolation || m.RaisedBy != vio || m.Severity != governance.SeverityRequired ||
			!slices.Equal(m.Files, []string{"web/app.js"}) {
			t.Errorf("remediation %+v", m)
		}
		for _, want := range []string{"No console.log was violated by " + v.Match, "in web/app.js:2", "report the change again"} {
			if !strings.Contains(m.Instruction, want) {
				t.Errorf("instruction %q does not say %q", m.Instruction, want)
			}
		}
		if e.events(t, s, "remediation.requested", rem) != 1 {
			t.Error("no remediation.requested in the timeline")
		}
	})

	b := e.brief(t, s)
	t.Run("the brief has one REMEDIATE reason for it, high_violation, and the remediation in its list", func(t *testing.T) {
		if b.NextAction != protocol.Remediate {
			t.Errorf("next_action %s", b.NextAction)
		}
		if got := remediateReasons(b); !slices.Equal(got, []string{"high_violation " + vio}) {
			t.Errorf("REMEDIATE reasons %v, want only high_violation %s", got, vio)
		}
		if len(b.Remediations) != 1 || b.Remediations[0].ID != m.ID || b.Remediations[0].Source != governance.SourceViolation {
			t.Errorf("remediations %+v", b.Remediations)
		}
	})
	t.Run("the Attention view has one item for it: the remediation", func(t *testing.T) {
		if got := e.attentionOf(t, s); !slices.Equal(got, []string{governance.ItemRemediation + " " + rem}) {
			t.Errorf("attention %v, want only the remediation %s", got, rem)
		}
	})

	t.Run("a second report still tripping it raises no second one, and a brief within the lease delivers nothing again", func(t *testing.T) {
		e.report(t, s, tripsConsoleLog)
		if open := e.open(t, s); len(open) != 1 || open[0].ID != m.ID {
			t.Errorf("open remediations %+v, want %d alone", open, m.ID)
		}
		b := e.brief(t, s)
		if len(b.Remediations) != 1 || !slices.Equal(remediateReasons(b), []string{"high_violation " + vio}) {
			t.Errorf("brief %v %+v", remediateReasons(b), b.Remediations)
		}
		if n := e.events(t, s, "remediation.delivered", rem); n != 1 {
			t.Errorf("delivered %d times, want once", n)
		}
		if n := e.events(t, s, "remediation.redelivered", rem); n != 0 {
			t.Errorf("redelivered %d times within the lease", n)
		}
	})

	t.Run("a clean report closes the violation and its remediation, by no one, and the REMEDIATE goes", func(t *testing.T) {
		res := e.report(t, s, cleanOfIt)
		if len(res.Violations) != 0 {
			t.Errorf("violations %+v", res.Violations)
		}
		var got governance.Remediation
		for _, r := range e.detail(t, s).Remediations {
			if r.ID == m.ID {
				got = r
			}
		}
		if got.ClosedAt == nil || !strings.Contains(got.CloseNote, "A later change no longer trips No console.log") {
			t.Errorf("remediation %+v, want closed by the later change", got)
		}
		if rows := e.kit.Rows(`SELECT COALESCE(CAST(closed_by AS TEXT), 'none') AS x FROM remediations WHERE id = ?`, m.ID); !slices.Equal(rows, []string{"x=none"}) {
			t.Errorf("closed_by %v, want none", rows)
		}
		if e.events(t, s, "remediation.closed", rem) != 1 {
			t.Error("no remediation.closed in the timeline")
		}
		b := e.brief(t, s)
		if b.NextAction != protocol.Continue || len(b.Remediations) != 0 {
			t.Errorf("brief %s %q %+v", b.NextAction, b.Reason, b.Remediations)
		}
		if got := e.attentionOf(t, s); len(got) != 0 {
			t.Errorf("attention %v", got)
		}
	})

	t.Run("tripping it again later is a new violation with a new remediation", func(t *testing.T) {
		e.report(t, s, tripsConsoleLog)
		open := e.open(t, s)
		if len(open) != 1 || open[0].ID == m.ID || open[0].RaisedBy == vio {
			t.Errorf("open %+v, want one new", open)
		}
	})
}

func TestAPersonClosingARaisedRemediationClosesWhatRaisedIt(t *testing.T) {
	t.Run("a violation's: cleared as the person's, and the REMEDIATE goes", func(t *testing.T) {
		e := consoleLog(t)
		s := e.session(t)
		v := e.report(t, s, tripsConsoleLog).Violations[0]
		m := e.open(t, s)[0]
		if _, err := e.kit.Gov.Remediations.Close(e.ctx, e.lead, m.ID, "Reviewed: debug output removed."); err != nil {
			t.Fatal(err)
		}
		want := []string{fmt.Sprintf("x=%d|Reviewed: debug output removed.", e.lead.UserID)}
		if rows := e.kit.Rows(`SELECT COALESCE(cleared_by, 0) || '|' || clear_note AS x FROM violations WHERE id = ? AND closed_at IS NOT NULL`, v.ID); !slices.Equal(rows, want) {
			t.Errorf("violation %v, want closed by the lead with the note %v", rows, want)
		}
		if e.events(t, s, "violation.cleared", strconv.FormatInt(v.ID, 10)) != 1 {
			t.Error("no violation.cleared in the timeline")
		}
		b := e.brief(t, s)
		if b.NextAction != protocol.Continue || len(remediateReasons(b)) != 0 {
			t.Errorf("brief %s %v", b.NextAction, remediateReasons(b))
		}
	})

	t.Run("a deviation's: closed as the person's, and the REMEDIATE goes", func(t *testing.T) {
		e := reduxRule(t, 31, 34, true)
		s := e.session(t)
		e.report(t, s, usesRedux)
		m := e.open(t, s)[0]
		if _, err := e.kit.Gov.Remediations.Close(e.ctx, e.lead, m.ID, ""); err != nil {
			t.Fatal(err)
		}
		want := []string{"x=" + strconv.FormatInt(e.lead.UserID, 10)}
		if rows := e.kit.Rows(`SELECT closed_by AS x FROM deviations WHERE closed_at IS NOT NULL`); !slices.Equal(rows, want) {
			t.Errorf("deviation closed_by %v, want %v", rows, want)
		}
		b := e.brief(t, s)
		if b.NextAction != protocol.Continue || len(remediateReasons(b)) != 0 {
			t.Errorf("brief %s %v", b.NextAction, remediateReasons(b))
		}
	})

	t.Run("clearing the violation closes its remediation, as the person's", func(t *testing.T) {
		e := consoleLog(t)
		s := e.session(t)
		v := e.report(t, s, tripsConsoleLog).Violations[0]
		m := e.open(t, s)[0]
		if _, err := e.kit.Gov.Changes.ClearViolation(e.ctx, e.lead, v.ID, "false_positive", "A test fixture."); err != nil {
			t.Fatal(err)
		}
		if len(e.open(t, s)) != 0 {
			t.Errorf("open %+v after clearing the violation", e.open(t, s))
		}
		want := []string{"x=" + strconv.FormatInt(e.lead.UserID, 10)}
		if rows := e.kit.Rows(`SELECT closed_by AS x FROM remediations WHERE id = ?`, m.ID); !slices.Equal(rows, want) {
			t.Errorf("remediation closed_by %v, want %v", rows, want)
		}
		if b := e.brief(t, s); b.NextAction != protocol.Continue {
			t.Errorf("brief %s %q", b.NextAction, b.Reason)
		}
	})
}

// reduxRule adds the seed's rule (React Query for server state) with the
// support, total and enforcement given.
func reduxRule(t *testing.T, support, total int, enforced bool) *changeEnv {
	t.Helper()
	e := newChangeEnv(t, false)
	if _, err := e.kit.Gov.Policies.CreateRule(e.ctx, e.admin, governance.RuleInput{Concern: "server state", Chosen: "React Query",
		Departures: []string{"redux-toolkit"}, Support: support, Total: total, Enforced: enforced}); err != nil {
		t.Fatal(err)
	}
	return e
}

var (
	usesRedux  = change.Change{Files: []change.File{file("web/store.ts", "import { configureStore } from '@reduxjs/toolkit'\n")}}
	usesQuery  = change.Change{Files: []change.File{file("web/store.ts", "import { useQuery } from '@tanstack/react-query'\n")}}
	reduxWords = "redux-toolkit departs from this workspace's approach. Use React Query — chosen for server state in 31 of 34 components."
)

func TestARuleDeviationRaisesARemediationOnlyWhenEnforceable(t *testing.T) {
	for _, tc := range []struct {
		name            string
		support, total  int
		enforced, raise bool
	}{
		{"enforced at 91%: one remediation, source rule", 31, 34, true, true},
		{"enforced at exactly 70%: one remediation", 7, 10, true, true},
		{"enforced at 55%: none, an advisory warning", 11, 20, true, false},
		{"not enforced at 91%: none, an advisory warning", 31, 34, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := reduxRule(t, tc.support, tc.total, tc.enforced)
			s := e.session(t)
			res := e.report(t, s, usesRedux)
			open := e.open(t, s)
			b := e.brief(t, s)
			if !tc.raise {
				if len(open) != 0 || len(remediateReasons(b)) != 0 || b.NextAction != protocol.ContinueWithWarning {
					t.Errorf("open %+v, brief %s %v", open, b.NextAction, remediateReasons(b))
				}
				return
			}
			dev := fmt.Sprintf("DEV-%d", res.Deviations[0].ID)
			if len(open) != 1 || open[0].Source != governance.SourceRule || open[0].RaisedBy != dev ||
				!slices.Equal(open[0].Files, []string{"web/store.ts"}) || open[0].Severity != governance.SeverityRequired {
				t.Fatalf("open %+v", open)
			}
			if open[0].Instruction != b.Reason {
				t.Errorf("instruction %q, reason %q: want the same words", open[0].Instruction, b.Reason)
			}
			if got := remediateReasons(b); !slices.Equal(got, []string{"rule_deviation " + dev}) {
				t.Errorf("REMEDIATE reasons %v, want only rule_deviation %s", got, dev)
			}
			e.report(t, s, usesRedux)
			if again := e.open(t, s); len(again) != 1 || again[0].ID != open[0].ID {
				t.Errorf("after a second report: %+v", again)
			}
			e.report(t, s, usesQuery)
			if len(e.open(t, s)) != 0 {
				t.Errorf("still open after the change no longer deviates: %+v", e.open(t, s))
			}
			if b := e.brief(t, s); b.NextAction != protocol.Continue {
				t.Errorf("brief %s %q", b.NextAction, b.Reason)
			}
		})
	}
	t.Run("the rule's words name the compliant alternative", func(t *testing.T) {
		e := reduxRule(t, 31, 34, true)
		s := e.session(t)
		e.report(t, s, usesRedux)
		if open := e.open(t, s); len(open) != 1 || open[0].Instruction != reduxWords {
			t.Errorf("open %+v, want %q", open, reduxWords)
		}
	})
}

func TestACriticalViolationRaisesNoRemediation(t *testing.T) {
	e := newChangeEnv(t, false)
	s := e.session(t)
	e.report(t, s, change.Change{Files: []change.File{file("config/deploy.sh", "#!/bin/sh\n"+awsSecret)}})
	if open := e.open(t, s); len(open) != 0 {
		t.Errorf("a critical violation raised %+v", open)
	}
	b := e.brief(t, s)
	if b.NextAction != protocol.HardStop || len(b.Remediations) != 0 {
		t.Errorf("brief %s %+v", b.NextAction, b.Remediations)
	}
	if got := e.attentionOf(t, s); len(got) != 1 || !strings.HasPrefix(got[0], governance.ItemViolation+" ") {
		t.Errorf("attention %v, want the violation alone", got)
	}
}

func TestAMediumOrBlockMergeViolationRaisesNoRemediation(t *testing.T) {
	for _, p := range []governance.PolicyInput{
		{Name: "TODO without a ticket", Severity: "medium", Kind: "content_regex", Pattern: `TODO`},
		{Name: "Licence review", Severity: "high", Kind: "content_regex", Pattern: `TODO`, Action: "block_merge"},
	} {
		t.Run(p.Name, func(t *testing.T) {
			e := newChangeEnv(t, false)
			if _, err := e.kit.Gov.Policies.Create(e.ctx, e.admin, p); err != nil {
				t.Fatal(err)
			}
			s := e.session(t)
			if res := e.report(t, s, change.Change{Files: []change.File{file("a.go", "// TODO\n")}}); len(res.Violations) != 1 {
				t.Fatalf("violations %+v", res.Violations)
			}
			if open := e.open(t, s); len(open) != 0 {
				t.Errorf("raised %+v", open)
			}
		})
	}
}

func TestARuleThatStopsOrStartsHoldingAgentsClosesOrRaisesOnTheNextReport(t *testing.T) {
	// No call changes a rule yet; an operator's SQL can, and the next
	// report follows it.
	e := reduxRule(t, 31, 34, true)
	s := e.session(t)
	e.report(t, s, usesRedux)
	first := e.open(t, s)
	if len(first) != 1 {
		t.Fatalf("open %+v", first)
	}
	setEnforced := func(on bool) {
		t.Helper()
		if _, err := e.kit.SQL().ExecContext(e.ctx, `UPDATE rules SET enforced = ?`, on); err != nil {
			t.Fatal(err)
		}
	}
	setEnforced(false)
	e.report(t, s, usesRedux)
	if open := e.open(t, s); len(open) != 0 {
		t.Fatalf("still open when the rule is advisory: %+v", open)
	}
	if b := e.brief(t, s); b.NextAction != protocol.ContinueWithWarning || len(remediateReasons(b)) != 0 {
		t.Errorf("brief %s %v", b.NextAction, remediateReasons(b))
	}
	setEnforced(true)
	e.report(t, s, usesRedux)
	again := e.open(t, s)
	if len(again) != 1 || again[0].ID == first[0].ID || again[0].RaisedBy != first[0].RaisedBy {
		t.Fatalf("open %+v, want a new one for %s", again, first[0].RaisedBy)
	}
	e.report(t, s, usesRedux)
	if open := e.open(t, s); len(open) != 1 {
		t.Errorf("open %+v, want one", open)
	}
}
