package governance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/testkit"
)

const awsSecret = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"

type changeEnv struct {
	kit     *testkit.Kit
	ctx     context.Context
	lead    auth.Actor
	admin   auth.Actor
	agent   auth.Actor
	mission string
}

func newChangeEnv(t *testing.T, highRisk bool, contract ...governance.Clause) *changeEnv {
	t.Helper()
	kit := testkit.New(t)
	e := &changeEnv{kit: kit, ctx: context.Background()}
	e.lead, _ = kit.Lead()
	e.admin, _ = kit.Person(auth.Admin)
	e.agent, _ = kit.Agent()
	e.mission = "m-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(e.mission) > 60 {
		e.mission = e.mission[:60]
	}
	e.mission = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, e.mission)
	if _, err := kit.Gov.Missions.Create(e.ctx, e.lead, governance.MissionInput{Slug: e.mission, Title: "M", HighRisk: highRisk,
		Evidence: []string{"tests", "review"}, Contract: contract}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *changeEnv) session(t *testing.T) string {
	t.Helper()
	return e.kit.Session(e.agent, e.mission)
}

func (e *changeEnv) report(t *testing.T, session string, c change.Change) governance.ChangeResult {
	t.Helper()
	res, err := e.kit.Gov.Changes.Report(e.ctx, e.agent, session, c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (e *changeEnv) brief(t *testing.T, session string) governance.Brief {
	t.Helper()
	b, err := e.kit.Gov.Briefs.Brief(e.ctx, e.agent, governance.BriefRequest{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func file(path, content string) change.File { return change.File{Path: path, Content: content} }

func TestChangeReportsDriveTheBrief(t *testing.T) {
	t.Run("Secrets in source was violated by AWS_SECRET_ACCESS_KEY: a HARD_STOP in the seed's words", func(t *testing.T) {
		e := newChangeEnv(t, false)
		s := e.session(t)
		res := e.report(t, s, change.Change{Files: []change.File{file("config/deploy.sh", "#!/bin/sh\n"+awsSecret)}})
		if len(res.Violations) != 1 || res.Violations[0].Match != "AWS_SECRET_ACCESS_KEY" {
			t.Fatalf("violations = %+v", res.Violations)
		}
		if strings.Contains(res.Violations[0].Match, "wJalr") {
			t.Fatal("the stored match holds the secret")
		}
		b := e.brief(t, s)
		want := "Secrets in source was violated by AWS_SECRET_ACCESS_KEY. Found in config/deploy.sh. This is a critical control: stop, and do not work around it."
		if b.NextAction != protocol.HardStop || b.Reason != want {
			t.Fatalf("brief = %s %q", b.NextAction, b.Reason)
		}
		// Hiding what tripped it does not make a HARD_STOP go away.
		e.report(t, s, change.Change{Files: []change.File{file("config/deploy.sh", "#!/bin/sh\n")}})
		if b := e.brief(t, s); b.NextAction != protocol.HardStop {
			t.Fatalf("after hiding the secret: %s", b.NextAction)
		}
		// A person clears it.
		if _, err := e.kit.Gov.Changes.ClearViolation(e.ctx, e.lead, res.Violations[0].ID, "fixed", "Rotated the key."); err != nil {
			t.Fatal(err)
		}
		if b := e.brief(t, s); b.NextAction != protocol.Continue {
			t.Fatalf("after clearing: %s %q", b.NextAction, b.Reason)
		}
		_, err := e.kit.Gov.Changes.ClearViolation(e.ctx, e.lead, res.Violations[0].ID, "fixed", "")
		if errs.CodeOf(err) != "already_closed" {
			t.Fatalf("clearing twice: %v", err)
		}
	})

	t.Run("a high violation is a remediation the agent fixes, and closes by itself when fixed", func(t *testing.T) {
		e := newChangeEnv(t, false)
		if _, err := e.kit.Gov.Policies.Create(e.ctx, e.admin, governance.PolicyInput{Name: "No console.log", Severity: "high",
			Kind: "content_regex", Pattern: `console\.log\(`}); err != nil {
			t.Fatal(err)
		}
		s := e.session(t)
		e.report(t, s, change.Change{Files: []change.File{file("web/app.js", "console.log('x')\n")}})
		b := e.brief(t, s)
		if b.NextAction != protocol.Remediate || b.Reasons[0].Code != protocol.CodeHighViolation {
			t.Fatalf("brief = %s %+v", b.NextAction, b.Reasons)
		}
		e.report(t, s, change.Change{Files: []change.File{file("web/app.js", "log.info('x')\n")}})
		if b := e.brief(t, s); b.NextAction != protocol.Continue {
			t.Fatalf("after the fix: %s %q", b.NextAction, b.Reason)
		}
	})

	t.Run("a block_merge policy warns that the merge will not ship", func(t *testing.T) {
		e := newChangeEnv(t, false)
		if _, err := e.kit.Gov.Policies.Create(e.ctx, e.admin, governance.PolicyInput{Name: "Licence review", Severity: "medium",
			Kind: "dependency", Pattern: "left-pad", Action: "block_merge"}); err != nil {
			t.Fatal(err)
		}
		s := e.session(t)
		e.report(t, s, change.Change{Dependencies: []string{"left-pad"}})
		b := e.brief(t, s)
		if b.NextAction != protocol.ContinueWithWarning || b.Reasons[0].Code != protocol.CodeBlockMerge {
			t.Fatalf("brief = %s %+v", b.NextAction, b.Reasons)
		}
	})

	t.Run("redux-toolkit departs from this workspace's approach: REMEDIATE naming React Query", func(t *testing.T) {
		e := newChangeEnv(t, false)
		if _, err := e.kit.Gov.Policies.CreateRule(e.ctx, e.admin, governance.RuleInput{Concern: "server state", Chosen: "React Query",
			Departures: []string{"redux-toolkit"}, Support: 31, Total: 34, Enforced: true}); err != nil {
			t.Fatal(err)
		}
		s := e.session(t)
		e.report(t, s, change.Change{Files: []change.File{file("web/store.ts", "import { configureStore } from '@reduxjs/toolkit'\n")}})
		b := e.brief(t, s)
		want := "redux-toolkit departs from this workspace's approach. Use React Query — chosen for server state in 31 of 34 components."
		if b.NextAction != protocol.Remediate || b.Reason != want {
			t.Fatalf("brief = %s %q", b.NextAction, b.Reason)
		}
		e.report(t, s, change.Change{Files: []change.File{file("web/store.ts", "import { useQuery } from '@tanstack/react-query'\n")}})
		if b := e.brief(t, s); b.NextAction != protocol.Continue {
			t.Fatalf("when the change no longer deviates: %s %q", b.NextAction, b.Reason)
		}
	})

	t.Run("below 70% the same deviation only warns, and says so", func(t *testing.T) {
		e := newChangeEnv(t, false)
		if _, err := e.kit.Gov.Policies.CreateRule(e.ctx, e.admin, governance.RuleInput{Concern: "server state", Chosen: "React Query",
			Departures: []string{"redux-toolkit"}, Support: 11, Total: 20, Enforced: true}); err != nil {
			t.Fatal(err)
		}
		s := e.session(t)
		e.report(t, s, change.Change{Dependencies: []string{"@reduxjs/toolkit"}})
		b := e.brief(t, s)
		if b.NextAction != protocol.ContinueWithWarning || !strings.HasSuffix(b.Reason, "(React Query, inferred with 55% confidence — advisory).") {
			t.Fatalf("brief = %s %q", b.NextAction, b.Reason)
		}
	})

	t.Run("a change that breaks the mission contract is REMEDIATE quoting the clause", func(t *testing.T) {
		e := newChangeEnv(t, false, governance.Clause{Kind: protocol.ForbidPath, Value: "vendor/**"})
		s := e.session(t)
		res := e.report(t, s, change.Change{Files: []change.File{file("vendor/lib/x.go", "package lib\n")}})
		if len(res.Breaches) != 1 {
			t.Fatalf("breaches = %+v", res.Breaches)
		}
		b := e.brief(t, s)
		want := "The mission contract forbids changes to vendor/**; this change touches vendor/lib/x.go. Undo those changes."
		if b.NextAction != protocol.Remediate || b.Reason != want {
			t.Fatalf("brief = %s %q", b.NextAction, b.Reason)
		}
	})

	t.Run("a high-risk change warns with its score, band and gate", func(t *testing.T) {
		e := newChangeEnv(t, false)
		s := e.session(t)
		var files []change.File
		for i := 0; i < 15; i++ {
			files = append(files, file("db/migrations/"+string(rune('a'+i))+".sql", strings.Repeat("ALTER TABLE x;\n", 60)))
		}
		res := e.report(t, s, change.Change{Files: files, Dependencies: []string{"a", "b"}})
		if res.Risk.Band != "critical" && res.Risk.Band != "high" {
			t.Fatalf("risk = %+v", res.Risk)
		}
		b := e.brief(t, s)
		if b.NextAction != protocol.ContinueWithWarning || b.Reasons[0].Code != protocol.CodeRiskHigh ||
			!strings.Contains(b.Reason, res.Risk.Band+" risk") {
			t.Fatalf("brief = %s %+v", b.NextAction, b.Reasons)
		}
	})

	t.Run("a collision warns the changer and re-briefs the builder once", func(t *testing.T) {
		e := newChangeEnv(t, false)
		a, b := e.session(t), e.session(t)
		e.report(t, b, change.Change{SymbolsUsed: []string{"billing.Charge"}})
		e.report(t, a, change.Change{SymbolsChanged: []string{"billing.Charge"}})
		ba := e.brief(t, a)
		if ba.NextAction != protocol.ContinueWithWarning || !strings.HasSuffix(ba.Reason, "Madebook is re-briefing it; you do not need to stop.") {
			t.Fatalf("A's brief = %s %q", ba.NextAction, ba.Reason)
		}
		bb := e.brief(t, b)
		if bb.NextAction != protocol.Remediate || len(bb.Remediations) != 1 || !strings.Contains(bb.Remediations[0].Instruction, "re-read billing.Charge") {
			t.Fatalf("B's brief = %s %+v", bb.NextAction, bb.Remediations)
		}
		// Reporting the same change again asks B nothing new.
		e.report(t, a, change.Change{SymbolsChanged: []string{"billing.Charge"}})
		if bb := e.brief(t, b); len(bb.Remediations) != 1 {
			t.Fatalf("B was asked again: %+v", bb.Remediations)
		}
	})

	t.Run("a bad change report is refused and writes nothing", func(t *testing.T) {
		e := newChangeEnv(t, false)
		s := e.session(t)
		refused(t, e.kit, errs.Invalid, "invalid_change", func() error {
			_, err := e.kit.Gov.Changes.Report(e.ctx, e.agent, s, change.Change{Files: []change.File{file("a", "x"), file("a", "y")}})
			return err
		})
		other, _ := e.kit.Agent()
		if _, err := e.kit.Gov.Changes.Report(e.ctx, other, s, change.Change{}); errs.KindOf(err) != errs.Forbidden {
			t.Fatalf("another agent reported: %v", err)
		}
	})
}
