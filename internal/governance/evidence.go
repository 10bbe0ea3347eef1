package governance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/input"
)

// EvidenceService takes the evidence an agent reports and its report that
// the implementation is complete.
type EvidenceService struct{ core *core }

// The limits of a piece of evidence, in characters (runes).
const (
	MaxEvidenceKind   = 100        // the kind: "tests", "review", …
	MaxEvidenceDetail = input.Text // what the agent says about it
)

// EvidenceInput is one piece of evidence an agent reports.
type EvidenceInput struct {
	Kind   string `json:"kind" jsonschema:"The kind of evidence, e.g. tests, review, lint."`
	Passed bool   `json:"passed,omitzero" jsonschema:"Whether it passed."`
	Detail string `json:"detail,omitzero" jsonschema:"A line of detail, e.g. 212 passed."`
}

// Validate returns the input trimmed. Errors: kind_required,
// kind_too_long, detail_too_long.
func (in EvidenceInput) Validate() (EvidenceInput, error) {
	out := EvidenceInput{Passed: in.Passed}
	var err error
	if out.Kind, err = input.Required("kind", in.Kind, MaxEvidenceKind); err != nil {
		return out, err
	}
	if out.Detail, err = input.Optional("detail", in.Detail, MaxEvidenceDetail); err != nil {
		return out, err
	}
	return out, nil
}

// The evidence gate's verdicts.
const (
	GateSatisfied   = "satisfied"
	GateUnsatisfied = "unsatisfied"
)

// EvidenceGate is the mission's verdict on a session's evidence.
type EvidenceGate struct {
	EvidenceGate string   `json:"evidence_gate"`
	Missing      []string `json:"missing"`
	Failed       []string `json:"failed"`
}

// Report records evidence the agent produced (tests, a review, …).
// Errors: forbidden, those of EvidenceInput.Validate, session_not_found.
func (s *EvidenceService) Report(ctx context.Context, actor auth.Actor, session string, in EvidenceInput) error {
	if err := actor.RequireAgent("report evidence"); err != nil {
		return err
	}
	in, err := in.Validate()
	if err != nil {
		return err
	}
	kind, detail := in.Kind, in.Detail
	now := s.core.now()
	return s.core.write(ctx, func(q db.Querier) error {
		if _, err := ownSession(ctx, q, actor, session, "report evidence"); err != nil {
			return err
		}
		if _, err := q.CreateEvidence(ctx, db.CreateEvidenceParams{SessionID: session, Kind: kind, Passed: in.Passed,
			Detail: detail, ReportedAt: db.FormatTime(now)}); err != nil {
			return err
		}
		verdict := "failed"
		if in.Passed {
			verdict = "passed"
		}
		return s.core.event(ctx, q, session, actor, now, "evidence.reported", kind, verdict)
	})
}

// Complete is the agent reporting implementation complete. The agent never
// declares the mission complete: the mission's evidence gate decides,
// from the latest evidence of each required kind. Errors: forbidden,
// session_not_found.
func (s *EvidenceService) Complete(ctx context.Context, actor auth.Actor, session string) (EvidenceGate, error) {
	if err := actor.RequireAgent("report implementation complete"); err != nil {
		return EvidenceGate{}, err
	}
	now := s.core.now()
	var gate EvidenceGate
	err := s.core.write(ctx, func(q db.Querier) error {
		sess, err := ownSession(ctx, q, actor, session, "report implementation complete")
		if err != nil {
			return err
		}
		gate, err = s.core.evaluateGate(ctx, q, actor, sess, now, "implementation.complete")
		return err
	})
	if err != nil {
		return EvidenceGate{}, fmt.Errorf("complete %s: %w", session, err)
	}
	return gate, nil
}

// evaluateGate evaluates the mission's evidence gate on the session's
// evidence, inside q's transaction, and records the verdict in the
// timeline as an event of the kind given.
func (c *core) evaluateGate(ctx context.Context, q db.Querier, actor auth.Actor, sess db.GetSessionRow, now time.Time, kind string) (EvidenceGate, error) {
	mrow, err := q.GetMissionBySlug(ctx, sess.MissionSlug)
	if err != nil {
		return EvidenceGate{}, err
	}
	m, err := missionFrom(mrow)
	if err != nil {
		return EvidenceGate{}, err
	}
	ev, err := q.ListEvidence(ctx, sess.ID)
	if err != nil {
		return EvidenceGate{}, err
	}
	gate := evidenceGate(m.Evidence, ev)
	return gate, c.event(ctx, q, sess.ID, actor, now, kind, "", gate.EvidenceGate+missingText(gate))
}

// evidenceGate decides from the latest evidence of each required kind.
func evidenceGate(required []string, ev []db.Evidence) EvidenceGate {
	latest := map[string]bool{}
	for _, e := range ev { // oldest first: the last word wins
		latest[e.Kind] = e.Passed
	}
	g := EvidenceGate{EvidenceGate: GateSatisfied, Missing: []string{}, Failed: []string{}}
	for _, k := range required {
		passed, ok := latest[k]
		switch {
		case !ok:
			g.Missing = append(g.Missing, k)
		case !passed:
			g.Failed = append(g.Failed, k)
		}
	}
	if len(g.Missing) > 0 || len(g.Failed) > 0 {
		g.EvidenceGate = GateUnsatisfied
	}
	slices.Sort(g.Missing)
	slices.Sort(g.Failed)
	return g
}

func missingText(g EvidenceGate) string {
	var parts []string
	if len(g.Missing) > 0 {
		parts = append(parts, "missing "+strings.Join(g.Missing, ", "))
	}
	if len(g.Failed) > 0 {
		parts = append(parts, "failed "+strings.Join(g.Failed, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}
