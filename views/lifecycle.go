package views

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/a-h/templ"
)

// LifecycleDiagram is what the session page's drawing of the agent
// lifecycle needs: the state the session is in, whether its agent has
// reported any lifecycle event, the machine's edges and the path taken.
type LifecycleDiagram struct {
	// Current is the session's lifecycle state, e.g. "EXECUTING".
	Current string
	// Tracked is false while the agent has reported no lifecycle event:
	// the drawing then lights IDLE and says the lifecycle gates nothing.
	Tracked bool
	// Edges are the machine's transitions, one per event.
	Edges []LifecycleEdge
	// Path are the transitions taken, oldest first.
	Path []LifecycleStep
}

// LifecycleEdge is one transition of the machine: Event moves From to To.
// An Event may carry the payload that selects the edge after a space, as
// `IntentClassified {"intent":"chat"}`; the drawing shows it on its own line.
type LifecycleEdge struct {
	From, To, Event string
}

// LifecycleStep is one transition a session took, and when.
type LifecycleStep struct {
	From, To, Event string
	At              time.Time
}

// lifecycleBox is where the view draws a state: its centre and size, in the
// drawing's own units (the viewBox below).
type lifecycleBox struct{ X, Y, W, H int }

const (
	lifecycleWidth  = 740
	lifecycleHeight = 690
)

// lifecycleStates is the seed's layout: IDLE at the top, CLASSIFYING below
// it, ANSWERING / DELEGATING / DIRECT_MODE across, SCHEDULING and
// ARCHITECTURE_DESIGNING below DELEGATING, then CONFIRMING, EXECUTING,
// INTERRUPTING, ARCHITECTURE_REVISING and SUMMARIZING at the bottom.
var lifecycleStates = []struct {
	Name string
	Box  lifecycleBox
}{
	{"IDLE", lifecycleBox{350, 30, 160, 34}},
	{"CLASSIFYING", lifecycleBox{350, 110, 150, 34}},
	{"ANSWERING", lifecycleBox{110, 200, 150, 34}},
	{"DELEGATING", lifecycleBox{350, 200, 150, 34}},
	{"DIRECT_MODE", lifecycleBox{580, 200, 150, 34}},
	{"SCHEDULING", lifecycleBox{230, 290, 150, 34}},
	{"ARCHITECTURE_DESIGNING", lifecycleBox{490, 290, 210, 34}},
	{"CONFIRMING", lifecycleBox{490, 370, 150, 34}},
	{"EXECUTING", lifecycleBox{300, 460, 150, 34}},
	{"INTERRUPTING", lifecycleBox{120, 550, 150, 34}},
	{"ARCHITECTURE_REVISING", lifecycleBox{490, 550, 210, 34}},
	{"SUMMARIZING", lifecycleBox{300, 650, 180, 34}},
}

// lifecycleRoute is how the view draws the arrow between two states: its
// corners, and where its label goes (Anchor "" puts the label only in the
// arrow's title, where it would collide with something on the drawing).
type lifecycleRoute struct {
	Points [][2]int
	LX, LY int
	Anchor string
}

// lifecycleRoutes routes the arrows so that they cross no box; the arrows
// back to IDLE run up the drawing's sides.
var lifecycleRoutes = map[[2]string]lifecycleRoute{
	{"IDLE", "CLASSIFYING"}:                   {[][2]int{{350, 47}, {350, 93}}, 358, 74, "start"},
	{"CLASSIFYING", "ANSWERING"}:              {[][2]int{{300, 127}, {300, 150}, {150, 150}, {150, 183}}, 292, 142, "end"},
	{"CLASSIFYING", "DELEGATING"}:             {[][2]int{{350, 127}, {350, 183}}, 358, 162, "start"},
	{"CLASSIFYING", "DIRECT_MODE"}:            {[][2]int{{400, 127}, {400, 150}, {550, 150}, {550, 183}}, 432, 116, "start"},
	{"ANSWERING", "IDLE"}:                     {[][2]int{{110, 183}, {110, 30}, {270, 30}}, 118, 24, "start"},
	{"DELEGATING", "SCHEDULING"}:              {[][2]int{{290, 217}, {290, 273}}, 284, 240, "end"},
	{"DELEGATING", "ARCHITECTURE_DESIGNING"}:  {[][2]int{{410, 217}, {410, 273}}, 418, 240, "start"},
	{"DIRECT_MODE", "DIRECT_MODE"}:            {[][2]int{{600, 217}, {600, 240}, {640, 240}, {640, 217}}, 648, 240, "start"},
	{"DIRECT_MODE", "IDLE"}:                   {[][2]int{{620, 183}, {620, 40}, {430, 40}}, 628, 70, "start"},
	{"SCHEDULING", "EXECUTING"}:               {[][2]int{{260, 307}, {260, 443}}, 252, 375, "end"},
	{"ARCHITECTURE_DESIGNING", "CONFIRMING"}:  {[][2]int{{490, 307}, {490, 353}}, 498, 334, "start"},
	{"CONFIRMING", "EXECUTING"}:               {[][2]int{{430, 387}, {430, 455}, {375, 455}}, 422, 420, "end"},
	{"CONFIRMING", "ARCHITECTURE_REVISING"}:   {[][2]int{{470, 387}, {470, 533}}, 462, 505, "end"},
	{"CONFIRMING", "IDLE"}:                    {[][2]int{{565, 370}, {710, 370}, {710, 30}, {430, 30}}, 572, 364, "start"},
	{"ARCHITECTURE_REVISING", "CONFIRMING"}:   {[][2]int{{540, 533}, {540, 387}}, 548, 460, "start"},
	{"EXECUTING", "EXECUTING"}:                {[][2]int{{240, 443}, {240, 425}, {205, 425}, {205, 452}, {225, 452}}, 198, 428, "end"},
	{"EXECUTING", "SUMMARIZING"}:              {[][2]int{{340, 477}, {340, 633}}, 348, 610, "start"},
	{"EXECUTING", "INTERRUPTING"}:             {[][2]int{{225, 470}, {100, 470}, {100, 533}}, 108, 490, "start"},
	{"INTERRUPTING", "EXECUTING"}:             {[][2]int{{175, 533}, {175, 505}, {270, 505}, {270, 477}}, 180, 520, "start"},
	{"INTERRUPTING", "ARCHITECTURE_REVISING"}: {[][2]int{{195, 550}, {385, 550}}, 200, 566, "start"},
	{"SUMMARIZING", "IDLE"}:                   {[][2]int{{390, 650}, {728, 650}, {728, 20}, {430, 20}}, 400, 644, "start"},
}

// lifecycleNode is a state as drawn.
type lifecycleNode struct {
	Name       string
	X, Y, W, H int
	Class      string
	Current    bool
	Title      string
}

// groupAttrs marks the current state's group for assistive technology.
func (n lifecycleNode) groupAttrs() templ.Attributes {
	if n.Current {
		return templ.Attributes{"aria-current": "step"}
	}
	return nil
}

// rectAttrs marks the current state's box for tests.
func (n lifecycleNode) rectAttrs() templ.Attributes {
	if n.Current {
		return templ.Attributes{"data-testid": "lifecycle-current"}
	}
	return nil
}

// lifecycleArrow is an arrow as drawn: every edge between two states.
type lifecycleArrow struct {
	From, To string
	D        string
	Class    string
	Title    string
	Lines    []string
	LX, LY   int
	Anchor   string
	// Marker is the arrowhead, url(#lc-head) or url(#lc-head-taken).
	Marker string
}

// lifecycleDrawing is the diagram laid out.
type lifecycleDrawing struct {
	Nodes   []lifecycleNode
	Arrows  []lifecycleArrow
	Title   string
	Desc    string
	ViewBox string
}

func (d LifecycleDiagram) current() string {
	if !d.Tracked {
		return "IDLE"
	}
	return d.Current
}

// layout places the states and routes the edges, marking the current
// state, the states and edges on the path taken.
func (d LifecycleDiagram) layout() lifecycleDrawing {
	cur := d.current()
	onPath := map[string]bool{}
	taken := map[[2]string]bool{}
	for _, s := range d.Path {
		onPath[s.From], onPath[s.To] = true, true
		taken[[2]string{s.From, s.To}] = true
	}
	out := lifecycleDrawing{Title: "Agent lifecycle", Desc: d.describe(),
		ViewBox: fmt.Sprintf("0 0 %d %d", lifecycleWidth, lifecycleHeight)}
	boxes := map[string]lifecycleBox{}
	for _, s := range lifecycleStates {
		boxes[s.Name] = s.Box
		n := lifecycleNode{Name: s.Name, X: s.Box.X - s.Box.W/2, Y: s.Box.Y - s.Box.H/2, W: s.Box.W, H: s.Box.H,
			Class: "lc-state", Title: s.Name}
		switch {
		case s.Name == cur:
			n.Class, n.Current, n.Title = "lc-state current", true, s.Name+" (now)"
		case onPath[s.Name]:
			n.Class, n.Title = "lc-state taken", s.Name+" (on the path taken)"
		}
		out.Nodes = append(out.Nodes, n)
	}
	// One arrow per pair of states, in the order the edges come.
	var pairs [][2]string
	events := map[[2]string][]string{}
	for _, e := range d.Edges {
		k := [2]string{e.From, e.To}
		if _, ok := events[k]; !ok {
			pairs = append(pairs, k)
		}
		events[k] = append(events[k], e.Event)
	}
	for _, k := range pairs {
		a := lifecycleArrow{From: k[0], To: k[1], Class: "lc-edge", Marker: "url(#lc-head)",
			Title: k[0] + " → " + k[1] + ": " + strings.Join(events[k], ", or ")}
		if taken[k] {
			a.Class, a.Marker = "lc-edge taken", "url(#lc-head-taken)"
		}
		r, ok := lifecycleRoutes[k]
		if !ok {
			from, okf := boxes[k[0]]
			to, okt := boxes[k[1]]
			if !okf || !okt {
				continue // a state this drawing does not know
			}
			r = lifecycleRoute{Points: [][2]int{{from.X, from.Y + from.H/2}, {to.X, to.Y - to.H/2}}}
		}
		var b strings.Builder
		for i, p := range r.Points {
			fmt.Fprintf(&b, "%s%d %d", map[bool]string{true: "M", false: " L"}[i == 0], p[0], p[1])
		}
		a.D = b.String()
		if r.Anchor != "" {
			a.Lines, a.LX, a.LY, a.Anchor = lifecycleLabel(events[k]), r.LX, r.LY, r.Anchor
		}
		out.Arrows = append(out.Arrows, a)
	}
	// Taken arrows last, so that they are drawn over the faint ones.
	sort.SliceStable(out.Arrows, func(i, j int) bool {
		return !taken[[2]string{out.Arrows[i].From, out.Arrows[i].To}] && taken[[2]string{out.Arrows[j].From, out.Arrows[j].To}]
	})
	return out
}

// describe says in words where the session is and the path it took.
func (d LifecycleDiagram) describe() string {
	if !d.Tracked {
		return "Untracked: this agent has reported no lifecycle event, so the lifecycle gates nothing. It reads IDLE."
	}
	s := "Now " + d.Current + "."
	if len(d.Path) == 0 {
		return s + " No transition taken yet."
	}
	names := []string{d.Path[0].From}
	for _, p := range d.Path {
		names = append(names, p.To)
	}
	return s + " Path: " + strings.Join(names, " → ") + "."
}

// lifecycleLabel is the small text on an arrow: each event's name, with the
// payload that selects the edge on the line below; many events sharing a
// prefix read as that prefix and a star (task.*).
func lifecycleLabel(events []string) []string {
	var names []string
	payload := map[string][]string{}
	for _, e := range events {
		name, rest, _ := strings.Cut(e, " {")
		if rest != "" {
			rest = "{" + rest
		}
		if _, ok := payload[name]; !ok {
			names = append(names, name)
			payload[name] = nil
		}
		if v := payloadText(rest); v != "" {
			payload[name] = append(payload[name], v)
		}
	}
	if len(names) > 2 {
		if p := commonPrefix(names); strings.HasSuffix(p, ".") {
			return []string{p + "*"}
		}
		return []string{names[0] + " …"}
	}
	var lines []string
	for i, n := range names {
		if i > 0 {
			lines = append(lines, "or "+n)
		} else {
			lines = append(lines, n)
		}
		if v := joinPayloads(payload[n]); v != "" {
			lines = append(lines, v)
		}
	}
	return lines
}

// joinPayloads joins "level: design" and "level: interface" as
// "level: design | interface".
func joinPayloads(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	key, _, ok := strings.Cut(vs[0], ": ")
	out := []string{vs[0]}
	for _, v := range vs[1:] {
		if k, rest, found := strings.Cut(v, ": "); ok && found && k == key {
			v = rest
		}
		out = append(out, v)
	}
	return strings.Join(out, " | ")
}

// payloadText reads {"level":"design"} as "level: design"; anything that is
// not such an object is shown as it is.
func payloadText(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	var m map[string]any
	if json.Unmarshal([]byte(raw), &m) != nil {
		return raw
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %v", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[:i+1]
	}
	return ""
}

// lineStep is the dy of an arrow label's line: the first sits on the
// label's baseline, the others one small line below.
func lineStep(i int) string {
	if i == 0 {
		return "0"
	}
	return "1.15em"
}
