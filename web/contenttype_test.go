package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web/webtest"
)

// Every JSON route that takes a body refuses one not declared JSON (a
// form, text/plain, none at all) with 415 unsupported_media_type in the
// contract's shape, and writes nothing; application/json with a charset
// is JSON. The Claude Code hook checks its own body and the console's
// forms are forms: neither is in this table.
func TestTheJSONAPIRefusesBodiesThatAreNotJSON(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t, testkit.WithLoopbackWebhooks) // the route table's webhook receiver is on 127.0.0.1
	checked := 0
	for _, rc := range routeTable() {
		if rc.page || rc.console || rc.path == "/hooks/:executor" || rc.path == "/mcp" ||
			(rc.method != http.MethodPost && rc.method != http.MethodPut && rc.method != http.MethodPatch) {
			continue
		}
		var caller caller
		want := 0
		for _, c := range callers[1:] {
			if s, ok := rc.want[c]; ok && s < 300 {
				caller, want = c, s
				break
			}
		}
		if want == 0 {
			continue
		}
		checked++
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "", "json"} {
			t.Run(fmt.Sprintf("%s %s as %q", rc.method, rc.path, ct), func(t *testing.T) {
				a.T = t
				path, body := rc.setup(a)
				before := dump(a)
				buf, err := json.Marshal(body)
				if err != nil {
					t.Fatal(err)
				}
				req, err := http.NewRequest(rc.method, a.Srv.URL+path, bytes.NewReader(buf))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+tokenOf(a, caller))
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				r := a.Send(req)
				webtest.CheckError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
				if changed := dumpDiff(before, dump(a)); changed != "" {
					t.Errorf("a refused body wrote:\n%s", changed)
				}
			})
		}
		t.Run(fmt.Sprintf("%s %s as JSON with a charset", rc.method, rc.path), func(t *testing.T) {
			a.T = t
			path, body := rc.setup(a)
			r := a.DoWith(rc.method, path, tokenOf(a, caller), body,
				http.Header{"Content-Type": {"Application/JSON; charset=utf-8"}})
			if r.Status != want {
				t.Errorf("status %d, want %d; body %s", r.Status, want, webtest.Short(r.Body))
			}
		})
	}
	a.T = t
	if checked < 20 {
		t.Fatalf("only %d JSON routes with a body checked", checked)
	}
}
