package plan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// GateError is a plan that lets a side effect start before the approval
// that governs it (a stopping point only protects the steps after it), or lets a step read a write it races in a parallel fan.
type GateError struct {
	// Step is the id of the step that breaks the rule: the writing step, or,
	// for a race, the step that reads the write.
	Step string
	// StoppingPoint is the id of the stopping point the step runs before
	// and that governs it; 0 for a race with no gate involved.
	StoppingPoint int
	// Title is that stopping point's title ("" when StoppingPoint is 0).
	Title string
	// Option is "" when the step is in initial_steps, else the key of the
	// option whose steps hold it, and OptionOf the id of the stopping point
	// that option belongs to.
	Option   string
	OptionOf int
	// Writer is, for a race, the id of the writing step that is read; ""
	// otherwise.
	Writer string
	// Reason is the rest of the sentence after the step's name: what the
	// step does wrong and how to fix it.
	Reason string
}

// Error returns one sentence that names the step and the stopping point.
func (e *GateError) Error() string { return fmt.Sprintf("step %q %s", e.Step, e.Reason) }

// Classifier says whether a call to server.tool writes, as the executor
// gate classifies it (gate.Classify over the tool registry's entry), with
// said the step's own side_effecting (nil when it does not say): said may
// only raise the classification, never lower it.
type Classifier func(server, tool string, said *bool) bool

// Writes says whether the step writes. A step with a tool writes when
// classify says so, given the step's SideEffecting as what it says (a nil
// classify counts every tool as writing); a step with no tool (a prompt, a
// join) writes only when it is marked side_effecting true.
func (s Step) Writes(classify Classifier) bool {
	if s.Tool == "" {
		return s.SideEffecting != nil && *s.SideEffecting
	}
	if classify == nil {
		return true
	}
	return classify(s.Server, s.Tool, s.SideEffecting)
}

// Check refuses a plan whose side effects could start before the approval
// that governs them. Whether a step writes is Step.Writes with classify:
// a step's side_effecting false never lowers a tool the registry marks
// side-effecting or does not know.
//
// Stopping points are ordered by id. The initial steps run before the first
// stopping point; the steps of an option of a stopping point run before the
// next stopping point by id, if there is one. The rules:
//
//  1. When the plan has a stopping point, a writing step in initial_steps is
//     refused: it runs before the first stopping point, which governs it.
//  2. A writing step in an option of a stopping point that is not the last
//     one is refused: it runs before the next stopping point. Options of
//     the last stopping point may write: that is where approved writes go.
//  3. In any step list (initial steps or an option's steps, with or without
//     a stopping point), a step in a parallel group that reads a writing
//     step of the same group — it names it in depends_on or, being a join,
//     in in, directly or through joins — is refused: the fan runs them
//     together, so the read races the write.
//
// A plan that only reads always passes. Check returns nil or a *GateError
// naming the first problem in a fixed order: the initial steps, then each
// stopping point's options by id and then by key; in each list, the steps
// that write before a gate in list order, then the races in list order.
func (p Plan) Check(classify Classifier) error {
	c := checker{classify: classify}
	sps := slices.Clone(p.StoppingPoints)
	slices.SortStableFunc(sps, func(a, b StoppingPoint) int { return cmp.Compare(a.ID, b.ID) })

	var first *StoppingPoint
	if len(sps) > 0 {
		first = &sps[0]
	}
	if e := c.list(p.InitialSteps, first, "", 0); e != nil {
		return e
	}
	for i, sp := range sps {
		var next *StoppingPoint
		if i+1 < len(sps) {
			next = &sps[i+1]
		}
		for _, key := range slices.Sorted(maps.Keys(sp.Options)) {
			if e := c.list(sp.Options[key].Steps, next, key, sp.ID); e != nil {
				return e
			}
		}
	}
	return nil
}

type checker struct {
	classify Classifier
}

// writer says whether the step writes (Step.Writes).
func (c checker) writer(s Step) bool { return s.Writes(c.classify) }

// list checks one step list that runs before the stopping point gate (nil
// when no stopping point follows it). key and of locate the list: "" and 0
// for the initial steps, else the option key and its stopping point's id.
func (c checker) list(steps []Step, gate *StoppingPoint, key string, of int) *GateError {
	where := ""
	if key != "" {
		where = fmt.Sprintf("in option %q of stopping point %d ", key, of)
	}
	if gate != nil {
		fix := "move it into the option that approves it"
		if key != "" {
			fix = fmt.Sprintf("move it into the option of stopping point %d that approves it", gate.ID)
		}
		for _, s := range steps {
			if c.writer(s) {
				return &GateError{Step: s.ID, StoppingPoint: gate.ID, Title: gate.Title, Option: key, OptionOf: of,
					Reason: fmt.Sprintf("%swrites (%s) before stopping point %d %q that governs it: %s",
						where, what(s), gate.ID, gate.Title, fix)}
			}
		}
	}
	byID := make(map[string]Step, len(steps))
	for _, s := range steps {
		if _, dup := byID[s.ID]; !dup {
			byID[s.ID] = s
		}
	}
	for _, s := range steps {
		if s.ParallelGroup == "" {
			continue
		}
		for _, id := range reads(s, byID) {
			w := byID[id]
			if w.ID == s.ID || w.ParallelGroup != s.ParallelGroup || !c.writer(w) {
				continue
			}
			return &GateError{Step: s.ID, Option: key, OptionOf: of, Writer: w.ID,
				Reason: fmt.Sprintf("%sreads the output of %q, which writes (%s), in the same parallel group %q: "+
					"the fan runs them together, so the read races the write; take %q out of the group",
					where, w.ID, what(w), s.ParallelGroup, s.ID)}
		}
	}
	return nil
}

// reads returns the ids of the steps whose output s reads, in a fixed
// order: those named in its depends_on (and in, for a join), and, through
// any join among them, the steps that join waits on.
func reads(s Step, byID map[string]Step) []string {
	var out []string
	seen := map[string]bool{s.ID: true}
	var visit func(Step)
	visit = func(x Step) {
		names := x.DependsOn
		if x.Kind == "join" {
			names = append(slices.Clone(x.In), x.DependsOn...)
		}
		for _, id := range names {
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, id)
			if d, ok := byID[id]; ok && d.Kind == "join" {
				visit(d)
			}
		}
	}
	visit(s)
	return out
}

// what names what a writing step does: its server and tool.
func what(s Step) string {
	switch {
	case s.Tool == "":
		return "marked side_effecting"
	case s.Server == "":
		return s.Tool
	default:
		return s.Server + "." + s.Tool
	}
}
