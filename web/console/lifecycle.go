package console

import (
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/views"
)

// lifecycleEdges is the agent lifecycle's transitions, one per event. It
// mirrors the table of DESIGN.md's "Agent lifecycle (seed 002, made exact)"
// and is to be replaced by the lifecycle package's Transitions() once
// internal/lifecycle lands. The "any state: permission.prompt.requested,
// unchanged" row moves nothing, so it is no arrow. A lead's answer in
// CONFIRMING is no agent event; it is named "lead: confirm", "lead: modify"
// and "lead: reject".
func lifecycleEdges() []views.LifecycleEdge {
	return []views.LifecycleEdge{
		{From: "IDLE", To: "CLASSIFYING", Event: "user.message.created"},
		{From: "CLASSIFYING", To: "ANSWERING", Event: `IntentClassified {"intent":"chat"}`},
		{From: "CLASSIFYING", To: "DELEGATING", Event: `IntentClassified {"intent":"task"}`},
		{From: "CLASSIFYING", To: "DIRECT_MODE", Event: `IntentClassified {"intent":"direct"}`},
		{From: "CLASSIFYING", To: "DIRECT_MODE", Event: "DirectModeEntered"},
		{From: "ANSWERING", To: "IDLE", Event: "reply.sent"},
		{From: "DELEGATING", To: "SCHEDULING", Event: `architecture.impact.completed {"level":"implementation"}`},
		{From: "DELEGATING", To: "ARCHITECTURE_DESIGNING", Event: `architecture.impact.completed {"level":"architecture"}`},
		{From: "SCHEDULING", To: "EXECUTING", Event: "task.created"},
		{From: "ARCHITECTURE_DESIGNING", To: "CONFIRMING", Event: "architecture.plan.updated"},
		{From: "CONFIRMING", To: "EXECUTING", Event: "lead: confirm"},
		{From: "CONFIRMING", To: "ARCHITECTURE_REVISING", Event: "lead: modify"},
		{From: "CONFIRMING", To: "IDLE", Event: "lead: reject"},
		{From: "EXECUTING", To: "EXECUTING", Event: "task.created"},
		{From: "EXECUTING", To: "EXECUTING", Event: "task.progress"},
		{From: "EXECUTING", To: "EXECUTING", Event: "task.failed"},
		{From: "EXECUTING", To: "EXECUTING", Event: "task.blocked"},
		{From: "EXECUTING", To: "EXECUTING", Event: "task.completed"},
		{From: "EXECUTING", To: "SUMMARIZING", Event: "task.completed"},
		{From: "EXECUTING", To: "INTERRUPTING", Event: "requirement.changed"},
		{From: "INTERRUPTING", To: "EXECUTING", Event: `requirement.changed {"level":"execution"}`},
		{From: "INTERRUPTING", To: "ARCHITECTURE_REVISING", Event: `requirement.changed {"level":"design"}`},
		{From: "INTERRUPTING", To: "ARCHITECTURE_REVISING", Event: `requirement.changed {"level":"interface"}`},
		{From: "ARCHITECTURE_REVISING", To: "CONFIRMING", Event: "architecture.plan.updated"},
		{From: "SUMMARIZING", To: "IDLE", Event: "reply.sent"},
		{From: "DIRECT_MODE", To: "IDLE", Event: "DirectModeExited"},
		{From: "DIRECT_MODE", To: "DIRECT_MODE", Event: "task.*"},
	}
}

// lifecycleDiagram is the drawing of a session's lifecycle. No transition
// is recorded yet, so the path is empty; a session counts as tracked once
// its state is other than IDLE, which only a reported event can do.
func lifecycleDiagram(d governance.SessionDetail) views.LifecycleDiagram {
	return views.LifecycleDiagram{Current: d.Lifecycle, Tracked: d.Lifecycle != "" && d.Lifecycle != "IDLE",
		Edges: lifecycleEdges()}
}
