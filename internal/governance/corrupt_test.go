package governance_test

import (
	"fmt"
	"testing"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
)

// TestCorruptRowsAreErrors stores, with raw SQL, what Madebook never writes
// (a time that is not a time, a list that is not JSON) in a row the
// services made, and checks that the call reading it returns a server
// fault naming the table, the row and the column — never a panic.
func TestCorruptRowsAreErrors(t *testing.T) {
	testkit.CorruptRows(t, newWorld, []testkit.CorruptRow[*world]{
		{Name: "a mission whose required evidence is not JSON fails to read", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			w.Corrupt(`UPDATE missions SET evidence = 'tests' WHERE slug = ?`, w.mission)
			return "missions row " + w.mission + ", column evidence: not a JSON list: invalid character", func() error {
				_, err := w.Gov.Missions.Get(t.Context(), w.mission)
				return err
			}
		}},
		{Name: "a mission whose contract is not JSON fails the missions list", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			w.Corrupt(`UPDATE missions SET contract = '[{' WHERE slug = ?`, w.mission)
			return "missions row " + w.mission + ", column contract: not a JSON list", func() error {
				_, err := w.Gov.Missions.ListSummaries(t.Context())
				return err
			}
		}},
		{Name: "a mission whose contract is not JSON fails a change report on it", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			w.Corrupt(`UPDATE missions SET contract = 'none' WHERE slug = ?`, w.mission)
			return "missions row " + w.mission + ", column contract: not a JSON list", func() error {
				_, err := w.Gov.Changes.Report(t.Context(), w.agent, w.session, change.Change{Files: []change.File{{Path: "a.go", Content: "package a"}}})
				return err
			}
		}},
		{Name: "a session created yesterday fails to show", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			w.Corrupt(`UPDATE sessions SET created_at = 'yesterday' WHERE id = ?`, w.session)
			return "sessions row " + w.session + `, column created_at: stored time "yesterday"`, func() error {
				_, err := w.Gov.Sessions.Get(t.Context(), w.lead, w.session)
				return err
			}
		}},
		{Name: "a session created yesterday fails the sessions list", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			w.Corrupt(`UPDATE sessions SET created_at = 'yesterday' WHERE id = ?`, w.session)
			return "sessions row " + w.session + `, column created_at: stored time "yesterday"`, func() error {
				_, err := w.Gov.Sessions.Page(t.Context(), w.lead, governance.SessionFilter{})
				return err
			}
		}},
		{Name: "a session paused at a malformed time fails its brief", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			must(w.Gov.Sessions.Pause(t.Context(), w.lead, w.session, "Incident"))(t)
			w.Corrupt(`UPDATE sessions SET paused_at = 'now' WHERE id = ?`, w.session)
			return "sessions row " + w.session + `, column paused_at: stored time "now"`, func() error {
				_, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session})
				return err
			}
		}},
		{Name: "a decision whose blocked scope is not JSON fails the session", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Drop it?")))(t)
			w.Corrupt(`UPDATE decisions SET blocked_scope = 'x' WHERE ref = ?`, d.Ref)
			return "decisions row " + d.Ref + ", column blocked_scope: not a JSON list: invalid character 'x'", func() error {
				_, err := w.Gov.Sessions.Get(t.Context(), w.lead, w.session)
				return err
			}
		}},
		{Name: "a decision whose allowed scope is not JSON fails the attention queue", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Drop it?")))(t)
			w.Corrupt(`UPDATE decisions SET allowed_scope = '{}' WHERE ref = ?`, d.Ref)
			return "decisions row " + d.Ref + ", column allowed_scope: not a JSON list", func() error {
				_, err := w.Gov.Attention.List(t.Context())
				return err
			}
		}},
		{Name: "a decision opened at a malformed time fails the brief", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Drop it?")))(t)
			w.Corrupt(`UPDATE decisions SET opened_at = 'Tuesday' WHERE ref = ?`, d.Ref)
			return "decisions row " + d.Ref + `, column opened_at: stored time "Tuesday"`, func() error {
				_, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session})
				return err
			}
		}},
		{Name: "a resolution stamped at a malformed time fails the brief that delivers it", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Drop it?")))(t)
			must(w.Gov.Decisions.Resolve(t.Context(), w.lead, d.Ref, "Drop it", "Keep a backup."))(t)
			w.Corrupt(`UPDATE decisions SET resolved_at = 'soon' WHERE ref = ?`, d.Ref)
			return "decisions row " + d.Ref + `, column resolved_at: stored time "soon"`, func() error {
				_, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session})
				return err
			}
		}},
		{Name: "a plan whose body is not JSON fails the session", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			p := must(w.Gov.Plans.Propose(t.Context(), w.agent, w.session, proposal("Read, then refactor.")))(t)
			w.Corrupt(`UPDATE plans SET body = '{' WHERE id = ?`, p.ID)
			return fmt.Sprintf("plans row %d, column body: not a JSON object", p.ID), func() error {
				_, err := w.Gov.Sessions.Get(t.Context(), w.lead, w.session)
				return err
			}
		}},
		{Name: "a plan proposed at a malformed time fails the attention queue", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			s := w.Session(w.agent, w.risky)
			p := must(w.Gov.Plans.Propose(t.Context(), w.agent, s, proposal("Migrate in two steps.")))(t)
			w.Corrupt(`UPDATE plans SET proposed_at = 'noon' WHERE id = ?`, p.ID)
			return fmt.Sprintf(`plans row %d, column proposed_at: stored time "noon"`, p.ID), func() error {
				_, err := w.Gov.Attention.List(t.Context())
				return err
			}
		}},
		{Name: "a remediation whose files are not JSON fails the session", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			r := must(w.Gov.Remediations.Request(t.Context(), w.lead, w.session, governance.RemediationInput{Severity: "required",
				Instruction: "Fix the test.", Files: []string{"a_test.go"}}))(t)
			w.Corrupt(`UPDATE remediations SET files = 'a_test.go' WHERE id = ?`, r.ID)
			return fmt.Sprintf("remediations row %d, column files: not a JSON list", r.ID), func() error {
				_, err := w.Gov.Sessions.Get(t.Context(), w.lead, w.session)
				return err
			}
		}},
		{Name: "a remediation created at a malformed time fails the brief", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			r := must(w.Gov.Remediations.Request(t.Context(), w.lead, w.session, governance.RemediationInput{Severity: "required",
				Instruction: "Fix the test."}))(t)
			w.Corrupt(`UPDATE remediations SET created_at = 'later' WHERE id = ?`, r.ID)
			return fmt.Sprintf(`remediations row %d, column created_at: stored time "later"`, r.ID), func() error {
				_, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session})
				return err
			}
		}},
		{Name: "an event at a malformed time fails the timeline", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			id := firstID(t, w.Kit, `SELECT MIN(id) FROM events WHERE session_id = ?`, w.session)
			w.DropAppendOnly("events")
			w.Corrupt(`UPDATE events SET at = 'then' WHERE id = ?`, id)
			return fmt.Sprintf(`events row %d, column at: stored time "then"`, id), func() error {
				_, err := w.Gov.Sessions.Get(t.Context(), w.agent, w.session)
				return err
			}
		}},
		{Name: "a change report whose files are not JSON fails the session", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			must(w.Gov.Changes.Report(t.Context(), w.agent, w.session, change.Change{Files: []change.File{{Path: "a.go", Content: "package a"}}}))(t)
			w.Corrupt(`UPDATE changes SET files = 'a.go' WHERE session_id = ?`, w.session)
			return "changes row " + w.session + ", column files: not a JSON list", func() error {
				_, err := w.Gov.Sessions.Get(t.Context(), w.lead, w.session)
				return err
			}
		}},
		{Name: "a critical violation detected at a malformed time fails the attention queue", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			res := must(w.Gov.Changes.Report(t.Context(), w.agent, w.session, change.Change{Files: []change.File{{Path: ".env", Content: awsSecret}}}))(t)
			if len(res.Violations) == 0 {
				t.Fatal("the secret tripped no policy")
			}
			w.Corrupt(`UPDATE violations SET detected_at = 'today' WHERE id = ?`, res.Violations[0].ID)
			return fmt.Sprintf(`violations row %d, column detected_at: stored time "today"`, res.Violations[0].ID), func() error {
				_, err := w.Gov.Attention.List(t.Context())
				return err
			}
		}},
		{Name: "evidence reported at a malformed time fails the session", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			if err := w.Gov.Evidence.Report(t.Context(), w.agent, w.session, governance.EvidenceInput{Kind: "tests", Passed: true}); err != nil {
				t.Fatal(err)
			}
			id := firstID(t, w.Kit, `SELECT MIN(id) FROM evidence WHERE session_id = ?`, w.session)
			w.Corrupt(`UPDATE evidence SET reported_at = 'earlier' WHERE id = ?`, id)
			return fmt.Sprintf(`evidence row %d, column reported_at: stored time "earlier"`, id), func() error {
				_, err := w.Gov.Sessions.Get(t.Context(), w.lead, w.session)
				return err
			}
		}},
		{Name: "a rule whose departures are not JSON fails the rules list", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			r := must(w.Gov.Policies.CreateRule(t.Context(), w.admin, governance.RuleInput{Concern: "http", Chosen: "net/http",
				Departures: []string{"github.com/gin-gonic/gin"}, Support: 9, Total: 10}))(t)
			w.Corrupt(`UPDATE rules SET departures = 'gin' WHERE id = ?`, r.ID)
			return fmt.Sprintf("rules row %d, column departures: not a JSON list", r.ID), func() error {
				_, err := w.Gov.Policies.ListRules(t.Context())
				return err
			}
		}},
		{Name: "a policy created at a malformed time fails the policies list", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			id := firstID(t, w.Kit, `SELECT MIN(id) FROM policies`)
			w.Corrupt(`UPDATE policies SET created_at = 'long ago' WHERE id = ?`, id)
			return fmt.Sprintf(`policies row %d, column created_at: stored time "long ago"`, id), func() error {
				_, err := w.Gov.Policies.List(t.Context())
				return err
			}
		}},
	})
}

// firstID returns the integer a one-value query answers.
func firstID(t *testing.T, k *testkit.Kit, query string, args ...any) int64 {
	t.Helper()
	var id int64
	if err := k.SQL().QueryRowContext(t.Context(), query, args...).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
