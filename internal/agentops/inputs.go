package agentops

import (
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/plan"
)

// The input types of the operations whose body no service type is; the
// others are the services' own (governance.SessionInput, ledger.AskInput, …).

// ToolCall is the body of recordToolCall: a ledger.ToolCallInput whose
// started_at is read as text and parsed by Input. Decoded straight into a
// time.Time, a string that is not a time would fail as if the body were
// not JSON (a 400), when it is valid JSON with invalid content (a 422).
type ToolCall struct {
	Server        string  `json:"server" jsonschema:"The MCP server (or tool family) the call went to."`
	Tool          string  `json:"tool" jsonschema:"The tool called."`
	SideEffecting *bool   `json:"side_effecting,omitzero" jsonschema:"Whether the call writes; left out, the tool registry decides, and an unclassified tool writes."`
	StartedAt     *string `json:"started_at,omitzero" jsonschema:"When the call started, RFC 3339; now when left out."`
	Step          string  `json:"step,omitzero" jsonschema:"On a run executing the plan, the plan step this call runs."`
	ledger.Site
	ledger.Caller
	Error string `json:"error,omitzero" jsonschema:"Why the call failed, as the executor says; left out when it did not."`
}

// Input is the call as the ledger records it. Errors: invalid_started_at.
func (t ToolCall) Input() (ledger.ToolCallInput, error) {
	in := ledger.ToolCallInput{Server: t.Server, Tool: t.Tool, SideEffecting: t.SideEffecting, Step: t.Step,
		Site: t.Site, Caller: t.Caller, Error: t.Error}
	if t.StartedAt != nil {
		at, err := ledger.ParseStartedAt(*t.StartedAt)
		if err != nil {
			return in, err
		}
		in.StartedAt = &at
	}
	return in, nil
}

// Plan is the body of proposePlan: a governance.PlanInput whose steps and
// stopping points may be left out. plan.Plan's own fields are always
// encoded, as a plan is answered with both.
type Plan struct {
	Summary        string               `json:"summary" jsonschema:"The plan in a few sentences."`
	InitialSteps   []plan.Step          `json:"initial_steps,omitzero" jsonschema:"The steps that run first. A side-effecting step here, before any stopping point, is refused (side_effect_before_gate)."`
	StoppingPoints []plan.StoppingPoint `json:"stopping_points,omitzero" jsonschema:"Where a run parks for a person; each option's steps run only once that option is picked."`
}

// Input is the plan as the plan service takes it.
func (p Plan) Input() governance.PlanInput {
	return governance.PlanInput{Summary: p.Summary, Plan: plan.Plan{InitialSteps: p.InitialSteps, StoppingPoints: p.StoppingPoints}}
}

// RunFinish is the body of finishRun.
type RunFinish struct {
	Status string `json:"status" jsonschema:"How it ended: complete, partial, blocked, failed or cancelled."`
}

// Empty is the body of an operation that takes none but its path's id.
type Empty struct{}
