package governance_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

// limit is one text field of one input: its limit in characters, and a
// call that sends v in that field, every other field valid.
type limit struct {
	input, field string
	max          int
	// empty is the code for an empty or blank value, "" when empty is fine.
	empty string
	// tooLong is the code for a value over the limit; field+"_too_long"
	// unless it says otherwise.
	tooLong string
	// atMax is the code a value of exactly max characters gets, "" for
	// none (e.g. violation_not_found: the note fits; there is just no
	// such violation).
	atMax string
	send  func(v string) error
}

// TestEveryInputOwnsItsLimits proves, for every text field a person or an
// agent sends governance, that its limit counts characters, not bytes ("é"
// is two bytes), that one character more is <field>_too_long naming the
// field, and that a required field left empty or blank is <field>_required.
func TestEveryInputOwnsItsLimits(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	decision := func(f func(*governance.DecisionInput, string)) func(string) error {
		return func(v string) error {
			in := gate("Drop it?")
			f(&in, v)
			_, err := in.Validate()
			return err
		}
	}
	sessionIn := func(f func(*governance.SessionInput, string)) func(string) error {
		return func(v string) error {
			in := governance.SessionInput{Mission: w.mission}
			f(&in, v)
			_, err := in.Validate()
			return err
		}
	}
	mission := func(f func(*governance.MissionInput, string)) func(string) error {
		return func(v string) error {
			in := governance.MissionInput{Slug: "limits", Title: "Limits"}
			f(&in, v)
			_, err := in.Validate()
			return err
		}
	}
	patch := func(f func(*governance.MissionPatch, string)) func(string) error {
		return func(v string) error {
			var p governance.MissionPatch
			f(&p, v)
			_, err := p.Validate()
			return err
		}
	}
	// proposed is a session of the high-risk mission with a plan waiting
	// for a lead.
	proposed := func(t *testing.T) string {
		s := w.Session(w.agent, w.risky)
		must(w.Gov.Plans.Propose(ctx, w.agent, s, proposal("Do it")))(t)
		return s
	}

	limits := []limit{
		{input: "DecisionInput", field: "title", max: governance.MaxDecisionTitle, empty: "title_required",
			send: decision(func(in *governance.DecisionInput, v string) { in.Title = v })},
		{input: "DecisionInput", field: "question", max: governance.MaxDecisionQuestion, empty: "question_required",
			send: decision(func(in *governance.DecisionInput, v string) { in.Question = v })},
		{input: "DecisionInput", field: "proposal", max: governance.MaxDecisionProposal,
			send: decision(func(in *governance.DecisionInput, v string) { in.Proposal = v })},
		{input: "DecisionInput", field: "blocked_scope", max: governance.MaxScopeEntry, empty: "empty_entry",
			send: decision(func(in *governance.DecisionInput, v string) { in.BlockedScope = []string{v} })},
		{input: "DecisionInput", field: "allowed_scope", max: governance.MaxScopeEntry, empty: "empty_entry",
			send: decision(func(in *governance.DecisionInput, v string) { in.AllowedScope = []string{v} })},
		{input: "ResolutionInput", field: "resolution", max: governance.MaxResolution, empty: "resolution_required",
			send: func(v string) error {
				_, err := governance.ResolutionInput{Resolution: v, Instruction: "Go"}.Validate()
				return err
			}},
		{input: "ResolutionInput", field: "instruction", max: governance.MaxInstruction, empty: "instruction_required",
			send: func(v string) error {
				_, err := governance.ResolutionInput{Resolution: "Yes", Instruction: v}.Validate()
				return err
			}},
		{input: "SessionInput", field: "mission", max: governance.MaxSessionMission, empty: "mission_required",
			send: sessionIn(func(in *governance.SessionInput, v string) { in.Mission = v })},
		{input: "SessionInput", field: "agent", max: governance.MaxSessionAgent,
			send: sessionIn(func(in *governance.SessionInput, v string) { in.Agent = v })},
		{input: "SessionInput", field: "title", max: governance.MaxSessionTitle,
			send: sessionIn(func(in *governance.SessionInput, v string) { in.Title = v })},
		{input: "pause", field: "reason", max: governance.MaxPauseReason, send: func(v string) error {
			_, err := w.Gov.Sessions.Pause(ctx, w.lead, w.Session(w.agent, w.mission), v)
			return err
		}},
		{input: "MissionInput", field: "title", max: governance.MaxMissionTitle, empty: "title_required",
			send: mission(func(in *governance.MissionInput, v string) { in.Title = v })},
		{input: "MissionInput", field: "text", max: governance.MaxMissionText,
			send: mission(func(in *governance.MissionInput, v string) { in.Text = v })},
		{input: "MissionInput", field: "evidence", max: governance.MaxEvidenceKind, empty: "empty_entry",
			send: mission(func(in *governance.MissionInput, v string) { in.Evidence = []string{v} })},
		{input: "MissionInput", field: "contract", max: governance.MaxClauseValue, empty: "invalid_clause",
			send: mission(func(in *governance.MissionInput, v string) {
				in.Contract = []governance.Clause{{Kind: protocol.ForbidDependency, Value: v}}
			})},
		{input: "MissionPatch", field: "title", max: governance.MaxMissionTitle, empty: "title_required",
			send: patch(func(p *governance.MissionPatch, v string) { p.Title = &v })},
		{input: "MissionPatch", field: "text", max: governance.MaxMissionText,
			send: patch(func(p *governance.MissionPatch, v string) { p.Text = &v })},
		{input: "MissionPatch", field: "evidence", max: governance.MaxEvidenceKind, empty: "empty_entry",
			send: patch(func(p *governance.MissionPatch, v string) { p.Evidence = &[]string{v} })},
		{input: "MissionPatch", field: "contract", max: governance.MaxClauseValue, empty: "invalid_clause",
			send: patch(func(p *governance.MissionPatch, v string) {
				p.Contract = &[]governance.Clause{{Kind: protocol.ForbidDependency, Value: v}}
			})},
		{input: "PlanInput", field: "summary", max: governance.MaxPlanSummary, empty: "summary_required",
			send: func(v string) error { _, err := proposal(v).Validate(); return err }},
		{input: "approve", field: "note", max: governance.MaxNote, send: func(v string) error {
			_, err := w.Gov.Plans.Approve(ctx, w.lead, proposed(t), v)
			return err
		}},
		{input: "reject", field: "note", max: governance.MaxNote, send: func(v string) error {
			_, err := w.Gov.Plans.Reject(ctx, w.lead, proposed(t), v)
			return err
		}},
		{input: "RemediationInput", field: "instruction", max: governance.MaxRemediationInstruction, empty: "instruction_required",
			send: func(v string) error {
				_, err := governance.RemediationInput{Severity: governance.SeverityRequired, Instruction: v}.Validate()
				return err
			}},
		{input: "RemediationInput", field: "files", max: governance.MaxRemediationFile, empty: "empty_entry",
			send: func(v string) error {
				_, err := governance.RemediationInput{Severity: governance.SeverityRequired, Instruction: "Fix", Files: []string{v}}.Validate()
				return err
			}},
		{input: "close", field: "note", max: governance.MaxNote, send: func(v string) error {
			r := must(w.Gov.Remediations.Request(ctx, w.lead, w.session, governance.RemediationInput{
				Severity: governance.SeverityAdvisory, Instruction: "Tidy up"}))(t)
			_, err := w.Gov.Remediations.Close(ctx, w.lead, r.ID, v)
			return err
		}},
		{input: "clear", field: "note", max: governance.MaxNote, atMax: "violation_not_found", send: func(v string) error {
			_, err := w.Gov.Changes.ClearViolation(ctx, w.lead, 999999, "fixed", v)
			return err
		}},
		{input: "EvidenceInput", field: "kind", max: governance.MaxEvidenceKind, empty: "kind_required",
			send: func(v string) error { _, err := governance.EvidenceInput{Kind: v}.Validate(); return err }},
		{input: "EvidenceInput", field: "detail", max: governance.MaxEvidenceDetail,
			send: func(v string) error {
				_, err := governance.EvidenceInput{Kind: "tests", Detail: v}.Validate()
				return err
			}},
		{input: "PolicyInput", field: "name", max: governance.MaxPolicyName, empty: "invalid_policy",
			send: func(v string) error {
				_, err := governance.PolicyInput{Name: v, Severity: "high", Kind: "dependency", Pattern: "left-pad"}.Validate()
				return err
			}},
		{input: "PolicyInput", field: "pattern", max: governance.MaxPolicyPattern, empty: "invalid_policy",
			send: func(v string) error {
				_, err := governance.PolicyInput{Name: "No", Severity: "high", Kind: "dependency", Pattern: v}.Validate()
				return err
			}},
		{input: "RuleInput", field: "concern", max: governance.MaxRuleConcern, empty: "invalid_rule",
			send: func(v string) error { _, err := rule(v, "React Query", "swr").Validate(); return err }},
		{input: "RuleInput", field: "chosen", max: governance.MaxRuleChosen, empty: "invalid_rule",
			send: func(v string) error { _, err := rule("server state", v, "swr").Validate(); return err }},
		{input: "RuleInput", field: "departures", max: governance.MaxRuleDeparture, empty: "invalid_rule",
			send: func(v string) error { _, err := rule("server state", "React Query", v).Validate(); return err }},
		{input: "RiskGates", field: "high", max: governance.MaxRiskGate, tooLong: "gate_too_long", send: func(v string) error {
			_, err := w.Gov.Policies.SetRiskGates(ctx, w.admin, governance.RiskGates{"high": v})
			return err
		}},
	}
	for _, l := range limits {
		tooLong := l.tooLong
		if tooLong == "" {
			tooLong = l.field + "_too_long"
		}
		t.Run(l.input+" "+l.field+" fits "+strconv.Itoa(l.max)+" characters, however many bytes", func(t *testing.T) {
			if err := l.send(strings.Repeat("é", l.max)); errs.CodeOf(err) != l.atMax && !(err == nil && l.atMax == "") {
				t.Fatalf("%d characters: %v (%s), want %q", l.max, err, errs.CodeOf(err), l.atMax)
			}
		})
		t.Run(l.input+" "+l.field+" over "+strconv.Itoa(l.max)+" characters is "+tooLong, func(t *testing.T) {
			err := l.send(strings.Repeat("é", l.max+1))
			if errs.CodeOf(err) != tooLong || errs.KindOf(err) != errs.Invalid || errs.FieldOf(err) != l.field {
				t.Fatalf("%d characters: %v (%s about %q), want %s about %s", l.max+1, err, errs.CodeOf(err), errs.FieldOf(err), tooLong, l.field)
			}
		})
		t.Run(l.input+" "+l.field+" with a NUL or an ESC sequence is invalid_characters", func(t *testing.T) {
			for _, v := range []string{"ok\x00", "\x1b]0;retitled\x07ok"} {
				err := l.send(v)
				if errs.CodeOf(err) != "invalid_characters" || errs.KindOf(err) != errs.Invalid || errs.FieldOf(err) != l.field {
					t.Fatalf("%q: %v (%s about %q), want invalid_characters about %s", v, err, errs.CodeOf(err), errs.FieldOf(err), l.field)
				}
			}
		})
		if l.empty == "" {
			continue
		}
		t.Run(l.input+" "+l.field+" empty or blank is "+l.empty, func(t *testing.T) {
			for _, v := range []string{"", " \t\n"} {
				err := l.send(v)
				if errs.CodeOf(err) != l.empty || errs.FieldOf(err) != l.field {
					t.Fatalf("%q: %v (%s about %q), want %s about %s", v, err, errs.CodeOf(err), errs.FieldOf(err), l.empty, l.field)
				}
			}
		})
	}
}

// rule is an architecture rule's input with one departure.
func rule(concern, chosen, departure string) governance.RuleInput {
	return governance.RuleInput{Concern: concern, Chosen: chosen, Departures: []string{departure}, Support: 3, Total: 4}
}
