package mcp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/mcp"
	"github.com/madebook/madebook/web/webtest"
)

// initializeBody is an MCP initialize request.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
	`"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends body to /mcp as an MCP client does, with the key (""
// sends none), the Host (when not "") and the headers given.
func post(t *testing.T, a *webtest.API, key, host, body string, header http.Header) webtest.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, a.Srv.URL+mcp.Path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if host != "" {
		req.Host = host
	}
	a.T = t
	return a.Send(req)
}

// The Origin header, when present, must be the server's own origin (the
// address the request came to, or --public-url) or one serve
// --mcp-origin lists; on a loopback listener the Host must be a loopback
// name or the public URL's host. Anything else is 403 in the API's
// shape, before the key is read, and writes nothing.
func TestMCPRefusesOtherOriginsAndRebindingHosts(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPIWith(t, func(d *web.Deps) {
		d.PublicURL = "https://madebook.example.com"
		d.MCPOrigins = []string{"https://ide.example.com"}
	})
	own := a.Srv.URL // http://127.0.0.1:PORT
	port := own[strings.LastIndex(own, ":")+1:]
	cases := []struct {
		name, host, origin string
		noKey              bool
		status             int
		code               string
	}{
		{name: "no Origin (a client that is not a browser)", status: http.StatusOK},
		{name: "the address the request came to", origin: own, status: http.StatusOK},
		{name: "localhost, called as localhost", host: "localhost:" + port, origin: "http://localhost:" + port, status: http.StatusOK},
		{name: "[::1], called as [::1]", host: "[::1]:" + port, origin: "http://[::1]:" + port, status: http.StatusOK},
		{name: "the public URL's origin", origin: "https://madebook.example.com", status: http.StatusOK},
		{name: "the public URL's host behind a proxy on this machine", host: "madebook.example.com",
			origin: "https://madebook.example.com", status: http.StatusOK},
		{name: "an origin --mcp-origin lists", origin: "https://ide.example.com", status: http.StatusOK},
		{name: "another site's page", origin: "http://evil.example", status: http.StatusForbidden, code: "origin_not_allowed"},
		{name: "another site's page, without a key", origin: "http://evil.example", noKey: true,
			status: http.StatusForbidden, code: "origin_not_allowed"},
		{name: "an opaque origin", origin: "null", status: http.StatusForbidden, code: "origin_not_allowed"},
		{name: "the listed origin on another port", origin: "https://ide.example.com:8443", status: http.StatusForbidden,
			code: "origin_not_allowed"},
		{name: "the own address over https", origin: strings.Replace(own, "http:", "https:", 1), status: http.StatusForbidden,
			code: "origin_not_allowed"},
		{name: "DNS rebinding: another name for loopback, with its own origin", host: "evil.example.com:" + port,
			origin: "http://evil.example.com:" + port, status: http.StatusForbidden, code: "host_not_allowed"},
		{name: "DNS rebinding without an Origin", host: "evil.example.com", status: http.StatusForbidden, code: "host_not_allowed"},
		{name: "DNS rebinding without a key", host: "evil.example.com", noKey: true, status: http.StatusForbidden,
			code: "host_not_allowed"},
		{name: "the listed origin's host is no name of this server", host: "ide.example.com", status: http.StatusForbidden,
			code: "host_not_allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := a.AgentKey
			if c.noKey {
				key = ""
			}
			header := http.Header{}
			if c.origin != "" {
				header.Set("Origin", c.origin)
			}
			before := a.Kit.Dump()
			r := post(t, a, key, c.host, initializeBody, header)
			if c.status == http.StatusOK {
				if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"serverInfo"`) {
					t.Fatalf("%d %s, want the initialize result", r.Status, webtest.Short(r.Body))
				}
				return
			}
			webtest.CheckError(t, r, c.status, c.code)
			if !reflect.DeepEqual(before, a.Kit.Dump()) {
				t.Error("a refused request changed the database")
			}
		})
	}
	t.Run("two Origin headers", func(t *testing.T) {
		r := post(t, a, a.AgentKey, "", initializeBody, http.Header{"Origin": {own, "https://ide.example.com"}})
		webtest.CheckError(t, r, http.StatusForbidden, "origin_not_allowed")
	})
}

// A JSON-RPC batch is refused (400 batch_not_supported) whatever the
// MCP-Protocol-Version header says, or without one: a batch of
// open_session calls opens no session, and a single call still does.
func TestMCPRefusesBatches(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	mission := a.Kit.Mission(a.Lead, false)
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"open_session","arguments":{"mission":%q}}}`,
			id, mission)
	}
	var calls []string
	for i := range 50 {
		calls = append(calls, call(i+1))
	}
	batch := "[" + strings.Join(calls, ",") + "]"
	sessions := func() int { return len(a.Kit.Dump()["sessions"]) }
	for _, c := range []struct {
		name, version, body string
	}{
		{"without MCP-Protocol-Version", "", batch},
		{"under 2025-03-26, the version that had batches", "2025-03-26", batch},
		{"under 2025-06-18", "2025-06-18", batch},
		{"after white space", "", " \r\n\t" + batch},
		{"of one call", "", "[" + call(1) + "]"},
		{"of an initialize", "", "[" + initializeBody + "]"},
		{"empty", "", "[]"},
	} {
		t.Run("a batch "+c.name+" is refused and opens nothing", func(t *testing.T) {
			header := http.Header{}
			if c.version != "" {
				header.Set("MCP-Protocol-Version", c.version)
			}
			before := a.Kit.Dump()
			r := post(t, a, a.AgentKey, "", c.body, header)
			webtest.CheckError(t, r, http.StatusBadRequest, "batch_not_supported")
			if !reflect.DeepEqual(before, a.Kit.Dump()) {
				t.Errorf("a refused batch changed the database (sessions: %d before, %d after)", len(before["sessions"]), sessions())
			}
		})
	}
	t.Run("the same call alone opens its session", func(t *testing.T) {
		before := sessions()
		r := post(t, a, a.AgentKey, "", call(1), http.Header{"MCP-Protocol-Version": {"2025-06-18"}})
		var res struct {
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &res) != nil || res.Result.IsError {
			t.Fatalf("%d %s", r.Status, webtest.Short(r.Body))
		}
		if got := sessions(); got != before+1 {
			t.Errorf("sessions %d, want %d", got, before+1)
		}
	})
	t.Run("without a key, a batch is 401 first", func(t *testing.T) {
		webtest.CheckError(t, post(t, a, "", "", batch, nil), http.StatusUnauthorized, "unauthorized")
	})
}

// logging/setLevel (the SDK declares the logging capability) answers {}
// for each of MCP's levels and refuses another (-32602).
func TestMCPSetsOnlyMCPsLogLevels(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	r := post(t, a, a.AgentKey, "", initializeBody, nil)
	var init struct {
		Result struct {
			Capabilities map[string]any `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &init); err != nil {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if _, ok := init.Result.Capabilities["logging"]; !ok {
		t.Errorf("initialize declares %v, want the logging capability", init.Result.Capabilities)
	}
	setLevel := func(level string) map[string]json.RawMessage {
		t.Helper()
		r := post(t, a, a.AgentKey, "", `{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"`+level+`"}}`,
			http.Header{"MCP-Protocol-Version": {"2025-06-18"}})
		var m map[string]json.RawMessage
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &m) != nil {
			t.Fatalf("%s: %d %s", level, r.Status, r.Body)
		}
		return m
	}
	for _, level := range mcp.LogLevels {
		if m := setLevel(string(level)); string(m["result"]) != "{}" {
			t.Errorf("logging/setLevel %s answered %s, want the result {}", level, m["result"])
		}
	}
	m := setLevel("verbose")
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != -32602 || !strings.Contains(e.Message, `"verbose"`) {
		t.Errorf("logging/setLevel verbose answered %s, want the error -32602 naming it", m["error"])
	}
}
