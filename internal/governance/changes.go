package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/glob"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/rules"
)

// The limits of a change report: its files, dependencies and symbols, in
// entries, and one path, dependency or symbol, in characters. A file's
// content is not limited here (the body's 1 MiB is), nor checked for
// control characters: it is code, scanned and never shown raw.
const (
	MaxChangeFiles        = 2000
	MaxChangePath         = 1000
	MaxChangeDependencies = 2000
	MaxChangeDependency   = 2000
	MaxChangeSymbols      = 10000
	MaxChangeSymbol       = 500
)

// ChangeService evaluates the changes agents report and clears the
// violations people have looked at.
type ChangeService struct {
	core *core
	// log is the server's log (Options.Logger); costs is what each policy
	// cost over the changes evaluated (shared with PolicyService).
	log   *slog.Logger
	costs *policyCosts
	// compiled is the policy set, compiled once per version of the policies.
	compiled struct {
		mu sync.Mutex
		p  *compiledPolicies
	}
	// budget is how long evaluating the policies over one change may
	// take (PolicyBudget); clock times it.
	budget time.Duration
	clock  func() time.Time
	// slots holds one token per evaluation in flight.
	slots chan struct{}
	// evaluated, when set, is called after a report's evaluation and
	// before its write (tests).
	evaluated func(session string)
}

// ChangeResult is what Madebook found in a reported change.
type ChangeResult struct {
	Violations []Violation  `json:"violations"`
	Deviations []Deviation  `json:"deviations"`
	Breaches   []BreachView `json:"breaches"`
	Collisions []Collision  `json:"collisions"`
	Risk       change.Risk  `json:"risk"`
}

// Violation is an open policy violation of a session's change.
type Violation struct {
	ID         int64     `json:"id"`
	Policy     string    `json:"policy"`
	Severity   string    `json:"severity"`
	Action     string    `json:"action"`
	Match      string    `json:"match"`
	File       string    `json:"file"`
	Line       int64     `json:"line"`
	DetectedAt time.Time `json:"detected_at"`
	// Approvals are the clearings of a critical violation waiting for a
	// second, different lead on a two-person mission ("1 of 2"); it stays
	// open until then.
	Approvals []Approval `json:"approvals,omitempty"`
	// VoidApprovals are approvals that stand but no longer count: their
	// people can no longer approve (each says why).
	VoidApprovals []Approval `json:"void_approvals,omitempty"`
}

// Deviation is a departure from an architecture rule.
type Deviation struct {
	ID         int64     `json:"id"`
	Rule       int64     `json:"rule"`
	Departure  string    `json:"departure"`
	Chosen     string    `json:"chosen"`
	Concern    string    `json:"concern"`
	Confidence int       `json:"confidence"`
	Enforced   bool      `json:"enforced"`
	Files      []string  `json:"files"`
	DetectedAt time.Time `json:"detected_at"`
}

// BreachView is a broken mission contract clause.
type BreachView struct {
	Clause string   `json:"clause"`
	Kind   string   `json:"kind"`
	Value  string   `json:"value"`
	Found  []string `json:"found"`
}

// Collision is another session building against a symbol this one changed.
type Collision struct {
	Symbol       string `json:"symbol"`
	OtherSession string `json:"other_session"`
}

// Report evaluates the session's whole change so far against the
// policies, the architecture rules, the mission's contract and the other
// sessions' changes, and records what it found; each report replaces the
// last. A critical violation stays open until a person clears it (an agent
// must not make a HARD_STOP go away by hiding what tripped it); everything
// else a later report no longer has closes by itself. A new high
// violation, and a departure from an enforced rule held with 70%
// confidence or more, raises a required remediation (source violation,
// rule), which closes with it.
//
// The content_regex policies also run over the files' paths and the
// dependencies (policy.Set.ScanNames): what they match there is a
// violation naming the path or dependency, and is replaced by [REDACTED]
// before the path or dependency is stored or answered.
//
// While the session's brief holds a BLOCKED reason (the brake, a plan not
// yet approved on a high-risk mission, a plan being revised) the change is
// refused with code_change_blocked, carrying the brief's next_action and
// reason, and evaluated no further. The refusal is the one that writes:
// the attempt is kept (a blocked_changes row and a change.blocked event in
// the timeline) for the blocked-changes audit report. Errors: forbidden,
// session_not_found, invalid_change, files_too_long, dependencies_too_long,
// symbols_changed_too_long, symbols_used_too_long, too_many_entries,
// invalid_characters (a path, dependency or symbol with a control
// character), code_change_blocked.
func (s *ChangeService) Report(ctx context.Context, actor auth.Actor, session string, c change.Change) (ChangeResult, error) {
	if err := actor.RequireAgent("report a change"); err != nil {
		return ChangeResult{}, err
	}
	if err := validChange(&c); err != nil {
		return ChangeResult{}, err
	}
	// A session that was BLOCKED when the policies were read and is not
	// any more when the write begins is read and evaluated again; a
	// second such race is answered 409.
	for range 2 {
		res, err := s.report(ctx, actor, session, c)
		if !errors.Is(err, errUnblocked) {
			if err != nil {
				return ChangeResult{}, fmt.Errorf("report change on %s: %w", session, err)
			}
			return res, nil
		}
	}
	return ChangeResult{}, errs.E(errs.Conflict, "session_changed",
		"Session %s was released while its change was being reported; report the change again.", session)
}

// errUnblocked is report's answer when the session was BLOCKED when the
// policies were read, so the change was not evaluated, but is not when
// the write begins.
var errUnblocked = errors.New("the session is no longer blocked")

// report is one attempt at Report. The policies are evaluated first,
// outside any write transaction (the costly part, and the one that must
// not hold up other sessions' writes, since the store has one writer):
// the session and the policies are read in one read transaction, the
// change is evaluated against that snapshot of the policies, and only
// then does the write transaction record the result. A policy added,
// disabled or deleted between the read and the write applies from the
// next report: this one is judged by the policies it was evaluated
// against (and its paths and dependencies are scanned for secrets with
// them, before anything is stored). Everything else the write reads
// itself, in its own snapshot:
// whether the session is BLOCKED, the rules, the mission's contract and
// the risk gates (all cheap to evaluate).
func (s *ChangeService) report(ctx context.Context, actor auth.Actor, session string, c change.Change) (ChangeResult, error) {
	now := s.core.now()
	var (
		pols    *compiledPolicies
		blocked bool
	)
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		if _, err := ownSession(ctx, q, actor, session, "report a change"); err != nil {
			return err
		}
		in, err := loadInputs(ctx, q, session)
		if err != nil {
			return err
		}
		_, _, blocked = blockedReason(in.facts, now) // refused below, in the write that keeps the attempt
		pols, err = s.policies(ctx, q)
		return err
	})
	if err != nil {
		return ChangeResult{}, err
	}
	// A secret in a path or a dependency is found and redacted before
	// anything is stored, the blocked attempt included.
	c, named := pols.set.ScanNames(c)
	var findings []policy.Finding
	if !blocked {
		if findings, err = s.evaluate(ctx, pols, session, c); err != nil {
			return ChangeResult{}, err
		}
	}
	findings = append(findings, named...)
	if s.evaluated != nil {
		s.evaluated(session)
	}
	var res ChangeResult
	var refused error
	err = s.core.write(ctx, func(q db.Querier) error {
		sess, err := ownSession(ctx, q, actor, session, "report a change")
		if err != nil {
			return err
		}
		if refused, err = s.refuseBlocked(ctx, q, actor, session, c, now); err != nil || refused != nil {
			return err
		}
		if blocked {
			return errUnblocked
		}
		rs, err := q.ListRules(ctx)
		if err != nil {
			return err
		}
		ruleList := make([]rules.Rule, len(rs))
		for i, r := range rs {
			if ruleList[i], err = ruleFrom(r); err != nil {
				return err
			}
		}
		devs := rules.Deviations(ruleList, c)
		mrow, err := q.GetMissionBySlug(ctx, sess.MissionSlug)
		if err != nil {
			return err
		}
		m, err := missionFrom(mrow)
		if err != nil {
			return err
		}
		breaches := change.Breaches(m.Contract, c)
		gates, err := riskGates(ctx, q)
		if err != nil {
			return err
		}
		risk := change.Score(c, change.RiskOptions{Sensitive: pols.sensitive, Gates: gates})

		if err := s.recordChange(ctx, q, session, c, risk, now); err != nil {
			return err
		}
		if err := s.recordViolations(ctx, q, actor, session, findings, now); err != nil {
			return err
		}
		if err := s.recordDeviations(ctx, q, actor, session, devs, ruleList, now); err != nil {
			return err
		}
		if err := s.recordBreaches(ctx, q, session, breaches, now); err != nil {
			return err
		}
		if err := s.recordCollisions(ctx, q, actor, session, c, now); err != nil {
			return err
		}
		if err := s.core.event(ctx, q, session, actor, now, "change.reported", "", fmt.Sprintf("%s, risk %d (%s)",
			countOf(len(c.Files), "file", "files"), risk.Score, risk.Band)); err != nil {
			return err
		}
		res, err = changeResult(ctx, q, session, risk)
		return err
	})
	if err == nil {
		err = refused
	}
	if err != nil {
		return ChangeResult{}, err
	}
	return res, nil
}

// blockedReason returns the brief the facts give and its first BLOCKED
// reason, and whether there is one; a HARD_STOP leaves the BLOCKED
// reasons in also. Nothing is written out: the reason's words are
// rendered only by a caller that refuses.
func blockedReason(f protocol.Facts, now time.Time) (protocol.Brief, protocol.Reason, bool) {
	b := protocol.Decide(f, now)
	for _, rs := range [...][]protocol.Reason{b.Reasons, b.Also} {
		for _, r := range rs {
			if r.State == protocol.Blocked {
				return b, r, true
			}
		}
	}
	return b, protocol.Reason{}, false
}

// refuseBlocked returns the code_change_blocked refusal when the session's
// brief, read in q's transaction, holds a BLOCKED reason, after keeping
// the attempt (a blocked_changes row and a change.blocked event); nil when
// the change may be evaluated.
func (s *ChangeService) refuseBlocked(ctx context.Context, q db.Querier, actor auth.Actor, session string, c change.Change,
	now time.Time) (refusal, err error) {
	in, err := loadInputs(ctx, q, session)
	if err != nil {
		return nil, err
	}
	b, why, blocked := blockedReason(in.facts, now)
	if !blocked {
		return nil, nil
	}
	text := why.Text.String()
	files := make([]string, len(c.Files))
	for i, f := range c.Files {
		files[i] = f.Path
	}
	id, err := q.CreateBlockedChange(ctx, db.CreateBlockedChangeParams{SessionID: session, AttemptedAt: db.FormatTime(now),
		Files: encodeList(files), Code: string(why.Code), Reason: text})
	if err != nil {
		return nil, fmt.Errorf("keep the blocked change: %w", err)
	}
	if err := s.core.event(ctx, q, session, actor, now, "change.blocked", fmt.Sprint(id),
		fmt.Sprintf("%s refused: %s", countOf(len(files), "file", "files"), text)); err != nil {
		return nil, err
	}
	return errs.E(errs.Conflict, "code_change_blocked",
		"Session %s is BLOCKED, so no code change is accepted: %s Revise or wait for the plan's approval, or for a person to release the brake, then take a brief; this attempt is on the record.",
		session, text).With("next_action", b.NextAction.String()).With("reason", text).With("reason_code", string(why.Code)), nil
}

// ClearViolation closes a violation a person looked at: fixed, or a false
// positive, with a note; it is recorded in the session's timeline. The
// remediation a high violation raised closes with it. Errors:
// forbidden (not a lead), invalid_clear, note_too_long,
// violation_not_found, already_closed.
func (s *ChangeService) ClearViolation(ctx context.Context, actor auth.Actor, id int64, kind, note string) (Violation, error) {
	if err := actor.RequireLead("clear a violation"); err != nil {
		return Violation{}, err
	}
	if kind == "" {
		kind = "fixed"
	}
	if kind != "fixed" && kind != "false_positive" {
		return Violation{}, errs.E(errs.Invalid, "invalid_clear", "Clear a violation as fixed or false_positive, not %q.", kind)
	}
	note, err := validNote(note)
	if err != nil {
		return Violation{}, err
	}
	now := s.core.now()
	var (
		row     db.Violation
		waiting []Approval
	)
	err = s.core.write(ctx, func(q db.Querier) error {
		cur, err := q.GetViolation(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "violation_not_found", "No violation has the id %d.", id)
		} else if err != nil {
			return err
		}
		if cur.ClosedAt.Valid {
			return errs.E(errs.Conflict, "already_closed", "Violation %d was already closed at %s.", id, cur.ClosedAt.String)
		}
		if protocol.Severity(cur.Severity) == protocol.SeverityCritical {
			agreed, standing, err := s.core.approve(ctx, q, actor, approveViolation, id, fmt.Sprint(id), cur.SessionID, approvalContent{ClearKind: kind}, note, now)
			if err != nil {
				return err
			}
			if !agreed.Done {
				// 1 of 2: the violation stays open, showing who cleared it.
				row, waiting = cur, standing
				return nil
			}
		}
		by := sql.NullInt64{Int64: actor.UserID, Valid: true}
		if row, err = q.ClearViolation(ctx, db.ClearViolationParams{ID: id, ClosedAt: db.NullTime(now),
			ClearedBy: by, ClearKind: sql.NullString{String: kind, Valid: true},
			ClearNote: note}); err != nil {
			return err
		}
		if err := s.core.event(ctx, q, row.SessionID, actor, now, "violation.cleared", fmt.Sprint(id), kind+": "+note); err != nil {
			return err
		}
		closeNote := fmt.Sprintf("Closed with violation %d, cleared as %s", id, kind)
		if note != "" {
			closeNote += ": " + note
		}
		closed, err := q.CloseRemediationsOfViolation(ctx, db.CloseRemediationsOfViolationParams{ViolationID: sql.NullInt64{Int64: id, Valid: true},
			ClosedAt: db.NullTime(now), ClosedBy: by, CloseNote: closeNote})
		if err != nil {
			return err
		}
		return s.core.closedRemediations(ctx, q, actor, closed, now)
	})
	if err != nil {
		return Violation{}, fmt.Errorf("clear violation %d: %w", id, err)
	}
	v, err := violationFrom(row)
	if err != nil {
		return Violation{}, fmt.Errorf("clear violation %d: %w", id, err)
	}
	v.Approvals = waiting
	return v, nil
}

// violationFrom converts a violations row; an error names the row.
func violationFrom(r db.Violation) (Violation, error) {
	c := db.StoredRow("violations", r.ID)
	v := Violation{ID: r.ID, Policy: r.Policy, Severity: r.Severity, Action: r.Action, Match: r.Match,
		File: r.File, Line: r.Line, DetectedAt: c.Time("detected_at", r.DetectedAt)}
	if err := c.Err(); err != nil {
		return Violation{}, err
	}
	return v, nil
}

// validChange checks a change's paths, dependencies and symbols against
// their limits and for control characters, trimming the dependencies and
// symbols.
func validChange(c *change.Change) error {
	if len(c.Files) > MaxChangeFiles {
		return errs.E(errs.Invalid, "invalid_change", "The change names %d files; at most %d are allowed.", len(c.Files), MaxChangeFiles).In("files")
	}
	seen := make(map[string]bool, len(c.Files))
	for i, f := range c.Files {
		if strings.TrimSpace(f.Path) == "" {
			return errs.E(errs.Invalid, "invalid_change", "File %d has no path.", i+1).In("files")
		}
		if n := utf8.RuneCountInString(f.Path); n > MaxChangePath {
			return errs.E(errs.Invalid, "files_too_long", "The path of file %d is %d characters; at most %d are allowed.", i+1, n, MaxChangePath).In("files")
		}
		if _, err := input.CleanLine("files", f.Path); err != nil {
			return err
		}
		if seen[f.Path] {
			return errs.E(errs.Invalid, "invalid_change", "The file %s is listed twice; send each file once.", f.Path).In("files")
		}
		seen[f.Path] = true
	}
	for _, l := range []struct {
		field     string
		list      *[]string
		max, size int
	}{
		{"dependencies", &c.Dependencies, MaxChangeDependencies, MaxChangeDependency},
		{"symbols_changed", &c.SymbolsChanged, MaxChangeSymbols, MaxChangeSymbol},
		{"symbols_used", &c.SymbolsUsed, MaxChangeSymbols, MaxChangeSymbol},
	} {
		for _, v := range *l.list {
			if strings.TrimSpace(v) == "" {
				return errs.E(errs.Invalid, "invalid_change", "Dependencies and symbols must not be empty strings.").In(l.field)
			}
		}
		list, err := input.List(l.field, *l.list, l.max, l.size)
		if err != nil {
			return err
		}
		if *l.list != nil {
			*l.list = list
		}
	}
	return nil
}

func (s *ChangeService) recordChange(ctx context.Context, q db.Querier, session string, c change.Change, risk change.Risk, now time.Time) error {
	paths := make([]string, len(c.Files))
	lines := 0
	for i, f := range c.Files {
		paths[i] = f.Path
		lines += f.Lines()
	}
	factors, err := json.Marshal(risk.Factors)
	if err != nil {
		return err
	}
	return q.UpsertChange(ctx, db.UpsertChangeParams{SessionID: session, ReportedAt: db.FormatTime(now), Files: encodeList(paths),
		Lines: int64(lines), Dependencies: encodeList(c.Dependencies), SymbolsChanged: encodeList(c.SymbolsChanged),
		SymbolsUsed: encodeList(c.SymbolsUsed), RiskScore: int64(risk.Score), RiskBand: risk.Band, RiskGate: risk.Gate,
		RiskFactors: string(factors)})
}

// recordViolations opens what the change newly trips and closes what it no
// longer trips, except critical violations, which only a person clears.
// Each violation it opens is a violation.detected event on the timeline
// (naming the redacted match, never the secret); a new high violation
// raises a required remediation, and a violation closing closes the
// remediation it raised.
func (s *ChangeService) recordViolations(ctx context.Context, q db.Querier, actor auth.Actor, session string, found []policy.Finding,
	now time.Time) error {
	open, err := q.ListOpenViolations(ctx, session)
	if err != nil {
		return err
	}
	key := func(policyID int64, file, match string) string {
		return fmt.Sprint(policyID, "\x00", file, "\x00", match)
	}
	still := map[string]bool{}
	for _, f := range found {
		still[key(f.PolicyID, f.File, f.Match)] = true
	}
	have := map[string]bool{}
	for _, v := range open {
		k := key(v.PolicyID.Int64, v.File, v.Match) // 0 for a breach of a blocked scope, which is critical
		have[k] = true
		if !still[k] && v.Severity != string(protocol.SeverityCritical) {
			if err := q.CloseViolation(ctx, db.CloseViolationParams{ID: v.ID, ClosedAt: db.NullTime(now)}); err != nil {
				return err
			}
			closed, err := q.CloseRemediationsOfViolation(ctx, db.CloseRemediationsOfViolationParams{
				ViolationID: sql.NullInt64{Int64: v.ID, Valid: true}, ClosedAt: db.NullTime(now),
				CloseNote: fmt.Sprintf("A later change no longer trips %s: closed with violation %d.", v.Policy, v.ID)})
			if err != nil {
				return err
			}
			if err := s.core.closedRemediations(ctx, q, actor, closed, now); err != nil {
				return err
			}
		}
	}
	for _, f := range found {
		if have[key(f.PolicyID, f.File, f.Match)] {
			continue
		}
		have[key(f.PolicyID, f.File, f.Match)] = true
		v, err := q.CreateViolation(ctx, db.CreateViolationParams{SessionID: session,
			PolicyID: sql.NullInt64{Int64: f.PolicyID, Valid: true}, Policy: f.Policy, Severity: string(f.Severity),
			Action: string(f.Action), Match: f.Match, File: f.File, Line: int64(f.Line), DetectedAt: db.FormatTime(now)})
		if err != nil {
			return err
		}
		if err := s.core.event(ctx, q, session, actor, now, notify.KindViolationDetected, fmt.Sprint(v.ID),
			fmt.Sprintf("%s %s: %s in %s:%d", v.Severity, v.Policy, v.Match, v.File, v.Line)); err != nil {
			return err
		}
		if err := s.remediateViolation(ctx, q, actor, v, now); err != nil {
			return err
		}
	}
	return nil
}

// remediateViolation raises the required remediation a new high violation
// asks for (source violation): it names the policy, what matched and
// where, never the matched text itself. Other violations raise none (a
// critical one is a HARD_STOP until a person clears it).
func (s *ChangeService) remediateViolation(ctx context.Context, q db.Querier, actor auth.Actor, v db.Violation, now time.Time) error {
	if !violationFact(v).Remediates() {
		return nil
	}
	var b strings.Builder
	b.WriteString(v.Policy + " was violated")
	if v.Match != "" {
		b.WriteString(" by " + v.Match)
	}
	files := []string{}
	if v.File != "" {
		files = append(files, v.File)
		b.WriteString(" in " + v.File)
		if v.Line > 0 {
			fmt.Fprintf(&b, ":%d", v.Line)
		}
	}
	b.WriteString(". Change the code so that the policy no longer matches, then report the change again.")
	return s.core.raiseRemediation(ctx, q, actor, db.CreateRemediationParams{SessionID: v.SessionID, Instruction: b.String(),
		Files: encodeList(files), Source: SourceViolation, ViolationID: sql.NullInt64{Int64: v.ID, Valid: true}}, now)
}

// violationFact is a violations row as the protocol sees it.
func violationFact(v db.Violation) protocol.Violation {
	return protocol.Violation{ID: fmt.Sprintf("VIO-%d", v.ID), Policy: v.Policy, Severity: protocol.Severity(v.Severity),
		BlockMerge: v.Action == "block_merge", Match: v.Match, File: v.File}
}

// recordDeviations opens the departures the change newly makes and closes
// those it no longer makes. A departure from an enforced rule held with
// 70% confidence or more raises a required remediation (source rule)
// whose instruction is the reason's own words, naming the compliant
// alternative; it closes with the deviation, or when the rule no longer
// holds the agent to it (it became advisory since). An open deviation
// whose rule became enforceable since raises its remediation now.
func (s *ChangeService) recordDeviations(ctx context.Context, q db.Querier, actor auth.Actor, session string, found []rules.Deviation,
	ruleList []rules.Rule, now time.Time) error {
	open, err := q.ListOpenDeviations(ctx, session)
	if err != nil {
		return err
	}
	key := func(rule int64, departure string) string { return fmt.Sprint(rule, "\x00", departure) }
	still := map[string]bool{}
	for _, d := range found {
		still[key(d.RuleID, d.Departure)] = true
	}
	have := map[string]bool{}
	for _, d := range open {
		k := key(d.RuleID, d.Departure)
		have[k] = true
		fact := protocol.Deviation{Departure: d.Departure, Chosen: d.Chosen, Concern: d.Concern, Support: int(d.Support),
			Total: int(d.Total), Enforced: d.Enforced}
		switch {
		case !still[k]:
			if err := q.CloseDeviation(ctx, db.CloseDeviationParams{ID: d.ID, ClosedAt: db.NullTime(now)}); err != nil {
				return err
			}
			if err := s.closeDeviationRemediations(ctx, q, actor, d.ID, now,
				fmt.Sprintf("A later change no longer departs from the %s rule (%s): closed with deviation %d.", d.Concern, d.Departure, d.ID)); err != nil {
				return err
			}
		case !fact.Enforceable():
			if err := s.closeDeviationRemediations(ctx, q, actor, d.ID, now,
				fmt.Sprintf("The %s rule no longer holds agents to %s (not enforced, or under 70%% confidence): deviation %d is advisory now.",
					d.Concern, d.Chosen, d.ID)); err != nil {
				return err
			}
		default:
			raised, err := q.ListOpenRemediationsOfDeviation(ctx, sql.NullInt64{Int64: d.ID, Valid: true})
			if err != nil {
				return err
			}
			if len(raised) == 0 {
				files := db.StoredRow("deviations", d.ID)
				fact.Files = files.List("files", d.Files)
				if err := files.Err(); err != nil {
					return err
				}
				if err := s.remediateDeviation(ctx, q, actor, session, d.ID, fact, now); err != nil {
					return err
				}
			}
		}
	}
	byID := make(map[int64]rules.Rule, len(ruleList))
	for _, r := range ruleList {
		byID[r.ID] = r
	}
	for _, d := range found {
		if have[key(d.RuleID, d.Departure)] {
			continue
		}
		row, err := q.CreateDeviation(ctx, db.CreateDeviationParams{SessionID: session, RuleID: d.RuleID, Departure: d.Departure,
			Files: encodeList(d.Files), DetectedAt: db.FormatTime(now)})
		if err != nil {
			return err
		}
		r := byID[d.RuleID]
		fact := protocol.Deviation{Departure: d.Departure, Chosen: r.Chosen, Concern: r.Concern, Support: r.Support, Total: r.Total,
			Enforced: r.Enforced, Files: d.Files}
		if fact.Enforceable() {
			if err := s.remediateDeviation(ctx, q, actor, session, row.ID, fact, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// remediateDeviation raises the required remediation an enforceable
// deviation asks for (source rule), in the words of its reason.
func (s *ChangeService) remediateDeviation(ctx context.Context, q db.Querier, actor auth.Actor, session string, id int64,
	d protocol.Deviation, now time.Time) error {
	return s.core.raiseRemediation(ctx, q, actor, db.CreateRemediationParams{SessionID: session, Instruction: d.Instruction(),
		Files: encodeList(d.Files), Source: SourceRule, DeviationID: sql.NullInt64{Int64: id, Valid: true}}, now)
}

// closeDeviationRemediations closes the open remediation the deviation
// raised, if any, by no person, with the note.
func (s *ChangeService) closeDeviationRemediations(ctx context.Context, q db.Querier, actor auth.Actor, id int64, now time.Time,
	note string) error {
	closed, err := q.CloseRemediationsOfDeviation(ctx, db.CloseRemediationsOfDeviationParams{DeviationID: sql.NullInt64{Int64: id, Valid: true},
		ClosedAt: db.NullTime(now), CloseNote: note})
	if err != nil {
		return err
	}
	return s.core.closedRemediations(ctx, q, actor, closed, now)
}

func (s *ChangeService) recordBreaches(ctx context.Context, q db.Querier, session string, found []protocol.Breach, now time.Time) error {
	open, err := q.ListOpenBreaches(ctx, session)
	if err != nil {
		return err
	}
	still := map[string]bool{}
	for _, b := range found {
		still[b.ID] = true
	}
	have := map[string]bool{}
	for _, b := range open {
		id := change.BreachID(int(b.ClauseIndex))
		have[id] = true
		if !still[id] {
			if err := q.CloseBreach(ctx, db.CloseBreachParams{ID: b.ID, ClosedAt: db.NullTime(now)}); err != nil {
				return err
			}
		}
	}
	for _, b := range found {
		if have[b.ID] {
			continue
		}
		idx, err := strconv.Atoi(strings.TrimPrefix(b.ID, "clause-"))
		if err != nil {
			return fmt.Errorf("breach id %q: %w", b.ID, err)
		}
		if _, err := q.CreateBreach(ctx, db.CreateBreachParams{SessionID: session, ClauseIndex: int64(idx - 1), Kind: string(b.Kind),
			Value: b.Value, Found: encodeList(b.Found), Count: int64(b.Count), DetectedAt: db.FormatTime(now)}); err != nil {
			return err
		}
	}
	return nil
}

// recordCollisions keeps the session's changed and used symbols and, when
// one session changed a symbol another builds against, warns the one that
// changed it and asks the other, once, to re-read the symbol.
func (s *ChangeService) recordCollisions(ctx context.Context, q db.Querier, actor auth.Actor, session string, c change.Change, now time.Time) error {
	open, err := q.ListOpenCollisions(ctx, session)
	if err != nil {
		return err
	}
	for _, col := range open {
		if !slices.Contains(c.SymbolsChanged, col.Symbol) {
			if err := q.CloseCollision(ctx, db.CloseCollisionParams{ID: col.ID, ClosedAt: db.NullTime(now)}); err != nil {
				return err
			}
		}
	}
	if err := q.DeleteChangeSymbols(ctx, session); err != nil {
		return err
	}
	for kind, list := range map[string][]string{"changed": c.SymbolsChanged, "used": c.SymbolsUsed} {
		for _, sym := range list {
			if err := q.AddChangeSymbol(ctx, db.AddChangeSymbolParams{SessionID: session, Kind: kind, Symbol: sym}); err != nil {
				return err
			}
		}
	}
	collide := func(changer, user, symbol string) error {
		n, err := q.CreateCollision(ctx, db.CreateCollisionParams{SessionID: changer, OtherSession: user, Symbol: symbol,
			DetectedAt: db.FormatTime(now)})
		if err != nil || n == 0 {
			return err // nothing new: the builder was already asked to re-read it
		}
		if err := s.core.event(ctx, q, changer, actor, now, "collision.detected", user, symbol); err != nil {
			return err
		}
		r, err := q.CreateRemediation(ctx, db.CreateRemediationParams{SessionID: user, Severity: SeverityRequired,
			Instruction: fmt.Sprintf("Session %s changed %s, which you build against: re-read %s before you build on it.", changer, symbol, symbol),
			Files:       encodeList(nil), Source: SourceCollision, CreatedAt: db.FormatTime(now)})
		if err != nil {
			return err
		}
		return s.core.event(ctx, q, user, actor, now, "remediation.requested", fmt.Sprint(r.ID), r.Instruction)
	}
	for _, sym := range uniq(c.SymbolsChanged) {
		users, err := q.SessionsWithSymbol(ctx, db.SessionsWithSymbolParams{Kind: "used", Symbol: sym, SessionID: session})
		if err != nil {
			return err
		}
		for _, u := range users {
			if err := collide(session, u.SessionID, sym); err != nil {
				return err
			}
		}
	}
	for _, sym := range uniq(c.SymbolsUsed) {
		changers, err := q.SessionsWithSymbol(ctx, db.SessionsWithSymbolParams{Kind: "changed", Symbol: sym, SessionID: session})
		if err != nil {
			return err
		}
		for _, ch := range changers {
			if err := collide(ch.SessionID, session, sym); err != nil {
				return err
			}
		}
	}
	return nil
}

func uniq(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

// changeResult reads back what is open for the session after a report.
func changeResult(ctx context.Context, q db.Querier, session string, risk change.Risk) (ChangeResult, error) {
	res := ChangeResult{Violations: []Violation{}, Deviations: []Deviation{}, Breaches: []BreachView{}, Collisions: []Collision{}, Risk: risk}
	if res.Risk.Factors == nil {
		res.Risk.Factors = []change.Factor{}
	}
	vs, err := q.ListOpenViolations(ctx, session)
	if err != nil {
		return res, err
	}
	for _, r := range vs {
		v, err := violationFrom(r)
		if err != nil {
			return res, err
		}
		res.Violations = append(res.Violations, v)
	}
	ds, err := q.ListOpenDeviations(ctx, session)
	if err != nil {
		return res, err
	}
	for _, d := range ds {
		c := db.StoredRow("deviations", d.ID)
		dev := protocol.Deviation{Support: int(d.Support), Total: int(d.Total)}
		res.Deviations = append(res.Deviations, Deviation{ID: d.ID, Rule: d.RuleID, Departure: d.Departure, Chosen: d.Chosen,
			Concern: d.Concern, Confidence: dev.ConfidencePercent(), Enforced: d.Enforced, Files: c.List("files", d.Files),
			DetectedAt: c.Time("detected_at", d.DetectedAt)})
		if err := c.Err(); err != nil {
			return res, err
		}
	}
	bs, err := q.ListOpenBreaches(ctx, session)
	if err != nil {
		return res, err
	}
	for _, b := range bs {
		c := db.StoredRow("breaches", b.ID)
		res.Breaches = append(res.Breaches, BreachView{Clause: change.BreachID(int(b.ClauseIndex)), Kind: b.Kind, Value: b.Value,
			Found: c.List("found", b.Found)})
		if err := c.Err(); err != nil {
			return res, err
		}
	}
	cs, err := q.ListOpenCollisions(ctx, session)
	if err != nil {
		return res, err
	}
	for _, c := range cs {
		res.Collisions = append(res.Collisions, Collision{Symbol: c.Symbol, OtherSession: c.OtherSession})
	}
	return res, nil
}

// compiledPolicies is the policy set compiled once, with the path globs
// that mark paths sensitive for risk scoring.
type compiledPolicies struct {
	version   string
	set       *policy.Set
	byID      map[int64]policy.Policy
	sensitive func(path string) bool
}

// policies returns the compiled set of the policies in force (neither
// disabled nor deleted), compiling again only when they changed (their
// ids and count are the version: a policy's pattern never changes). A
// stored policy that the current bounds refuse (one defined before them:
// a pattern over MaxPattern characters, or too costly) is left out of the
// set, and logged; the Policies page shows it as not enforced, for an
// admin to delete.
func (s *ChangeService) policies(ctx context.Context, q db.Querier) (*compiledPolicies, error) {
	rows, err := q.ListActivePolicies(ctx)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%d,", r.ID)
	}
	version := b.String()
	s.compiled.mu.Lock()
	defer s.compiled.mu.Unlock()
	if c := s.compiled.p; c != nil && c.version == version {
		return c, nil
	}
	ps := make([]policy.Policy, 0, len(rows))
	byID := make(map[int64]policy.Policy, len(rows))
	var globs []string
	for _, r := range rows {
		p := policyFrom(r)
		if err := policy.Validate(p); err != nil {
			s.log.Warn("policy not enforced", "policy_id", p.ID, "policy", p.Name, "code", errs.CodeOf(err), "error", err.Error())
			continue
		}
		ps = append(ps, p)
		byID[p.ID] = p
		if r.Kind == string(policy.KindPathGlob) {
			globs = append(globs, r.Pattern)
		}
	}
	set, err := policy.Compile(ps)
	if err != nil {
		return nil, fmt.Errorf("compile policies: %w", err)
	}
	var sensitive func(string) bool
	if len(globs) > 0 {
		sensitive = func(p string) bool {
			return slices.ContainsFunc(globs, func(g string) bool { return glob.Match(g, p) })
		}
	}
	s.compiled.p = &compiledPolicies{version: version, set: set, byID: byID, sensitive: sensitive}
	return s.compiled.p, nil
}

func policyFrom(r db.Policy) policy.Policy {
	return policy.Policy{ID: r.ID, Name: r.Name, Severity: protocol.Severity(r.Severity), Kind: policy.Kind(r.Kind),
		Pattern: r.Pattern, Action: policy.Action(r.Action)}
}

// ruleFrom converts a rules row for the rules engine; an error names the
// row.
func ruleFrom(r db.Rule) (rules.Rule, error) {
	c := db.StoredRow("rules", r.ID)
	out := rules.Rule{ID: r.ID, Concern: r.Concern, Chosen: r.Chosen, Departures: c.List("departures", r.Departures),
		Support: int(r.Support), Total: int(r.Total), Enforced: r.Enforced}
	if err := c.Err(); err != nil {
		return rules.Rule{}, err
	}
	return out, nil
}
