package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/rules"
)

// PolicyView is a policy as the API shows it.
type PolicyView struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Severity  string    `json:"severity"`
	Kind      string    `json:"kind"`
	Pattern   string    `json:"pattern"`
	Action    string    `json:"action"`
	Builtin   bool      `json:"builtin"`
	CreatedAt time.Time `json:"created_at"`
	// Enabled is false for a disabled policy, which trips nothing.
	Enabled    bool       `json:"enabled"`
	DisabledAt *time.Time `json:"disabled_at,omitempty"`
	// NotEnforced, when set, says why a policy stored before the current
	// bounds is left out of every evaluation (see PolicyService.List).
	NotEnforced string `json:"not_enforced,omitempty"`
	// Cost is what the policy costs to run (see PolicyCostView).
	Cost PolicyCostView `json:"cost"`
}

// PolicyCostView is what a policy costs to run: for a content_regex, its
// compiled size and its threads per character over a fixed sample of
// source (the figures the bounds apply to, the same on every machine),
// and the time it took over the changes evaluated since the server
// started.
type PolicyCostView struct {
	Program int     `json:"program,omitempty"`
	PerChar float64 `json:"per_char,omitempty"`
	PolicyCost
}

// The limits of a policy, in characters (runes). A content_regex is also
// bounded in cost: policy.MaxProgram instructions, policy.MaxCost threads
// per character (pattern_too_costly).
const (
	MaxPolicyName    = input.Name        // what people call it
	MaxPolicyPattern = policy.MaxPattern // the regular expression, glob or dependency
)

// PolicyInput is what an admin gives to define a policy.
type PolicyInput struct {
	Name     string `json:"name"`
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	Pattern  string `json:"pattern"`
	Action   string `json:"action"`
}

// Validate returns the policy the input defines, its name trimmed and its
// pattern as given (a space may be part of a regular expression), and
// violation when it names no action. Every error names its field. Errors:
// name_too_long, pattern_too_long, invalid_policy (what policy.Validate
// finds wrong, an empty name among it), pattern_too_costly.
func (in PolicyInput) Validate() (policy.Policy, error) {
	name, err := input.Optional("name", in.Name, MaxPolicyName)
	if err != nil {
		return policy.Policy{}, err
	}
	if _, err := input.Optional("pattern", in.Pattern, MaxPolicyPattern); err != nil {
		return policy.Policy{}, err
	}
	p := policy.Policy{Name: name, Severity: protocol.Severity(in.Severity), Kind: policy.Kind(in.Kind),
		Pattern: in.Pattern, Action: policy.Action(in.Action)}
	if p.Action == "" {
		p.Action = policy.ActionViolation
	}
	return p, policy.Validate(p)
}

// PolicyService keeps what the workspace holds changes to: the policies,
// the architecture rules and the risk gates.
type PolicyService struct {
	core *core
	// log is the server's log (Options.Logger); costs is what each policy
	// cost over the changes evaluated (shared with ChangeService).
	log   *slog.Logger
	costs *policyCosts
}

const defaultPoliciesKey = "default_policies_installed"

// InstallDefaults installs the "Secrets in source" policy set once,
// on a fresh database; deleting them later does not bring them back.
func (s *PolicyService) InstallDefaults(ctx context.Context) error {
	now := s.core.now()
	return s.core.write(ctx, func(q db.Querier) error {
		if _, err := q.GetSetting(ctx, defaultPoliciesKey); err == nil {
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		for _, p := range policy.SecretsInSource() {
			if _, err := q.CreatePolicy(ctx, db.CreatePolicyParams{Name: p.Name, Severity: string(p.Severity), Kind: string(p.Kind),
				Pattern: p.Pattern, Action: string(p.Action), Builtin: true, CreatedAt: db.FormatTime(now)}); err != nil {
				return err
			}
		}
		return q.SetSetting(ctx, db.SetSettingParams{Key: defaultPoliciesKey, Value: db.FormatTime(now)})
	})
}

// Create defines a policy (admin). An invalid pattern is refused with
// its compile error. Errors: forbidden, those of PolicyInput.Validate.
func (s *PolicyService) Create(ctx context.Context, actor auth.Actor, in PolicyInput) (PolicyView, error) {
	if err := actor.RequireAdmin("define a policy"); err != nil {
		return PolicyView{}, err
	}
	p, err := in.Validate()
	if err != nil {
		return PolicyView{}, err
	}
	var row db.Policy
	err = s.core.write(ctx, func(q db.Querier) error {
		var err error
		row, err = q.CreatePolicy(ctx, db.CreatePolicyParams{Name: p.Name, Severity: string(p.Severity), Kind: string(p.Kind),
			Pattern: p.Pattern, Action: string(p.Action), CreatedAt: db.FormatTime(s.core.now()),
			CreatedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}})
		if err != nil {
			return err
		}
		return s.core.did(ctx, q, actor, activity.PolicyCreate, policyTarget(row), nil, policyState(row))
	})
	if err != nil {
		return PolicyView{}, fmt.Errorf("create policy %q: %w", p.Name, err)
	}
	s.adminDid(ctx, actor, "policy.created", row, "kind", row.Kind, "severity", row.Severity, "pattern", row.Pattern)
	v, err := s.policyView(row)
	if err != nil {
		return PolicyView{}, fmt.Errorf("create policy %q: %w", p.Name, err)
	}
	return v, nil
}

// SetEnabled disables a policy (admin), so that it trips nothing from the
// next change report on, or enables it again. The violations it found
// stay as they are. Errors: forbidden, policy_not_found.
func (s *PolicyService) SetEnabled(ctx context.Context, actor auth.Actor, id int64, enabled bool) (PolicyView, error) {
	what := "disable a policy"
	if enabled {
		what = "enable a policy"
	}
	if err := actor.RequireAdmin(what); err != nil {
		return PolicyView{}, err
	}
	arg := db.SetPolicyDisabledParams{ID: id}
	if !enabled {
		arg.DisabledAt = db.NullTime(s.core.now())
		arg.DisabledBy = sql.NullInt64{Int64: actor.UserID, Valid: actor.UserID != 0}
	}
	action := activity.PolicyDisable
	if enabled {
		action = activity.PolicyEnable
	}
	var row db.Policy
	err := s.core.write(ctx, func(q db.Querier) error {
		was, err := q.GetPolicy(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "policy_not_found", "No policy has the id %d.", id)
		} else if err != nil {
			return err
		}
		if row, err = q.SetPolicyDisabled(ctx, arg); err != nil {
			return err
		}
		if before, after := policyState(was), policyState(row); activity.Changed(before, after) {
			return s.core.did(ctx, q, actor, action, policyTarget(row), before, after)
		}
		return nil
	})
	if err != nil {
		return PolicyView{}, fmt.Errorf("%s %d: %w", what, id, err)
	}
	logged := "policy.disabled"
	if enabled {
		logged = "policy.enabled"
	}
	s.adminDid(ctx, actor, logged, row)
	return s.policyView(row)
}

// Delete deletes a policy (admin): it trips nothing any more and is
// listed no more. The row is kept, marked deleted, so that the violations
// it found stay readable as they were. Errors: forbidden,
// policy_not_found.
func (s *PolicyService) Delete(ctx context.Context, actor auth.Actor, id int64) (PolicyView, error) {
	if err := actor.RequireAdmin("delete a policy"); err != nil {
		return PolicyView{}, err
	}
	var row db.Policy
	err := s.core.write(ctx, func(q db.Querier) error {
		var err error
		row, err = q.DeletePolicy(ctx, db.DeletePolicyParams{ID: id, DeletedAt: db.NullTime(s.core.now()),
			DeletedBy: sql.NullInt64{Int64: actor.UserID, Valid: actor.UserID != 0}})
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "policy_not_found", "No policy has the id %d.", id)
		} else if err != nil {
			return err
		}
		return s.core.did(ctx, q, actor, activity.PolicyDelete, policyTarget(row), policyState(row), nil)
	})
	if err != nil {
		return PolicyView{}, fmt.Errorf("delete policy %d: %w", id, err)
	}
	s.adminDid(ctx, actor, "policy.deleted", row)
	return s.policyView(row)
}

// adminDid logs an admin's change to a policy, who did it and when, in
// the server log, besides the admin activity record written with it.
func (s *PolicyService) adminDid(ctx context.Context, actor auth.Actor, action string, p db.Policy, attrs ...any) {
	s.log.InfoContext(ctx, "admin action", append([]any{"action", action, "target", fmt.Sprintf("policy %d (%s)", p.ID, p.Name),
		"by", actor.Label(), "by_id", actor.UserID}, attrs...)...)
}

// policyTarget names a policy in the admin activity.
func policyTarget(p db.Policy) string { return fmt.Sprintf("policy %d (%s)", p.ID, p.Name) }

// policyState is what the admin activity records of a policy.
func policyState(p db.Policy) activity.State {
	return activity.State{"name": p.Name, "severity": p.Severity, "kind": p.Kind, "pattern": p.Pattern, "action": p.Action,
		"builtin": p.Builtin, "enabled": !p.DisabledAt.Valid}
}

// List lists every policy but the deleted ones, disabled ones too, each
// with its cost. A policy stored before the current bounds that they
// refuse is listed with not_enforced saying why: it is left out of every
// evaluation.
func (s *PolicyService) List(ctx context.Context) ([]PolicyView, error) {
	rows, err := s.core.store.Reader().ListPolicies(ctx)
	if err != nil {
		return nil, fmt.Errorf("list policies: %w", err)
	}
	out := make([]PolicyView, len(rows))
	for i, r := range rows {
		if out[i], err = s.policyView(r); err != nil {
			return nil, fmt.Errorf("list policies: %w", err)
		}
	}
	return out, nil
}

// policyView converts a policies row; an error names the row.
func (s *PolicyService) policyView(r db.Policy) (PolicyView, error) {
	c := db.StoredRow("policies", r.ID)
	v := PolicyView{ID: r.ID, Name: r.Name, Severity: r.Severity, Kind: r.Kind, Pattern: r.Pattern, Action: r.Action,
		Builtin: r.Builtin, CreatedAt: c.Time("created_at", r.CreatedAt), Enabled: !r.DisabledAt.Valid,
		DisabledAt: c.TimePtr("disabled_at", r.DisabledAt)}
	if err := c.Err(); err != nil {
		return PolicyView{}, err
	}
	if err := policy.Validate(policyFrom(r)); err != nil {
		v.NotEnforced = err.Error()
	} else if r.Kind == string(policy.KindContentRegex) {
		perChar, program := policy.Cost(r.Pattern)
		v.Cost.PerChar, v.Cost.Program = math.Round(perChar*100)/100, program
	}
	v.Cost.PolicyCost, _ = s.costs.get(r.ID)
	return v, nil
}

// RuleView is an architecture rule as the API shows it.
type RuleView struct {
	ID         int64     `json:"id"`
	Concern    string    `json:"concern"`
	Chosen     string    `json:"chosen"`
	Departures []string  `json:"departures"`
	Support    int64     `json:"support"`
	Total      int64     `json:"total"`
	Confidence int       `json:"confidence"`
	Enforced   bool      `json:"enforced"`
	CreatedAt  time.Time `json:"created_at"`
}

// The limits of an architecture rule, in characters (runes) or entries.
const (
	MaxRuleConcern    = input.Name // what the rule decides: "server state"
	MaxRuleChosen     = input.Name // the approach chosen: "React Query"
	MaxRuleDepartures = 50         // the most departures one rule lists
	MaxRuleDeparture  = input.Name // one of them: "redux-toolkit"
)

// RuleInput is what an admin gives to define a rule.
type RuleInput struct {
	Concern    string   `json:"concern"`
	Chosen     string   `json:"chosen"`
	Departures []string `json:"departures"`
	Support    int      `json:"support"`
	Total      int      `json:"total"`
	Enforced   bool     `json:"enforced"`
}

// Validate returns the rule the input defines, or what is wrong with it:
// first what rules.Rule.Validate finds (an empty concern, chosen approach
// or departure among it), then a field over its limit. Every error names
// its field. Errors: invalid_rule, concern_too_long, chosen_too_long,
// too_many_entries, departures_too_long.
func (in RuleInput) Validate() (rules.Rule, error) {
	r := rules.Rule{Concern: in.Concern, Chosen: in.Chosen, Departures: in.Departures, Support: in.Support, Total: in.Total,
		Enforced: in.Enforced}
	if err := r.Validate(); err != nil {
		return r, err
	}
	if _, err := input.Optional("concern", r.Concern, MaxRuleConcern); err != nil {
		return r, err
	}
	if _, err := input.Optional("chosen", r.Chosen, MaxRuleChosen); err != nil {
		return r, err
	}
	if _, err := input.List("departures", r.Departures, MaxRuleDepartures, MaxRuleDeparture); err != nil {
		return r, err
	}
	return r, nil
}

// CreateRule defines an architecture rule (admin); its confidence is
// support/total. Errors: forbidden, those of RuleInput.Validate.
func (s *PolicyService) CreateRule(ctx context.Context, actor auth.Actor, in RuleInput) (RuleView, error) {
	if err := actor.RequireAdmin("define an architecture rule"); err != nil {
		return RuleView{}, err
	}
	r, err := in.Validate()
	if err != nil {
		return RuleView{}, err
	}
	var row db.Rule
	err = s.core.write(ctx, func(q db.Querier) error {
		var err error
		row, err = q.CreateRule(ctx, db.CreateRuleParams{Concern: r.Concern, Chosen: r.Chosen, Departures: encodeList(r.Departures),
			Support: int64(r.Support), Total: int64(r.Total), Enforced: r.Enforced, CreatedAt: db.FormatTime(s.core.now()),
			CreatedBy: sql.NullInt64{Int64: actor.UserID, Valid: actor.UserID != 0}})
		if err != nil {
			return err
		}
		return s.core.did(ctx, q, actor, activity.RuleCreate, fmt.Sprintf("rule %d (%s)", row.ID, row.Concern), nil, ruleState(r))
	})
	if err != nil {
		return RuleView{}, fmt.Errorf("create rule: %w", err)
	}
	v, err := ruleView(row)
	if err != nil {
		return RuleView{}, fmt.Errorf("create rule: %w", err)
	}
	return v, nil
}

// ListRules lists every architecture rule.
func (s *PolicyService) ListRules(ctx context.Context) ([]RuleView, error) {
	rows, err := s.core.store.Reader().ListRules(ctx)
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	out := make([]RuleView, len(rows))
	for i, r := range rows {
		if out[i], err = ruleView(r); err != nil {
			return nil, fmt.Errorf("list rules: %w", err)
		}
	}
	return out, nil
}

// ruleView converts a rules row for the API; an error names the row.
func ruleView(r db.Rule) (RuleView, error) {
	c := db.StoredRow("rules", r.ID)
	d := protocol.Deviation{Support: int(r.Support), Total: int(r.Total)}
	v := RuleView{ID: r.ID, Concern: r.Concern, Chosen: r.Chosen, Departures: c.List("departures", r.Departures), Support: r.Support,
		Total: r.Total, Confidence: d.ConfidencePercent(), Enforced: r.Enforced, CreatedAt: c.Time("created_at", r.CreatedAt)}
	if err := c.Err(); err != nil {
		return RuleView{}, err
	}
	return v, nil
}

// ruleState is what the admin activity records of a rule.
func ruleState(r rules.Rule) activity.State {
	departures := r.Departures
	if departures == nil {
		departures = []string{}
	}
	return activity.State{"concern": r.Concern, "chosen": r.Chosen, "departures": departures, "support": r.Support,
		"total": r.Total, "enforced": r.Enforced}
}

// ImportRules stores inferred rules as advisory, for the operator's
// `madebook rules infer --apply`, and returns how many it stored; the
// admin activity records the import as one action. Errors: forbidden
// (actor is neither an admin nor the command line), invalid_rule (none
// is stored then).
func (s *PolicyService) ImportRules(ctx context.Context, actor auth.Actor, rs []rules.Rule) (int, error) {
	if err := actor.RequireOperator("import architecture rules"); err != nil {
		return 0, err
	}
	for _, r := range rs {
		if err := r.Validate(); err != nil {
			return 0, errs.E(errs.Invalid, "invalid_rule", "%s: %v", r.Concern, err)
		}
	}
	now := s.core.now()
	err := s.core.write(ctx, func(q db.Querier) error {
		imported := make([]activity.State, 0, len(rs))
		for _, r := range rs {
			row, err := q.CreateRule(ctx, db.CreateRuleParams{Concern: r.Concern, Chosen: r.Chosen, Departures: encodeList(r.Departures),
				Support: int64(r.Support), Total: int64(r.Total), Enforced: false, CreatedAt: db.FormatTime(now)})
			if err != nil {
				return err
			}
			r.Enforced = false
			st := ruleState(r)
			st["id"] = row.ID
			imported = append(imported, st)
		}
		if len(rs) == 0 {
			return nil
		}
		return s.core.did(ctx, q, actor, activity.RulesImport, fmt.Sprintf("%d rules", len(rs)), nil, activity.State{"rules": imported})
	})
	if err != nil {
		return 0, fmt.Errorf("import rules: %w", err)
	}
	return len(rs), nil
}
