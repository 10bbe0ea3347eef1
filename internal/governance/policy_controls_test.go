package governance_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
)

// policyCount is how many policies the Policies page lists.
func (e *changeEnv) policyCount(t *testing.T) int {
	t.Helper()
	ps, err := e.kit.Gov.Policies.List(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

func (e *changeEnv) define(t *testing.T, in governance.PolicyInput) governance.PolicyView {
	t.Helper()
	p, err := e.kit.Gov.Policies.Create(e.ctx, e.admin, in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPoliciesAreBoundedAtCreation(t *testing.T) {
	e := newChangeEnv(t, false)
	before := e.policyCount(t)
	regex := func(pattern string) governance.PolicyInput {
		return governance.PolicyInput{Name: "P", Severity: "high", Kind: "content_regex", Pattern: pattern}
	}
	for _, tc := range []struct {
		name string
		in   governance.PolicyInput
		code string
	}{
		{"a 900,000-character pattern is refused", regex(strings.Repeat("a", 900_000)), "pattern_too_long"},
		{"a glob over the limit is refused", governance.PolicyInput{Name: "G", Severity: "low", Kind: "path_glob",
			Pattern: strings.Repeat("x/", governance.MaxPolicyPattern)}, "pattern_too_long"},
		{"a dependency over the limit is refused", governance.PolicyInput{Name: "D", Severity: "low", Kind: "dependency",
			Pattern: strings.Repeat("d", governance.MaxPolicyPattern+1)}, "pattern_too_long"},
		{"a costly pattern is refused", regex(`(?s).{200}`), "pattern_too_costly"},
	} {
		t.Run(tc.name+" and nothing is written", func(t *testing.T) {
			_, err := e.kit.Gov.Policies.Create(e.ctx, e.admin, tc.in)
			wantErr(t, err, errs.Invalid, tc.code)
			if errs.FieldOf(err) != "pattern" {
				t.Fatalf("field %q", errs.FieldOf(err))
			}
			if n := e.policyCount(t); n != before {
				t.Fatalf("%d policies, want %d", n, before)
			}
		})
	}
	t.Run("a pattern just under the limit is accepted and trips", func(t *testing.T) {
		pattern := "z" + strings.Repeat("q", governance.MaxPolicyPattern-2)
		p := e.define(t, regex(pattern))
		if !p.Enabled || p.Cost.Program == 0 || p.NotEnforced != "" {
			t.Fatalf("%+v", p)
		}
		s := e.session(t)
		res := e.report(t, s, change.Change{Files: []change.File{file("a.txt", "x "+pattern+" y")}})
		if len(res.Violations) != 1 || res.Violations[0].Policy != "P" {
			t.Fatalf("violations %+v", res.Violations)
		}
	})
}

func TestAPolicyCanBeDisabledEnabledAndDeleted(t *testing.T) {
	e := newChangeEnv(t, false)
	p := e.define(t, governance.PolicyInput{Name: "No console.log", Severity: "high", Kind: "content_regex", Pattern: `console\.log\(`})
	logs := change.Change{Files: []change.File{file("web/app.js", "console.log(1)\n")}}
	s := e.session(t)

	t.Run("only an admin may disable, enable or delete it", func(t *testing.T) {
		viewer, _ := e.kit.Person(auth.Viewer)
		for _, who := range []auth.Actor{e.lead, viewer, e.agent} {
			_, err := e.kit.Gov.Policies.SetEnabled(e.ctx, who, p.ID, false)
			wantErr(t, err, errs.Forbidden, "forbidden")
			_, err = e.kit.Gov.Policies.SetEnabled(e.ctx, who, p.ID, true)
			wantErr(t, err, errs.Forbidden, "forbidden")
			_, err = e.kit.Gov.Policies.Delete(e.ctx, who, p.ID)
			wantErr(t, err, errs.Forbidden, "forbidden")
		}
		_, err := e.kit.Gov.Policies.SetEnabled(e.ctx, e.admin, 999999, false)
		wantErr(t, err, errs.NotFound, "policy_not_found")
	})
	t.Run("a disabled policy trips nothing, and the brief follows", func(t *testing.T) {
		if res := e.report(t, s, logs); len(res.Violations) != 1 {
			t.Fatalf("enabled: %+v", res.Violations)
		}
		if b := e.brief(t, s); b.NextAction != protocol.Remediate {
			t.Fatalf("brief %s %q", b.NextAction, b.Reason)
		}
		v, err := e.kit.Gov.Policies.SetEnabled(e.ctx, e.admin, p.ID, false)
		if err != nil || v.Enabled || v.DisabledAt == nil {
			t.Fatalf("%+v %v", v, err)
		}
		if res := e.report(t, s, logs); len(res.Violations) != 0 {
			t.Fatalf("disabled: %+v", res.Violations)
		}
		if b := e.brief(t, s); b.NextAction != protocol.Continue {
			t.Fatalf("brief %s %q", b.NextAction, b.Reason)
		}
		if n := e.policyCount(t); n != len(policy.SecretsInSource())+1 {
			t.Fatalf("a disabled policy is still listed: %d", n)
		}
	})
	t.Run("enabled again it trips again", func(t *testing.T) {
		if v, err := e.kit.Gov.Policies.SetEnabled(e.ctx, e.admin, p.ID, true); err != nil || !v.Enabled || v.DisabledAt != nil {
			t.Fatalf("%+v %v", v, err)
		}
		if res := e.report(t, s, logs); len(res.Violations) != 1 {
			t.Fatalf("enabled again: %+v", res.Violations)
		}
	})
	t.Run("deleted, it trips nothing and is not listed, and its violations stay readable", func(t *testing.T) {
		// A critical violation stays open whatever later reports say.
		crit := e.define(t, governance.PolicyInput{Name: "No launch codes", Severity: "critical", Kind: "content_regex", Pattern: `launch-code-\d+`})
		other := e.session(t)
		res := e.report(t, other, change.Change{Files: []change.File{file("x.txt", "launch-code-42")}})
		if len(res.Violations) != 1 {
			t.Fatalf("%+v", res.Violations)
		}
		vid := res.Violations[0].ID
		if _, err := e.kit.Gov.Policies.Delete(e.ctx, e.admin, crit.ID); err != nil {
			t.Fatal(err)
		}
		_, err := e.kit.Gov.Policies.Delete(e.ctx, e.admin, crit.ID)
		wantErr(t, err, errs.NotFound, "policy_not_found")
		_, err = e.kit.Gov.Policies.SetEnabled(e.ctx, e.admin, crit.ID, true)
		wantErr(t, err, errs.NotFound, "policy_not_found")
		ps, _ := e.kit.Gov.Policies.List(e.ctx)
		for _, x := range ps {
			if x.ID == crit.ID {
				t.Fatal("a deleted policy is listed")
			}
		}
		res = e.report(t, other, change.Change{Files: []change.File{file("x.txt", "launch-code-42"), file("y.txt", "launch-code-7")}})
		if len(res.Violations) != 1 || res.Violations[0].ID != vid || res.Violations[0].Policy != "No launch codes" {
			t.Fatalf("after delete: %+v", res.Violations)
		}
		if b := e.brief(t, other); b.NextAction != protocol.HardStop || !strings.Contains(b.Reason, "No launch codes") {
			t.Fatalf("brief %s %q", b.NextAction, b.Reason)
		}
		if v, err := e.kit.Gov.Changes.ClearViolation(e.ctx, e.lead, vid, "fixed", "removed"); err != nil || v.Policy != "No launch codes" {
			t.Fatalf("clear: %+v %v", v, err)
		}
	})
}

func TestAPolicyStoredBeforeTheBoundsIsNotEnforcedAndStallsNothing(t *testing.T) {
	e := newChangeEnv(t, false)
	huge := strings.Repeat("a", 900_000)
	if err := e.kit.Store.Write(e.ctx, func(q db.Querier) error {
		_, err := q.CreatePolicy(e.ctx, db.CreatePolicyParams{Name: "Huge", Severity: "high", Kind: "content_regex", Pattern: huge,
			Action: "violation", CreatedAt: db.FormatTime(time.Now())})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s := e.session(t)
	res := e.report(t, s, change.Change{Files: []change.File{file("config/deploy.sh", huge+"\n"+awsSecret)}})
	if len(res.Violations) != 1 || res.Violations[0].Policy != policy.SecretsName {
		t.Fatalf("%+v", res.Violations)
	}
	ps, err := e.kit.Gov.Policies.List(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := ps[len(ps)-1]
	if last.Name != "Huge" || !strings.Contains(last.NotEnforced, "at most 1000") {
		t.Fatalf("%+v", last.NotEnforced)
	}
}

// tick is a clock that advances by step on every reading.
type tick struct {
	mu   sync.Mutex
	at   time.Time
	step time.Duration
}

func (c *tick) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(c.step)
	return c.at
}

func TestAChangeOverThePolicyBudgetIsRefusedAndWritesNothing(t *testing.T) {
	e := newChangeEnv(t, false)
	// Every reading of the clock is a second later: the first policy's run
	// over the first file "takes" a second, and the next check finds the
	// evaluation 3 s in, past a 2 s budget. (The files hold the literals
	// the secrets policies look for, so that the prefilter lets them run.)
	e.kit.Gov.Changes.SetEvaluation(2*time.Second, (&tick{step: time.Second}).now, nil)
	s := e.session(t)
	files := []change.File{file("a.go", "package a // AKIA, password: 1\n"), file("b.go", "package b // AKIA, password: 2\n")}
	_, err := e.kit.Gov.Changes.Report(e.ctx, e.agent, s, change.Change{Files: files})
	wantErr(t, err, errs.Unavailable, "policy_evaluation_over_budget")
	var de *errs.Error
	if !errors.As(err, &de) || de.Details["policy"] != policy.SecretsName || !strings.Contains(de.Message, "disable it on the Policies page") {
		t.Fatalf("%#v", err)
	}
	named, _ := de.Details["policy_id"].(int64)
	if _, err := e.kit.Store.Reader().GetChange(e.ctx, s); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("a change was recorded: %v", err)
	}
	evs, err := e.kit.Store.Reader().ListSessionEvents(e.ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if strings.HasPrefix(ev.Kind, "change.") || strings.HasPrefix(ev.Kind, "violation.") {
			t.Fatalf("event %s recorded", ev.Kind)
		}
	}
	t.Run("the policy it names shows its cost on the Policies page", func(t *testing.T) {
		ps, err := e.kit.Gov.Policies.List(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(ps, func(p governance.PolicyView) bool { return p.ID == named })
		if i < 0 || ps[i].Cost.SlowestMS != 1000 || ps[i].Cost.LastMS != 1000 || ps[i].Cost.SlowestAt == nil {
			t.Fatalf("policy %d: %+v", named, ps)
		}
	})
	t.Run("within the budget the same change is recorded", func(t *testing.T) {
		e.kit.Gov.Changes.SetEvaluation(governance.PolicyBudget, time.Now, nil)
		e.report(t, s, change.Change{Files: files})
	})
}

func TestAChangeIsEvaluatedOutsideTheWriteTransaction(t *testing.T) {
	e := newChangeEnv(t, false)
	slow, other := e.session(t), e.session(t)
	// The clock that times each policy blocks, the first time it is read
	// inside the slow session's evaluation, until released: the
	// evaluation is held there, mid-way.
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	reads := 0
	var mu sync.Mutex
	clock := func() time.Time {
		mu.Lock()
		reads++
		n := reads
		mu.Unlock()
		if n == 2 { // the first is the evaluation's start
			once.Do(func() { close(entered); <-release })
		}
		return time.Now()
	}
	e.kit.Gov.Changes.SetEvaluation(time.Hour, clock, nil)
	done := make(chan error, 1)
	go func() {
		_, err := e.kit.Gov.Changes.Report(e.ctx, e.agent, slow, change.Change{Files: []change.File{file("config/deploy.sh", awsSecret)}})
		done <- err
	}()
	<-entered
	// While the evaluation is held, other sessions' writes go through:
	// another agent's gate, a lead's brake. (Were the evaluation inside
	// the single writer's transaction, they would wait for it for ever:
	// the deadline only turns that hang into a failure.)
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	if _, err := e.kit.Gov.Decisions.Open(ctx, e.agent, other, governance.DecisionInput{Title: "T", Question: "Q?"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kit.Gov.Sessions.Pause(ctx, e.lead, other, "wait"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b := e.brief(t, slow); b.NextAction != protocol.HardStop {
		t.Fatalf("brief %s %q", b.NextAction, b.Reason)
	}
}

func TestAReportOnASessionReleasedMeanwhileIsEvaluated(t *testing.T) {
	e := newChangeEnv(t, false)
	s := e.session(t)
	if _, err := e.kit.Gov.Sessions.Pause(e.ctx, e.lead, s, "wait"); err != nil {
		t.Fatal(err)
	}
	// Paused when read, released before the write: the report is read and
	// evaluated again, and recorded.
	released := false
	e.kit.Gov.Changes.SetEvaluation(governance.PolicyBudget, time.Now, func(string) {
		if !released {
			released = true
			if _, err := e.kit.Gov.Sessions.Resume(e.ctx, e.lead, s); err != nil {
				t.Error(err)
			}
		}
	})
	res := e.report(t, s, change.Change{Files: []change.File{file("config/deploy.sh", awsSecret)}})
	if len(res.Violations) != 1 {
		t.Fatalf("%+v", res.Violations)
	}
}
