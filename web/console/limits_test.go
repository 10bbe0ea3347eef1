package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// A too-long instruction comes back beside the instruction field, with
// what was typed kept and nothing written: on the session page's
// remediation form, and on a gate in the Attention queue.
func TestATooLongInstructionIsShownBesideItsField(t *testing.T) {
	kit, base := consoleServer(t, false)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	id := kit.Session(agent, kit.Mission(lead, false))
	b := webtest.ConsoleAs(t, base, lead.Email)
	long := strings.Repeat("é", governance.MaxInstruction+1)
	beside := `data-testid="error-instruction">The instruction is 4001 characters; at most 4000 are allowed.</p>`

	t.Run("requesting a remediation", func(t *testing.T) {
		page := b.Submit("/sessions/"+id+"/remediations", url.Values{"severity": {"required"}, "instruction": {long}})
		if page.Status != http.StatusUnprocessableEntity || !strings.Contains(page.Body, beside) {
			t.Fatalf("status %d, the message is not beside the instruction: %s", page.Status, webtest.Short([]byte(page.Body)))
		}
		if !strings.Contains(page.Text(), ">"+long+"</textarea>") {
			t.Errorf("the instruction typed is not kept in its field")
		}
		d, err := kit.Gov.Sessions.Get(context.Background(), lead, id)
		if err != nil || len(d.Remediations) != 0 {
			t.Fatalf("remediations %v, %v: a refused request wrote one", d.Remediations, err)
		}
	})
	t.Run("resolving a gate", func(t *testing.T) {
		gate, err := kit.Gov.Decisions.Open(context.Background(), agent, id,
			governance.DecisionInput{Title: "Schema", Question: "Rename the column?"})
		if err != nil {
			t.Fatal(err)
		}
		res, body := b.HTMXPost("/decisions/"+gate.Ref+"/resolve", url.Values{"resolution": {"Yes"}, "instruction": {long}})
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `data-ref="`+gate.Ref+`"`) ||
			!strings.Contains(body, beside) {
			t.Fatalf("status %d, the message is not beside the gate's instruction: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
		if !strings.Contains(body, `aria-invalid="true" aria-describedby="`+gate.Ref+`-instruction-error"`) ||
			!strings.Contains(body, `id="`+gate.Ref+`-instruction-error"`) {
			t.Errorf("the instruction field is not marked invalid and tied to its message: %s", webtest.Short([]byte(body)))
		}
		if strings.Contains(body, `role="alert"`) {
			t.Errorf("the message is also over the whole form")
		}
	})
}
