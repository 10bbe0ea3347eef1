package console

import (
	"fmt"
	"strings"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/views"
)

// lifecycleEdges is the lifecycle's table as the diagram draws it. An edge
// chosen by its payload ("intent=chat", "level=design|interface") carries
// that payload as JSON after the event's name, one edge per value; a
// lead's answer is named "lead: confirm" and so on. The permission prompt,
// accepted in every state and moving none, is no arrow.
func lifecycleEdges() []views.LifecycleEdge {
	var out []views.LifecycleEdge
	for _, e := range lifecycle.Transitions() {
		if e.Event == lifecycle.PermissionPromptRequested {
			continue
		}
		from, to := string(e.From), string(e.To)
		if lead, ok := strings.CutPrefix(e.Event, "lead."); ok {
			out = append(out, views.LifecycleEdge{From: from, To: to, Event: "lead: " + lead})
			continue
		}
		key, values, ok := strings.Cut(e.When, "=")
		if !ok {
			out = append(out, views.LifecycleEdge{From: from, To: to, Event: e.Event})
			continue
		}
		for _, v := range strings.Split(values, "|") {
			out = append(out, views.LifecycleEdge{From: from, To: to, Event: fmt.Sprintf(`%s {%q:%q}`, e.Event, key, v)})
		}
	}
	return out
}

// lifecycleDiagram is the drawing of a session's lifecycle: its state, the
// path its timeline recorded, and whether its agent reports the lifecycle
// at all.
func lifecycleDiagram(d governance.SessionDetail) (views.LifecycleDiagram, error) {
	path, err := d.LifecyclePath()
	if err != nil {
		return views.LifecycleDiagram{}, err
	}
	steps := make([]views.LifecycleStep, len(path))
	for i, s := range path {
		steps[i] = views.LifecycleStep{From: string(s.From), To: string(s.To), Event: s.Event, At: s.At}
	}
	return views.LifecycleDiagram{Current: d.Lifecycle, Tracked: d.Tracked, Edges: lifecycleEdges(), Path: steps}, nil
}
