package views

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// theMachine is the seed's machine as the drawing gets it, one edge per event.
var theMachine = []LifecycleEdge{
	{"IDLE", "CLASSIFYING", "user.message.created"},
	{"CLASSIFYING", "ANSWERING", `IntentClassified {"intent":"chat"}`},
	{"CLASSIFYING", "DELEGATING", `IntentClassified {"intent":"task"}`},
	{"CLASSIFYING", "DIRECT_MODE", `IntentClassified {"intent":"direct"}`},
	{"CLASSIFYING", "DIRECT_MODE", "DirectModeEntered"},
	{"ANSWERING", "IDLE", "reply.sent"},
	{"DELEGATING", "SCHEDULING", `architecture.impact.completed {"level":"implementation"}`},
	{"DELEGATING", "ARCHITECTURE_DESIGNING", `architecture.impact.completed {"level":"architecture"}`},
	{"SCHEDULING", "EXECUTING", "task.created"},
	{"ARCHITECTURE_DESIGNING", "CONFIRMING", "architecture.plan.updated"},
	{"CONFIRMING", "EXECUTING", "lead: confirm"},
	{"CONFIRMING", "ARCHITECTURE_REVISING", "lead: modify"},
	{"CONFIRMING", "IDLE", "lead: reject"},
	{"EXECUTING", "EXECUTING", "task.progress"},
	{"EXECUTING", "EXECUTING", "task.completed"},
	{"EXECUTING", "EXECUTING", "task.failed"},
	{"EXECUTING", "SUMMARIZING", "task.completed"},
	{"EXECUTING", "INTERRUPTING", "requirement.changed"},
	{"INTERRUPTING", "EXECUTING", `requirement.changed {"level":"execution"}`},
	{"INTERRUPTING", "ARCHITECTURE_REVISING", `requirement.changed {"level":"design"}`},
	{"INTERRUPTING", "ARCHITECTURE_REVISING", `requirement.changed {"level":"interface"}`},
	{"ARCHITECTURE_REVISING", "CONFIRMING", "architecture.plan.updated"},
	{"SUMMARIZING", "IDLE", "reply.sent"},
	{"DIRECT_MODE", "IDLE", "DirectModeExited"},
	{"DIRECT_MODE", "DIRECT_MODE", "task.*"},
}

var twelve = []string{"IDLE", "CLASSIFYING", "ANSWERING", "DELEGATING", "SCHEDULING", "ARCHITECTURE_DESIGNING",
	"CONFIRMING", "EXECUTING", "INTERRUPTING", "ARCHITECTURE_REVISING", "SUMMARIZING", "DIRECT_MODE"}

func renderDiagram(t *testing.T, d LifecycleDiagram) string {
	t.Helper()
	var b bytes.Buffer
	if err := LifecycleDiagramSVG(d).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	stateGroup = regexp.MustCompile(`<g class="([^"]*)" data-testid="lifecycle-state-([A-Z_]+)" data-state="[A-Z_]+"( aria-current="step")?>(.*?)</g>`)
	edgeGroup  = regexp.MustCompile(`<g class="([^"]*)" data-testid="lifecycle-edge" data-from="([A-Z_]+)" data-to="([A-Z_]+)">`)
	descText   = regexp.MustCompile(`<desc id="lc-desc" data-testid="lifecycle-desc">(.*?)</desc>`)
)

// checkStates checks that the drawing has each of the twelve states once,
// that exactly one is lit and that it is current; it returns the classes
// of the states.
func checkStates(t *testing.T, html, current string) map[string]string {
	t.Helper()
	classes := map[string]string{}
	lit := 0
	for _, m := range stateGroup.FindAllStringSubmatch(html, -1) {
		if _, dup := classes[m[2]]; dup {
			t.Errorf("state %s is drawn twice", m[2])
		}
		classes[m[2]] = m[1]
		if strings.Contains(m[4], `data-testid="lifecycle-current"`) {
			lit++
			if m[2] != current || m[3] == "" || !strings.Contains(m[1], "current") {
				t.Errorf("lit state is %s (class %q, aria-current %q), want %s", m[2], m[1], m[3], current)
			}
		}
		if !strings.Contains(m[4], "<title>"+m[2]) {
			t.Errorf("state %s has no title: %s", m[2], m[4])
		}
		if !strings.Contains(m[4], ">"+m[2]+"</text>") {
			t.Errorf("state %s is not written as SVG text: %s", m[2], m[4])
		}
	}
	if len(classes) != 12 {
		t.Errorf("drew %d states, want 12: %v", len(classes), classes)
	}
	for _, s := range twelve {
		if _, ok := classes[s]; !ok {
			t.Errorf("state %s is not drawn", s)
		}
	}
	if lit != 1 || strings.Count(html, `data-testid="lifecycle-current"`) != 1 || strings.Count(html, `aria-current="step"`) != 1 {
		t.Errorf("%d states lit, want 1", lit)
	}
	return classes
}

func TestTheLifecycleDrawing(t *testing.T) {
	t.Run("an untracked session draws the machine with IDLE lit and says the lifecycle gates nothing", func(t *testing.T) {
		html := renderDiagram(t, LifecycleDiagram{Current: "IDLE", Edges: theMachine})
		classes := checkStates(t, html, "IDLE")
		for s, c := range classes {
			if strings.Contains(c, "taken") {
				t.Errorf("state %s is marked taken with no path", s)
			}
		}
		if !strings.Contains(html, `data-testid="lifecycle-untracked">Untracked: this agent has reported no lifecycle event, so the lifecycle gates nothing.</figcaption>`) {
			t.Error("no untracked caption")
		}
		if strings.Contains(html, `class="lc-edge taken"`) {
			t.Error("an edge is marked taken with no path")
		}
		if !strings.Contains(html, `role="img"`) || !strings.Contains(html, `viewBox="0 0 740 690" width="100%"`) {
			t.Error("the drawing is not an accessible, scalable image")
		}
		if m := descText.FindStringSubmatch(html); m == nil || !strings.HasPrefix(m[1], "Untracked:") {
			t.Errorf("desc = %v", m)
		}
	})

	t.Run("an executing session lights EXECUTING and marks the path it took to get there", func(t *testing.T) {
		at := time.Date(2026, 5, 28, 9, 0, 0, 0, time.UTC)
		steps := [][3]string{
			{"IDLE", "CLASSIFYING", "user.message.created"},
			{"CLASSIFYING", "DELEGATING", `IntentClassified {"intent":"task"}`},
			{"DELEGATING", "ARCHITECTURE_DESIGNING", `architecture.impact.completed {"level":"architecture"}`},
			{"ARCHITECTURE_DESIGNING", "CONFIRMING", "architecture.plan.updated"},
			{"CONFIRMING", "EXECUTING", "lead: confirm"},
		}
		var path []LifecycleStep
		for i, s := range steps {
			path = append(path, LifecycleStep{From: s[0], To: s[1], Event: s[2], At: at.Add(time.Duration(i) * time.Minute)})
		}
		html := renderDiagram(t, LifecycleDiagram{Current: "EXECUTING", Tracked: true, Edges: theMachine, Path: path})
		classes := checkStates(t, html, "EXECUTING")
		for _, s := range []string{"IDLE", "CLASSIFYING", "DELEGATING", "ARCHITECTURE_DESIGNING", "CONFIRMING"} {
			if classes[s] != "lc-state taken" {
				t.Errorf("state %s on the path has class %q", s, classes[s])
			}
		}
		for _, s := range []string{"ANSWERING", "DIRECT_MODE", "SCHEDULING", "INTERRUPTING", "ARCHITECTURE_REVISING", "SUMMARIZING"} {
			if classes[s] != "lc-state" {
				t.Errorf("state %s off the path has class %q", s, classes[s])
			}
		}
		taken := map[[2]string]bool{}
		for _, s := range steps {
			taken[[2]string{s[0], s[1]}] = true
		}
		arrows := edgeGroup.FindAllStringSubmatch(html, -1)
		if len(arrows) != 21 { // one arrow per pair of states
			t.Errorf("drew %d arrows, want 21", len(arrows))
		}
		marked := 0
		for _, m := range arrows {
			want := "lc-edge"
			if taken[[2]string{m[2], m[3]}] {
				want, marked = "lc-edge taken", marked+1
			}
			if m[1] != want {
				t.Errorf("arrow %s → %s has class %q, want %q", m[2], m[3], m[1], want)
			}
		}
		if marked != len(steps) {
			t.Errorf("%d arrows marked taken, want %d", marked, len(steps))
		}
		want := "Now EXECUTING. Path: IDLE → CLASSIFYING → DELEGATING → ARCHITECTURE_DESIGNING → CONFIRMING → EXECUTING."
		if m := descText.FindStringSubmatch(html); m == nil || m[1] != want {
			t.Errorf("desc = %v, want %q", m, want)
		}
		if strings.Contains(html, "lifecycle-untracked") {
			t.Error("a tracked session says it is untracked")
		}
	})

	t.Run("every arrow names its events, on the arrow or in its title", func(t *testing.T) {
		html := renderDiagram(t, LifecycleDiagram{Current: "IDLE", Tracked: true, Edges: theMachine})
		for _, e := range theMachine {
			if !strings.Contains(html, "<title>"+e.From+" → "+e.To+": ") {
				t.Errorf("arrow %s → %s has no title", e.From, e.To)
			}
		}
		for _, label := range []string{">user.message.created</tspan>", ">level: design | interface</tspan>", ">task.*</tspan>",
			">IntentClassified</tspan>", ">or DirectModeEntered</tspan>", ">lead: modify</tspan>"} {
			if !strings.Contains(html, label) {
				t.Errorf("no label %s", label)
			}
		}
		if m := descText.FindStringSubmatch(html); m == nil || m[1] != "Now IDLE. No transition taken yet." {
			t.Errorf("desc = %v", m)
		}
	})
}
