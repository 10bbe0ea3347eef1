package governance_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

const promptPayload = `{"prompt":"Run make deploy?","options":{"1":"Allow","2":"Deny","3":"Allow for this session"},"tool":"Bash","paths":["deploy/prod.sh"]}`

// prompt raises a permission prompt on the session and returns it.
func prompt(t *testing.T, w *world, session string) governance.PermissionPrompt {
	t.Helper()
	r := report(t, w, w.agent, session, ev("permission.prompt.requested", promptPayload))
	if r.Permission == nil {
		t.Fatalf("the report %+v names no prompt", r)
	}
	return *r.Permission
}

// attention is the queue's items of one kind, as "ref title" lines.
func attention(t *testing.T, w *world, kind string) []string {
	t.Helper()
	out := []string{}
	for _, it := range must(w.Gov.Attention.List(t.Context()))(t) {
		if it.Kind == kind {
			out = append(out, it.Session+" "+it.Ref+" "+it.Title)
		}
	}
	return out
}

func TestAPermissionPromptWaitsOnAPersonAndItsAnswerIsDeliveredOnce(t *testing.T) {
	w := newWorld(t)
	s := w.Session(w.agent, w.mission)
	p := prompt(t, w, s)
	if p.Prompt != "Run make deploy?" || p.Tool != "Bash" || !slices.Equal(p.Paths, []string{"deploy/prod.sh"}) ||
		len(p.Options) != 3 || p.Options[0] != (governance.AskOption{Key: "1", Label: "Allow"}) || p.AnsweredAt != nil {
		t.Fatalf("prompt %+v", p)
	}
	ref := fmt.Sprintf("PRM-%d", p.ID)

	// While it waits: DECISION_REQUIRED on the tool and the paths it names.
	b := briefIs(t, w, w.agent, s, protocol.DecisionRequired, "permission_requested |")
	if !slices.Equal(b.BlockedScope, []string{"tool:Bash", "deploy/prod.sh"}) || b.Reasons[0].Ref != ref ||
		!strings.Contains(b.Reason, `"Run make deploy?"`) || len(b.Permissions) != 0 {
		t.Fatalf("brief while the prompt waits: %+v", b)
	}
	if got := attention(t, w, governance.ItemPermission); len(got) != 1 || got[0] != fmt.Sprintf("%s %d Permission asked to use Bash", s, p.ID) {
		t.Fatalf("attention lists %q", got)
	}
	// A prompt alone leaves an untracked session untracked: it still gates nothing.
	if st, tracked := lifecycleOf(t, w, s); st != "IDLE" || tracked {
		t.Fatalf("after a prompt the session is %s tracked=%v", st, tracked)
	}

	// Refusals write nothing.
	for _, c := range []struct {
		kind   errs.Kind
		code   string
		answer func() error
	}{
		{errs.Forbidden, "forbidden", func() error { _, err := w.Gov.Permissions.Answer(t.Context(), w.agent, ref, "1"); return err }},
		{errs.Forbidden, "forbidden", func() error { _, err := w.Gov.Permissions.Answer(t.Context(), w.viewer, ref, "1"); return err }},
		{errs.Invalid, "option_required", func() error { _, err := w.Gov.Permissions.Answer(t.Context(), w.lead, ref, " "); return err }},
		{errs.Invalid, "unknown_option", func() error { _, err := w.Gov.Permissions.Answer(t.Context(), w.lead, ref, "4"); return err }},
		{errs.NotFound, "permission_not_found", func() error {
			_, err := w.Gov.Permissions.Answer(t.Context(), w.lead, "PRM-999", "1")
			return err
		}},
		{errs.NotFound, "permission_not_found", func() error { _, err := w.Gov.Permissions.Answer(t.Context(), w.lead, "x", "1"); return err }},
	} {
		refused(t, w.Kit, c.kind, c.code, c.answer)
	}

	// A lead answers (by the prompt's number): recorded, and the prompt leaves the queue.
	a := must(w.Gov.Permissions.Answer(t.Context(), w.lead, fmt.Sprint(p.ID), "2"))(t)
	if a.Answer != "2" || a.AnsweredAt == nil || a.AnsweredBy != w.lead.Email || a.DeliveredAt != nil {
		t.Fatalf("answered prompt %+v", a)
	}
	if got := attention(t, w, governance.ItemPermission); len(got) != 0 {
		t.Fatalf("attention still lists %q", got)
	}
	refused(t, w.Kit, errs.Conflict, "already_answered", func() error {
		_, err := w.Gov.Permissions.Answer(t.Context(), w.lead, ref, "1")
		return err
	})

	// The preview shows it; the next brief delivers it once; the one after does not.
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t)
	if len(d.Brief.Permissions) != 1 || len(d.Permissions) != 1 || d.Permissions[0].DeliveredAt != nil {
		t.Fatalf("the preview shows %+v, the session %+v", d.Brief.Permissions, d.Permissions)
	}
	b = briefIs(t, w, w.agent, s, protocol.Continue, "|")
	want := governance.PermissionAnswer{ID: p.ID, Prompt: "Run make deploy?", Option: "2", Label: "Deny",
		AnsweredAt: w.Clock.Now(), AnsweredBy: w.lead.Email}
	if len(b.Permissions) != 1 || b.Permissions[0] != want {
		t.Fatalf("the brief delivers %+v, want %+v", b.Permissions, want)
	}
	if b = briefIs(t, w, w.agent, s, protocol.Continue, "|"); len(b.Permissions) != 0 {
		t.Fatalf("delivered again: %+v", b.Permissions)
	}
	tl := timeline(t, w, s)
	for _, line := range []string{
		agentLabel(w.agent) + " lifecycle.event permission.prompt.requested",
		personLabel(w.lead) + " lifecycle.event permission.prompt.resolved",
		agentLabel(w.agent) + " permission.answer.delivered " + ref,
	} {
		if countLines(tl, line) != 1 {
			t.Fatalf("the timeline %q does not hold %q once", tl, line)
		}
	}
	if d := must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t); d.Permissions[0].DeliveredAt == nil {
		t.Fatalf("the session page does not show the delivery: %+v", d.Permissions[0])
	}
}

func TestRacingBriefsDeliverAPermissionAnswerOnce(t *testing.T) {
	w := newWorld(t)
	s := w.Session(w.agent, w.mission)
	p := prompt(t, w, s)
	must(w.Gov.Permissions.Answer(t.Context(), w.lead, fmt.Sprint(p.ID), "1"))(t)
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			b, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: s})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			n += len(b.Permissions)
			mu.Unlock()
		})
	}
	wg.Wait()
	if n != 1 {
		t.Fatalf("8 racing briefs delivered the answer %d times, want once", n)
	}
}

func TestAnotherAgentCannotRaiseAPromptOnASession(t *testing.T) {
	w := newWorld(t)
	s := w.Session(w.agent, w.mission)
	refused(t, w.Kit, errs.Forbidden, "forbidden", func() error {
		_, err := w.Gov.Lifecycle.Report(t.Context(), w.other, s, ev("permission.prompt.requested", promptPayload))
		return err
	})
}

func TestABlockedTaskIsAnAttentionItemUntilItMoves(t *testing.T) {
	w := newWorld(t)
	s := w.Session(w.agent, w.mission)
	report(t, w, w.agent, s, append(toTask, ev("architecture.impact.completed", `{"level":"implementation"}`),
		ev("task.created", `{"task":"t1"}`), ev("task.created", `{"task":"t2"}`), ev("task.blocked", `{"task":"t1"}`))...)
	if got := attention(t, w, governance.ItemTask); !slices.Equal(got, []string{s + " t1 Task t1 is blocked"}) {
		t.Fatalf("attention lists %q", got)
	}
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t)
	if d.Tasks != (governance.TaskCounts{Created: 2, Done: 0, Open: 2, Blocked: 1}) {
		t.Fatalf("tasks %+v", d.Tasks)
	}
	count := must(w.Gov.Attention.Count(t.Context()))(t)
	if items := must(w.Gov.Attention.List(t.Context()))(t); count != len(items) {
		t.Fatalf("Count says %d, List lists %d", count, len(items))
	}
	report(t, w, w.agent, s, ev("task.progress", `{"task":"t1"}`))
	if got := attention(t, w, governance.ItemTask); len(got) != 0 {
		t.Fatalf("after progress attention still lists %q", got)
	}
	report(t, w, w.agent, s, ev("task.blocked", `{"task":"t2"}`), ev("task.failed", `{"task":"t2"}`))
	if got := attention(t, w, governance.ItemTask); len(got) != 0 {
		t.Fatalf("after failing attention still lists %q", got)
	}
}
