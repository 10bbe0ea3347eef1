package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// remediateReasons are the brief's REMEDIATE reasons as "code ref", from
// its reasons and also.
func remediateReasons(b map[string]any) []string {
	var out []string
	for _, list := range []string{"reasons", "also"} {
		rs, _ := b[list].([]any)
		for _, r := range rs {
			m, _ := r.(map[string]any)
			if m["state"] == "REMEDIATE" {
				out = append(out, fmt.Sprint(m["code"], " ", m["ref"]))
			}
		}
	}
	return out
}

func TestAHighViolationsRemediationOverHTTP(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/policies", a.AdminTok, map[string]any{"name": "No console.log",
		"severity": "high", "kind": "content_regex", "pattern": `console\.log\(`})
	brief := func(session, ack string) map[string]any {
		t.Helper()
		body := map[string]any{"session": session}
		if ack != "" {
			body["ack"] = ack
		}
		return a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, body)
	}
	trips := changeBody([2]string{"web/app.js", "console.log('x')\n"})
	clean := changeBody([2]string{"web/app.js", "log.info('x')\n"})

	t.Run("the brief has the remediation, sourced from the violation, delivered once, and one REMEDIATE reason", func(t *testing.T) {
		a.T = t
		id := a.Session(false)
		ch := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/changes", a.AgentKey, trips)
		vio := fmt.Sprintf("VIO-%v", violationsOf(t, ch)[0]["id"])
		b := brief(id, "")
		rems, _ := b["remediations"].([]any)
		if len(rems) != 1 {
			t.Fatalf("remediations %v", b["remediations"])
		}
		m := rems[0].(map[string]any)
		if m["source"] != "violation" || m["raised_by"] != vio || m["severity"] != "required" || fmt.Sprint(m["files"]) != "[web/app.js]" {
			t.Errorf("remediation %v", m)
		}
		if got := remediateReasons(b); len(got) != 1 || got[0] != "high_violation "+vio {
			t.Errorf("REMEDIATE reasons %v, want only high_violation %s", got, vio)
		}
		rem := fmt.Sprint(m["id"])
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/changes", a.AgentKey, trips)
		b2 := brief(id, b["brief_id"].(string))
		if rems, _ := b2["remediations"].([]any); len(rems) != 1 || fmt.Sprint(rems[0].(map[string]any)["id"]) != rem {
			t.Errorf("after a second report: %v", b2["remediations"])
		}
		delivered := 0
		for _, e := range a.DetailOf(id).Timeline {
			if e.Ref == rem && strings.HasPrefix(e.Kind, "remediation.") && strings.HasSuffix(e.Kind, "delivered") {
				delivered++
			}
		}
		if delivered != 1 {
			t.Errorf("delivered %d times, want once", delivered)
		}
		items := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.ViewerTok, nil)["items"].([]any)
		var mine []string
		for _, it := range items {
			if m := it.(map[string]any); m["session"] == id {
				mine = append(mine, fmt.Sprint(m["kind"], " ", m["ref"]))
			}
		}
		if len(mine) != 1 || mine[0] != "remediation "+rem {
			t.Errorf("attention %v, want the remediation alone", mine)
		}
		viewer := webtest.ConsoleAs(t, a.Srv.URL, a.Viewer.Email)
		if _, body := viewer.Get("/sessions/" + id); !strings.Contains(body, `data-source="violation"`) || !strings.Contains(body, "high violation "+vio) {
			t.Errorf("the session page does not say the violation raised it:\n%s", webtest.Short([]byte(body)))
		}
		if _, body := viewer.Get("/attention/items/remediation/" + id + "/" + rem); !strings.Contains(body, "Required remediation of a high violation") {
			t.Errorf("the Attention item does not say a high violation raised it:\n%s", webtest.Short([]byte(body)))
		}

		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/changes", a.AgentKey, clean)
		b3 := brief(id, b2["brief_id"].(string))
		if b3["next_action"] != "CONTINUE" || len(b3["remediations"].([]any)) != 0 {
			t.Errorf("after a clean report: %v %v", b3["next_action"], b3["remediations"])
		}
		for _, r := range a.DetailOf(id).Remediations {
			if fmt.Sprint(r.ID) == rem && (r.ClosedAt == nil || !strings.Contains(r.CloseNote, "no longer trips No console.log")) {
				t.Errorf("remediation %+v, want closed by the later change", r)
			}
		}
	})

	t.Run("a lead closing it over the API, or in the console, closes the violation and the REMEDIATE", func(t *testing.T) {
		a.T = t
		for _, via := range []string{"api", "console"} {
			id := a.Session(false)
			a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/changes", a.AgentKey, trips)
			rem := fmt.Sprint(a.DetailOf(id).Remediations[0].ID)
			if via == "api" {
				a.Must(http.StatusOK, http.MethodPost, "/api/v1/remediations/"+rem+"/close", a.LeadTok, map[string]any{"note": "Reviewed."})
			} else {
				lead := webtest.ConsoleAs(t, a.Srv.URL, a.Lead.Email)
				if res, body := lead.HTMXPost("/remediations/"+rem+"/close", url.Values{"note": {"Reviewed."}}); res.StatusCode != http.StatusOK {
					t.Fatalf("console close: %d %s", res.StatusCode, webtest.Short([]byte(body)))
				}
			}
			d := a.DetailOf(id)
			if len(d.Violations) != 0 {
				t.Errorf("%s: open violations %+v after closing its remediation", via, d.Violations)
			}
			b := brief(id, "")
			if b["next_action"] != "CONTINUE" || len(remediateReasons(b)) != 0 {
				t.Errorf("%s: brief %v %v", via, b["next_action"], remediateReasons(b))
			}
		}
	})
}
