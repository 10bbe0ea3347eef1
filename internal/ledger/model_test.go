package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
)

// The seed's two audit queries, verbatim but for the schema's names: asks
// for approvals, tool for tool_name, and every terminal outcome for
// ('complete', 'failed', 'cancelled'). The ids are selected too, to match
// rows to the model's.
const (
	unanswerableAsks = `
SELECT r.id, r.status, a.prompt, a.created_at
FROM runs r
JOIN asks a ON a.run_id = r.id
WHERE a.answered_at IS NULL
  AND r.status IN ('complete', 'partial', 'blocked', 'failed', 'cancelled')`

	prematureSideEffects = `
SELECT t.id, a.id, t.run_id, t.tool, t.started_at, a.answered_at
FROM tool_calls t
JOIN asks a ON a.run_id = t.run_id
WHERE t.is_side_effecting = TRUE
  AND (a.answered_at IS NULL OR t.started_at < a.answered_at)`
)

// TestRandomSequencesKeepTheGate drives the agent's and the lead's calls in
// random sequences against a model of what must hold, and after every step
// runs the seed's audit queries: no question is ever stuck on a finished
// run (zero rows, always), and no side effect starts before its gate is
// answered (zero rows, unless the sequence deliberately imported a
// back-dated call or reproduced the seed's memory_store bug, and then
// exactly the rows the model expects). Refused calls are part of the
// sequences and must change nothing. MADEBOOK_MODEL_SEED replays a seed.
func TestRandomSequencesKeepTheGate(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MADEBOOK_MODEL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MADEBOOK_MODEL_SEED=%q: %v", s, err)
		}
		seed = v
	}
	sequences, steps := 200, 40
	if testing.Short() {
		sequences = 20
	}
	t.Logf("seed %d (replay with MADEBOOK_MODEL_SEED=%d)", seed, seed)
	var (
		mu     sync.Mutex
		totals stats
	)
	t.Run("sequences", func(t *testing.T) {
		for i := range sequences {
			t.Run(fmt.Sprintf("sequence %d", i), func(t *testing.T) {
				t.Parallel()
				s := newSim(t, seed, i)
				for s.step = 1; s.step <= steps; s.step++ {
					s.advanceClock()
					s.randomOp()
					s.check()
				}
				mu.Lock()
				totals.add(s.stats)
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		t.Fatalf("replay with MADEBOOK_MODEL_SEED=%d (and -run 'TestRandomSequencesKeepTheGate/sequences/sequence_N$' for one)", seed)
	}
	t.Logf("%+v", totals)
	// The sequences must have exercised what they claim to.
	for name, n := range map[string]int{"honest sequences": totals.HonestSequences, "asks": totals.Asks, "answers": totals.Answers, "refusals": totals.Refused,
		"run_parked tool calls": totals.ParkedCalls, "run_has_open_ask finishes": totals.OpenAskFinishes,
		"read-only calls on parked runs": totals.ReadOnParked, "child runs": totals.Children,
		"premature imports": totals.Premature, "premature rows seen": totals.PrematureRows} {
		if n == 0 && totals.Sequences >= 20 {
			t.Errorf("no %s in %d sequences: the generator is not reaching them", name, totals.Sequences)
		}
	}
}

type stats struct {
	Sequences, HonestSequences,
	Asks, Answers, Refused, ParkedCalls, OpenAskFinishes, ReadOnParked, Children, Premature, PrematureRows int
}

func (s *stats) add(o stats) {
	s.Sequences += o.Sequences
	s.HonestSequences += o.HonestSequences
	s.Asks += o.Asks
	s.Answers += o.Answers
	s.Refused += o.Refused
	s.ParkedCalls += o.ParkedCalls
	s.OpenAskFinishes += o.OpenAskFinishes
	s.ReadOnParked += o.ReadOnParked
	s.Children += o.Children
	s.Premature += o.Premature
	s.PrematureRows += o.PrematureRows
}

// The model.
type (
	mSession struct {
		id    string
		owner int // index into sim.agents
	}
	mRun struct {
		id, session, parent, status string
		owner                       int
		ended                       string // ended_at as stored, "" for NULL
		asks                        []*mAsk
		open                        *mAsk
		sideEffects                 int
		// started is when the run started: a call's started_at may be
		// no earlier than ledger.ClockSkew before it.
		started time.Time
	}
	mAsk struct {
		id         string
		run        *mRun
		parkedFrom string
		options    map[string]string
		created    string
		answer     string
		answeredAt string
		answeredBy int64
	}
	mCall struct {
		id           int64
		run          *mRun
		server, tool string
		writes       bool
		started      string
		// deliberate marks a call the sequence made premature on purpose.
		deliberate bool
	}
	toolKey struct{ server, tool string }
)

// sim is one sequence: a fresh database, its people and agents, and the
// model of what the ledger must hold.
type sim struct {
	t        *testing.T
	seed     uint64
	seq      int
	step     int
	rng      *rand.Rand
	kit      *testkit.Kit
	ctx      context.Context
	lead     auth.Actor
	admin    auth.Actor
	viewer   auth.Actor
	agents   []auth.Actor
	sessions []mSession
	runs     []*mRun
	asks     []*mAsk
	calls    []*mCall
	registry map[toolKey]bool
	names    int
	// imports says the sequence may make premature side effects on
	// purpose; the others are honest, and report 2 must stay empty.
	imports bool
	log     []string
	stats
}

var tools = []toolKey{
	{"mcp-monitor", "get_cpu_info"}, {"mcp-monitor", "get_memory_info"}, {"Vodou-Recall", "memory_store"},
	{"fs", "read_file"}, {"fs", "write_file"}, {"fs", "mystery"},
}

var terminalStatuses = []string{ledger.Complete, ledger.Partial, ledger.Blocked, ledger.Failed, ledger.Cancelled}

func newSim(t *testing.T, seed uint64, seq int) *sim {
	t.Helper()
	k := testkit.New(t)
	s := &sim{t: t, seed: seed, seq: seq, rng: rand.New(rand.NewPCG(seed, uint64(seq))), kit: k, ctx: context.Background(),
		registry: map[toolKey]bool{}}
	s.imports = s.chance(0.5)
	s.Sequences = 1
	if !s.imports {
		s.HonestSequences = 1
	}
	s.lead, _ = k.Lead()
	s.admin, _ = k.Person(auth.Admin)
	s.viewer, _ = k.Person(auth.Viewer)
	a0, _ := k.Agent()
	a1, _ := k.Agent()
	s.agents = []auth.Actor{a0, a1}
	mission := k.Mission(s.lead, false)
	// Two sessions of the first agent (a parent never crosses sessions, even
	// the same agent's) and one of the second.
	for _, owner := range []int{0, 0, 1} {
		s.sessions = append(s.sessions, mSession{id: k.Session(s.agents[owner], mission), owner: owner})
	}
	return s
}

func (s *sim) now() string { return db.FormatTime(s.kit.Clock.Now()) }

func (s *sim) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf("%2d  ", s.step)+fmt.Sprintf(format, args...))
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d sequence %d step %d: %s\nreplay with MADEBOOK_MODEL_SEED=%d\nthe sequence so far:\n%s",
		s.seed, s.seq, s.step, fmt.Sprintf(format, args...), s.seed, strings.Join(s.log, "\n"))
}

func (s *sim) chance(p float64) bool { return s.rng.Float64() < p }

func pick[T any](s *sim, list []T) T { return list[s.rng.IntN(len(list))] }

// advanceClock moves time on by 0 to 2.5 s; often not at all, so that
// equal times (started_at = answered_at) are exercised too.
func (s *sim) advanceClock() {
	if s.chance(0.3) {
		return
	}
	s.kit.Clock.Advance(time.Duration(1+s.rng.IntN(2500)) * time.Millisecond)
}

func (s *sim) randomOp() {
	switch w := s.rng.IntN(100); {
	case w < 14 || len(s.runs) == 0:
		s.startRun()
	case w < 28:
		s.ask()
	case w < 42:
		s.answer()
	case w < 64:
		s.toolCall(false)
	case w < 78:
		s.finish()
	case w < 85:
		s.classify()
	case w < 93 && !s.imports:
		s.toolCall(false)
	case w < 90:
		s.importBackdated()
	case w < 93:
		s.memoryStore()
	default:
		s.toolCall(true)
	}
}

// outcome is what the model says a call must answer: ok (code ""), or a
// refusal of a kind and code, naming an ask when ask is set.
type outcome struct {
	kind errs.Kind
	code string
	ask  string
}

var okay = outcome{}

func refuse(kind errs.Kind, code string) outcome { return outcome{kind: kind, code: code} }

// expect compares the service's answer with the model's and reports
// whether the call succeeded.
func (s *sim) expect(what string, err error, want outcome) bool {
	s.t.Helper()
	if want.code == "" {
		if err != nil {
			s.fatalf("%s: %v (%s), the model expected success", what, err, errs.CodeOf(err))
		}
		s.logf("%s: ok", what)
		return true
	}
	e, ok := errs.As(err)
	if !ok || e.Kind != want.kind || e.Code != want.code {
		s.fatalf("%s: got %v (%s), the model expected %s", what, err, errs.CodeOf(err), want.code)
	}
	if want.ask != "" && e.Details["ask"] != want.ask {
		s.fatalf("%s: %s names ask %v, the model expected %s", what, want.code, e.Details["ask"], want.ask)
	}
	s.logf("%s: refused %s", what, want.code)
	s.Refused++
	return false
}

// agentFor is the run's or session's owner most of the time, sometimes
// the other agent, sometimes a person.
func (s *sim) agentFor(owner int) (auth.Actor, string) {
	switch x := s.rng.Float64(); {
	case x < 0.86:
		return s.agents[owner], fmt.Sprintf("agent%d", owner)
	case x < 0.94:
		return s.agents[1-owner], fmt.Sprintf("agent%d", 1-owner)
	default:
		return s.lead, "lead"
	}
}

func (s *sim) runByID(id string) *mRun {
	for _, r := range s.runs {
		if r.id == id {
			return r
		}
	}
	return nil
}

// someRun is an existing run, or now and then one that does not exist.
func (s *sim) someRun(candidates []*mRun) (string, *mRun) {
	if len(candidates) == 0 || s.chance(0.03) {
		return "run_unknown", nil
	}
	r := pick(s, candidates)
	return r.id, r
}

func (s *sim) startRun() {
	sess := pick(s, s.sessions)
	sessID := sess.id
	if s.chance(0.04) {
		sessID = "ses_unknown"
	}
	actor, who := s.agentFor(sess.owner)
	s.names++
	name := fmt.Sprintf("run-%d", s.names)
	if s.chance(0.04) {
		name = " "
	}
	parent := ""
	switch x := s.rng.Float64(); {
	case x < 0.45 || len(s.runs) == 0:
	case x < 0.92:
		parent = pick(s, s.runs).id
	default:
		parent = "run_unknown"
	}
	want := okay
	switch p := s.runByID(parent); {
	case !actor.IsAgent():
		want = refuse(errs.Forbidden, "forbidden")
	case strings.TrimSpace(name) == "":
		want = refuse(errs.Invalid, "name_required")
	case sessID != sess.id:
		want = refuse(errs.NotFound, "session_not_found")
	case actor != s.agents[sess.owner]:
		want = refuse(errs.Forbidden, "forbidden")
	case parent != "" && (p == nil || p.session != sess.id):
		want = refuse(errs.Invalid, "parent_not_found")
	}
	r, err := s.kit.Ledger.StartRun(s.ctx, actor, sessID, name, parent)
	if !s.expect(fmt.Sprintf("%s starts %q on %s under %q", who, name, sessID, parent), err, want) {
		return
	}
	if r.Status != ledger.Running || r.Parent != parent || r.Session != sess.id {
		s.fatalf("started %+v", r)
	}
	s.runs = append(s.runs, &mRun{id: r.ID, session: sess.id, parent: parent, status: ledger.Running, owner: sess.owner, started: r.StartedAt})
	if parent != "" {
		s.Children++
	}
}

// validOptions is a menu of 1 to 9 numbered options.
func (s *sim) validOptions() map[string]string {
	n := 1 + s.rng.IntN(4)
	if s.chance(0.1) {
		n = 9
	}
	opts := map[string]string{}
	for i := 1; i <= n; i++ {
		opts[strconv.Itoa(i)] = fmt.Sprintf("Option %d", i)
	}
	return opts
}

func (s *sim) invalidOptions() map[string]string {
	ten := map[string]string{}
	for i := 1; i <= 10; i++ {
		ten[strconv.Itoa(i)] = "x"
	}
	return pick(s, []map[string]string{
		{}, nil, ten, {"0": "Yes"}, {"1": "Yes", "10": "No"}, {"a": "Yes"}, {"1": ""}, {"1": "Yes", "2": "  "},
	})
}

// ask records a question on a run. Honest sequences only ask on runs that
// have made no side-effecting call: a call before the ask would be the
// seed's memory_store bug, which memoryStore reproduces on purpose.
func (s *sim) ask() {
	var honest []*mRun
	for _, r := range s.runs {
		if r.sideEffects == 0 {
			honest = append(honest, r)
		}
	}
	if len(honest) == 0 {
		s.startRun()
		return
	}
	id, r := s.someRun(honest)
	owner := 0
	if r != nil {
		owner = r.owner
	}
	actor, who := s.agentFor(owner)
	prompt := fmt.Sprintf("question %d?", s.step)
	if s.chance(0.03) {
		prompt = ""
	}
	opts, validOpts := s.validOptions(), true
	if s.chance(0.15) {
		opts, validOpts = s.invalidOptions(), false
	}
	want := okay
	switch {
	case !actor.IsAgent():
		want = refuse(errs.Forbidden, "forbidden")
	case prompt == "":
		want = refuse(errs.Invalid, "prompt_required")
	case !validOpts:
		want = refuse(errs.Invalid, "invalid_options")
	case r == nil:
		want = refuse(errs.NotFound, "run_not_found")
	case actor != s.agents[r.owner]:
		want = refuse(errs.Forbidden, "forbidden")
	case r.status == ledger.Parked:
		want = outcome{errs.Conflict, "run_parked", r.open.id}
	}
	s.recordAsk(fmt.Sprintf("%s asks on %s (%d options, valid %v)", who, id, len(opts), validOpts), actor, id, r, prompt, opts, want)
}

func (s *sim) recordAsk(what string, actor auth.Actor, id string, r *mRun, prompt string, opts map[string]string, want outcome) {
	a, err := s.kit.Ledger.RecordAsk(s.ctx, actor, id, ledger.AskInput{Prompt: prompt, Options: opts})
	if !s.expect(what, err, want) {
		return
	}
	if a.RunStatus != ledger.Parked || a.ParkedFrom != r.status {
		s.fatalf("ask %+v, want parked from %s", a, r.status)
	}
	m := &mAsk{id: a.ID, run: r, parkedFrom: r.status, options: opts, created: s.now()}
	r.status, r.ended, r.open = ledger.Parked, "", m
	r.asks = append(r.asks, m)
	s.asks = append(s.asks, m)
	s.Asks++
}

func (s *sim) answer() {
	var open []*mAsk
	for _, a := range s.asks {
		if a.answeredAt == "" {
			open = append(open, a)
		}
	}
	var a *mAsk
	id := "ask_unknown"
	switch x := s.rng.Float64(); {
	case x < 0.7 && len(open) > 0:
		a = pick(s, open)
	case x < 0.96 && len(s.asks) > 0:
		a = pick(s, s.asks)
	}
	if a != nil {
		id = a.id
	}
	actor, who := s.lead, "lead"
	switch x := s.rng.Float64(); {
	case x < 0.15:
		actor, who = s.admin, "admin"
	case x < 0.22:
		actor, who = s.viewer, "viewer"
	case x < 0.28:
		actor, who = s.agents[0], "agent0"
	}
	option := pick(s, []string{"0", "", "Yes", "10", "9"})
	if a != nil && s.chance(0.75) {
		option = pick(s, slices.Sorted(maps.Keys(a.options)))
	}
	want := okay
	switch {
	case !actor.CanLead():
		want = refuse(errs.Forbidden, "forbidden")
	case a == nil:
		want = refuse(errs.NotFound, "ask_not_found")
	case a.answeredAt != "":
		want = refuse(errs.Conflict, "already_answered")
	case a.options[option] == "":
		want = refuse(errs.Invalid, "invalid_option")
	}
	got, err := s.kit.Ledger.AnswerAsk(s.ctx, actor, id, option)
	if !s.expect(fmt.Sprintf("%s answers %s with %q", who, id, option), err, want) {
		return
	}
	if got.RunStatus != a.parkedFrom {
		s.fatalf("answer restored %s, the ask parked from %s", got.RunStatus, a.parkedFrom)
	}
	a.answer, a.answeredAt, a.answeredBy = option, s.now(), actor.UserID
	r := a.run
	r.status, r.open, r.ended = a.parkedFrom, nil, ""
	if ledger.Terminal(a.parkedFrom) {
		r.ended = s.now()
	}
	s.Answers++
}

// toolCall reports a call on a run. Honest calls start now (unset, or set
// to now); a call may be set earlier only on a run that never asked, which
// no gate governs.
func (s *sim) toolCall(parkedOnly bool) {
	candidates := s.runs
	if parkedOnly {
		candidates = nil
		for _, r := range s.runs {
			if r.status == ledger.Parked {
				candidates = append(candidates, r)
			}
		}
		if len(candidates) == 0 {
			candidates = s.runs
		}
	}
	id, r := s.someRun(candidates)
	owner := 0
	if r != nil {
		owner = r.owner
	}
	actor, who := s.agentFor(owner)
	tk := pick(s, tools)
	if s.chance(0.03) {
		tk.tool = ""
	}
	var flag *bool
	switch x := s.rng.Float64(); {
	case x < 0.3:
		flag = new(bool)
		*flag = true
	case x < 0.6:
		flag = new(bool)
	}
	var started *time.Time
	startedAt := s.now()
	switch x := s.rng.Float64(); {
	case x < 0.15:
		now := s.kit.Clock.Now()
		started = &now
	case x < 0.25 && r != nil && len(r.asks) == 0:
		earlier := s.kit.Clock.Now().Add(-time.Duration(1+s.rng.IntN(600)) * time.Second)
		if floor := r.started.Add(-ledger.ClockSkew); earlier.Before(floor) {
			earlier = floor
		}
		started, startedAt = &earlier, db.FormatTime(earlier)
	}
	// The registry decides, else the call writes; the agent's flag may
	// only raise it.
	writes := true
	if v, ok := s.registry[tk]; ok {
		writes = v
	}
	writes = writes || (flag != nil && *flag)
	want := okay
	switch {
	case !actor.IsAgent():
		want = refuse(errs.Forbidden, "forbidden")
	case tk.tool == "":
		want = refuse(errs.Invalid, "tool_required")
	case r == nil:
		want = refuse(errs.NotFound, "run_not_found")
	case actor != s.agents[r.owner]:
		want = refuse(errs.Forbidden, "forbidden")
	case writes && r.status == ledger.Parked:
		want = outcome{errs.Conflict, "run_parked", r.open.id}
		s.ParkedCalls++
	}
	flagText := "unset"
	if flag != nil {
		flagText = strconv.FormatBool(*flag)
	}
	what := fmt.Sprintf("%s calls %s.%s on %s (side_effecting %s, writes %v, started %s)", who, tk.server, tk.tool, id, flagText, writes, startedAt)
	s.recordCall(what, actor, id, r, ledger.ToolCallInput{Server: tk.server, Tool: tk.tool, SideEffecting: flag, StartedAt: started},
		writes, startedAt, false, want)
}

func (s *sim) recordCall(what string, actor auth.Actor, id string, r *mRun, in ledger.ToolCallInput, writes bool, startedAt string,
	deliberate bool, want outcome) {
	c, err := s.kit.Ledger.RecordToolCall(s.ctx, actor, id, in)
	if !s.expect(what, err, want) {
		return
	}
	if c.SideEffecting != writes || db.FormatTime(c.StartedAt) != startedAt {
		s.fatalf("recorded %+v, the model expected side_effecting %v started %s", c, writes, startedAt)
	}
	if !writes && r.status == ledger.Parked {
		s.ReadOnParked++
	}
	s.calls = append(s.calls, &mCall{id: c.ID, run: r, server: in.Server, tool: in.Tool, writes: writes, started: startedAt, deliberate: deliberate})
	if writes {
		r.sideEffects++
	}
}

func (s *sim) finish() {
	id, r := s.someRun(s.runs)
	owner := 0
	if r != nil {
		owner = r.owner
	}
	actor, who := s.agentFor(owner)
	status := pick(s, terminalStatuses)
	if s.chance(0.08) {
		status = pick(s, []string{ledger.Running, ledger.Parked, "done", ""})
	}
	want := okay
	switch {
	case !actor.IsAgent():
		want = refuse(errs.Forbidden, "forbidden")
	case !slices.Contains(terminalStatuses, status):
		want = refuse(errs.Invalid, "invalid_status")
	case r == nil:
		want = refuse(errs.NotFound, "run_not_found")
	case actor != s.agents[r.owner]:
		want = refuse(errs.Forbidden, "forbidden")
	case r.open != nil:
		want = outcome{errs.Conflict, "run_has_open_ask", r.open.id}
		s.OpenAskFinishes++
	case ledger.Terminal(r.status):
		want = refuse(errs.Conflict, "run_finished")
	}
	got, err := s.kit.Ledger.FinishRun(s.ctx, actor, id, status)
	if !s.expect(fmt.Sprintf("%s finishes %s as %q", who, id, status), err, want) {
		return
	}
	if got.Status != status {
		s.fatalf("finished %+v, want %s", got, status)
	}
	r.status, r.ended = status, s.now()
}

// classify changes the tool registry, as an admin (or, refused, a lead or
// a viewer).
func (s *sim) classify() {
	actor, who := s.admin, "admin"
	if s.chance(0.15) {
		actor, who = pick(s, []auth.Actor{s.lead, s.viewer}), "a non-admin"
	}
	tk := pick(s, tools)
	if s.chance(0.7) {
		writes := s.chance(0.5)
		want := okay
		if !actor.IsAdmin() {
			want = refuse(errs.Forbidden, "forbidden")
		}
		_, err := s.kit.Ledger.SetTool(s.ctx, actor, tk.server, tk.tool, ledger.ToolInput{SideEffecting: writes})
		if s.expect(fmt.Sprintf("%s classifies %s.%s as writes=%v", who, tk.server, tk.tool, writes), err, want) {
			s.registry[tk] = writes
		}
		return
	}
	want := okay
	if _, ok := s.registry[tk]; !actor.IsAdmin() {
		want = refuse(errs.Forbidden, "forbidden")
	} else if !ok {
		want = refuse(errs.NotFound, "tool_not_found")
	}
	err := s.kit.Ledger.DeleteTool(s.ctx, actor, tk.server, tk.tool)
	if s.expect(fmt.Sprintf("%s removes %s.%s", who, tk.server, tk.tool), err, want) {
		delete(s.registry, tk)
	}
}

// importBackdated reports, on a run whose ask was answered, a
// side-effecting call that started before the answer: the ledger records
// it as reported, and the audit must find it.
func (s *sim) importBackdated() {
	var answered []*mAsk
	for _, a := range s.asks {
		if a.answeredAt != "" && a.run.status != ledger.Parked {
			answered = append(answered, a)
		}
	}
	if len(answered) == 0 {
		s.memoryStore()
		return
	}
	a := pick(s, answered)
	answeredAt, err := db.ParseTime(a.answeredAt)
	if err != nil {
		s.fatalf("the model's answer time: %v", err)
	}
	at := answeredAt.Add(-time.Duration(1+s.rng.IntN(300_000)) * time.Millisecond)
	yes := true
	s.Premature++
	s.recordCall(fmt.Sprintf("IMPORT agent%d back-dates memory_store on %s to %s, before %s's answer at %s",
		a.run.owner, a.run.id, db.FormatTime(at), a.id, a.answeredAt),
		s.agents[a.run.owner], a.run.id, a.run, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store", SideEffecting: &yes, StartedAt: &at},
		true, db.FormatTime(at), true, okay)
}

// memoryStore reproduces the seed's worst bug: memory_store ran in the fan,
// then the run parked to ask permission for it.
func (s *sim) memoryStore() {
	var clean []*mRun
	for _, r := range s.runs {
		if r.status != ledger.Parked && r.sideEffects == 0 {
			clean = append(clean, r)
		}
	}
	if len(clean) == 0 {
		s.startRun()
		return
	}
	r := pick(s, clean)
	var started *time.Time
	startedAt := s.now()
	if s.chance(0.5) {
		earlier := s.kit.Clock.Now().Add(-time.Duration(s.rng.IntN(60_000)) * time.Millisecond)
		if floor := r.started.Add(-ledger.ClockSkew); earlier.Before(floor) {
			earlier = floor
		}
		started, startedAt = &earlier, db.FormatTime(earlier)
	}
	yes := true
	s.Premature++
	s.recordCall(fmt.Sprintf("MEMORY_STORE agent%d calls memory_store on %s started %s", r.owner, r.id, startedAt),
		s.agents[r.owner], r.id, r, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store", SideEffecting: &yes, StartedAt: started},
		true, startedAt, true, okay)
	if s.chance(0.5) {
		s.kit.Clock.Advance(time.Duration(s.rng.IntN(2000)) * time.Millisecond)
	}
	s.recordAsk(fmt.Sprintf("MEMORY_STORE agent%d then asks on %s", r.owner, r.id), s.agents[r.owner], r.id, r,
		"save this reading?", map[string]string{"1": "Yes", "2": "No"}, okay)
}

// check compares the database with the model and runs the audit queries.
func (s *sim) check() {
	s.t.Helper()
	q := s.kit.SQL()

	// Runs.
	rows, err := q.Query("SELECT id, session_id, COALESCE(parent_id, ''), status, COALESCE(ended_at, '') FROM runs ORDER BY id")
	if err != nil {
		s.fatalf("read runs: %v", err)
	}
	var gotRuns, wantRuns []string
	for rows.Next() {
		var id, sess, parent, status, ended string
		if err := rows.Scan(&id, &sess, &parent, &status, &ended); err != nil {
			s.fatalf("scan run: %v", err)
		}
		gotRuns = append(gotRuns, strings.Join([]string{id, sess, parent, status, ended}, " "))
	}
	rows.Close()
	for _, r := range s.runs {
		wantRuns = append(wantRuns, strings.Join([]string{r.id, r.session, r.parent, r.status, r.ended}, " "))
	}
	// By id (each line starts with it), in the order both engines sort
	// text: byte by byte.
	slices.Sort(wantRuns)
	if !slices.Equal(gotRuns, wantRuns) {
		s.fatalf("runs in the database:\n  %s\nthe model:\n  %s", strings.Join(gotRuns, "\n  "), strings.Join(wantRuns, "\n  "))
	}

	// Asks.
	rows, err = q.Query(`SELECT id, run_id, parked_from, created_at, COALESCE(answer, ''), COALESCE(answered_at, ''),
		COALESCE(answered_by, 0) FROM asks ORDER BY id`)
	if err != nil {
		s.fatalf("read asks: %v", err)
	}
	var gotAsks, wantAsks []string
	for rows.Next() {
		var id, run, from, created, answer, at string
		var by int64
		if err := rows.Scan(&id, &run, &from, &created, &answer, &at, &by); err != nil {
			s.fatalf("scan ask: %v", err)
		}
		gotAsks = append(gotAsks, fmt.Sprintf("%s %s %s %s %q %s %d", id, run, from, created, answer, at, by))
	}
	rows.Close()
	for _, a := range s.asks {
		wantAsks = append(wantAsks, fmt.Sprintf("%s %s %s %s %q %s %d", a.id, a.run.id, a.parkedFrom, a.created, a.answer, a.answeredAt, a.answeredBy))
	}
	slices.Sort(wantAsks)
	if !slices.Equal(gotAsks, wantAsks) {
		s.fatalf("asks in the database:\n  %s\nthe model:\n  %s", strings.Join(gotAsks, "\n  "), strings.Join(wantAsks, "\n  "))
	}

	// Tool calls.
	rows, err = q.Query("SELECT id, run_id, server, tool, is_side_effecting, started_at FROM tool_calls ORDER BY id")
	if err != nil {
		s.fatalf("read tool calls: %v", err)
	}
	var gotCalls, wantCalls []string
	for rows.Next() {
		var id int64
		var run, server, tool, started string
		var writes bool
		if err := rows.Scan(&id, &run, &server, &tool, &writes, &started); err != nil {
			s.fatalf("scan tool call: %v", err)
		}
		gotCalls = append(gotCalls, fmt.Sprintf("%d %s %s.%s %v %s", id, run, server, tool, writes, started))
	}
	rows.Close()
	for _, c := range s.calls {
		wantCalls = append(wantCalls, fmt.Sprintf("%d %s %s.%s %v %s", c.id, c.run.id, c.server, c.tool, c.writes, c.started))
	}
	if !slices.Equal(gotCalls, wantCalls) {
		s.fatalf("tool calls in the database:\n  %s\nthe model:\n  %s", strings.Join(gotCalls, "\n  "), strings.Join(wantCalls, "\n  "))
	}

	// Parked means exactly: one question waits.
	var mismatched int
	if err := q.QueryRow(`SELECT count(*) FROM runs r WHERE (r.status = 'parked') !=
		((SELECT count(*) FROM asks a WHERE a.run_id = r.id AND a.answered_at IS NULL) = 1)`).Scan(&mismatched); err != nil {
		s.fatalf("parked check: %v", err)
	}
	if mismatched != 0 {
		s.fatalf("%d runs are parked without exactly one open ask, or hold one without being parked", mismatched)
	}

	// Report 1: questions stuck on finished runs. Passing is zero rows, always.
	rows, err = q.Query(unanswerableAsks)
	if err != nil {
		s.fatalf("report 1: %v", err)
	}
	var stuck []string
	for rows.Next() {
		var id, status, prompt, created string
		if err := rows.Scan(&id, &status, &prompt, &created); err != nil {
			s.fatalf("scan report 1: %v", err)
		}
		stuck = append(stuck, fmt.Sprintf("%s %s %q %s", id, status, prompt, created))
	}
	rows.Close()
	if len(stuck) > 0 {
		s.fatalf("report 1 (unanswerable asks) has rows:\n  %s", strings.Join(stuck, "\n  "))
	}

	// Report 2: side effects that started before their gate was answered.
	// Exactly the rows the model expects, each from a deliberate import.
	rows, err = q.Query(prematureSideEffects)
	if err != nil {
		s.fatalf("report 2: %v", err)
	}
	var got []string
	for rows.Next() {
		var call int64
		var ask, run, tool, started string
		var answered *string
		if err := rows.Scan(&call, &ask, &run, &tool, &started, &answered); err != nil {
			s.fatalf("scan report 2: %v", err)
		}
		at := "NULL"
		if answered != nil {
			at = *answered
		}
		got = append(got, fmt.Sprintf("call %d ask %s run %s %s %s %s", call, ask, run, tool, started, at))
	}
	rows.Close()
	var want []string
	for _, c := range s.calls {
		if !c.writes {
			continue
		}
		for _, a := range c.run.asks {
			if a.answeredAt == "" || c.started < a.answeredAt {
				if !c.deliberate {
					s.fatalf("the model itself expects a premature row for honest call %d on ask %s: the generator is wrong", c.id, a.id)
				}
				at := a.answeredAt
				if at == "" {
					at = "NULL"
				}
				want = append(want, fmt.Sprintf("call %d ask %s run %s %s %s %s", c.id, a.id, c.run.id, c.tool, c.started, at))
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		s.fatalf("report 2 (premature side effects):\n  %s\nthe model expects:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if s.stats.Premature == 0 && len(got) > 0 {
		s.fatalf("report 2 has rows though nothing premature was imported")
	}
	s.PrematureRows = max(s.PrematureRows, len(got))
}
