package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/testkit/apicheck"
	"github.com/madebook/madebook/web/api"
	"github.com/madebook/madebook/web/webtest"
)

// readCall records a read-only tool call on the run over HTTP and returns
// its id.
func readCall(a *webtest.API, run, path string) int64 {
	a.T.Helper()
	r := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, map[string]any{
		"server": "claude-code", "tool": "Read", "paths": []string{path}})
	id, _ := r["id"].(float64)
	if id < 1 {
		a.T.Fatalf("tool call without an id: %v", r)
	}
	return int64(id)
}

// storedCall writes a tool call row straight through the query layer, as
// the executor reports it: with its tool_use_id, its subagent and its
// error.
func storedCall(a *webtest.API, row db.CreateToolCallParams) int64 {
	a.T.Helper()
	now := db.FormatTime(a.Kit.Clock.Now())
	row.StartedAt, row.RecordedAt, row.SourceKind, row.Paths = now, now, "executor", `[]`
	var id int64
	if err := a.Kit.Store.Write(a.T.Context(), func(q db.Querier) error {
		c, err := q.CreateToolCall(a.T.Context(), row)
		id = c.ID
		return err
	}); err != nil {
		a.T.Fatal(err)
	}
	return id
}

// list is the named list of a ledger answer, as objects.
func list(t *testing.T, m map[string]any, name string) []map[string]any {
	t.Helper()
	raw, ok := m[name].([]any)
	if !ok {
		t.Fatalf("%q is not a list: %v", name, m)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// A session's runs and a run's tool calls come a page at a time: each
// page holds at most ?limit= entries and names the next with next_after,
// which is null on the last; following it reads every entry once, in
// order.
func TestLedgerReadPagesThroughRunsAndToolCalls(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)
	var runs []string
	for i := range 3 {
		runs = append(runs, openRun(a, sess, fmt.Sprintf("run-%d", i)))
		a.Kit.Clock.Advance(time.Second)
	}
	var calls []int64
	for i := range 5 {
		calls = append(calls, readCall(a, runs[0], fmt.Sprintf("web/%d.go", i)))
	}
	ask := askOn(a, runs[1])
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+ask+"/answer", a.LeadTok, map[string]any{"option": "2"})

	t.Run("the runs come oldest first, two to a page, each with its counts", func(t *testing.T) {
		var got []string
		after, pages := "", 0
		for {
			path := "/api/v1/sessions/" + sess + "/runs?limit=2"
			if after != "" {
				path += "&after=" + after
			}
			page := a.Must(http.StatusOK, http.MethodGet, path, a.AgentKey, nil)
			pages++
			items := list(t, page, "items")
			if len(items) > 2 {
				t.Fatalf("page %d holds %d runs, over the limit of 2", pages, len(items))
			}
			if page["next_action"] == nil || page["reason"] == nil {
				t.Errorf("page %d has no next_action and reason: %v", pages, page)
			}
			for _, r := range items {
				got = append(got, r["id"].(string))
				counts, _ := r["counts"].(map[string]any)
				want := map[string]any{"tool_calls": 0.0, "asks": 0.0}
				switch r["id"] {
				case runs[0]:
					want["tool_calls"] = 5.0
				case runs[1]:
					want["asks"] = 1.0
				}
				if counts["tool_calls"] != want["tool_calls"] || counts["asks"] != want["asks"] {
					t.Errorf("run %s counts %v, want %v", r["id"], counts, want)
				}
			}
			if page["next_after"] == nil {
				break
			}
			after = page["next_after"].(string)
			if after != got[len(got)-1] {
				t.Errorf("next_after %s, want the page's last run %s", after, got[len(got)-1])
			}
		}
		if !slices.Equal(got, runs) || pages != 2 {
			t.Errorf("read %v in %d pages, want %v in 2", got, pages, runs)
		}
	})

	t.Run("a run's tool calls come in the order they were recorded, two to a page", func(t *testing.T) {
		var got []int64
		after, pages := "", 0
		for {
			path := "/api/v1/runs/" + runs[0] + "?limit=2"
			if after != "" {
				path += "&after=" + after
			}
			page := a.Must(http.StatusOK, http.MethodGet, path, a.LeadTok, nil)
			pages++
			if page["id"] != runs[0] || page["session"] != sess || page["status"] != "running" {
				t.Errorf("page %d is not the run: %v", pages, page)
			}
			tcs := list(t, page, "tool_calls")
			if len(tcs) > 2 {
				t.Fatalf("page %d holds %d tool calls, over the limit of 2", pages, len(tcs))
			}
			for _, c := range tcs {
				got = append(got, int64(c["id"].(float64)))
				if c["tool"] != "Read" || c["server"] != "claude-code" || c["side_effecting"] != false {
					t.Errorf("tool call %v", c)
				}
			}
			if page["next_after"] == nil {
				break
			}
			after = fmt.Sprint(page["next_after"])
		}
		if !slices.Equal(got, calls) || pages != 3 {
			t.Errorf("read %v in %d pages, want %v in 3", got, pages, calls)
		}
	})

	t.Run("the default page holds every call of a short run", func(t *testing.T) {
		page := a.Must(http.StatusOK, http.MethodGet, "/api/v1/runs/"+runs[0], a.AgentKey, nil)
		if n := len(list(t, page, "tool_calls")); n != 5 || page["next_after"] != nil {
			t.Errorf("%d tool calls, next_after %v; want 5 and null", n, page["next_after"])
		}
	})

	t.Run("a run's asks come with their answers and who gave them", func(t *testing.T) {
		page := a.Must(http.StatusOK, http.MethodGet, "/api/v1/runs/"+runs[1], a.ViewerTok, nil)
		asks := list(t, page, "asks")
		if len(asks) != 1 {
			t.Fatalf("asks %v, want the one", asks)
		}
		got := asks[0]
		if got["id"] != ask || got["prompt"] != "save this reading?" || got["answer"] != "2" || got["answered_at"] == nil ||
			got["answered_by"] != a.Lead.Email || got["run_status"] != "running" {
			t.Errorf("ask %v, want answered 2 by %s", got, a.Lead.Email)
		}
		if n := len(list(t, page, "tool_calls")); n != 0 || page["next_after"] != nil {
			t.Errorf("a run without tool calls lists %d, next_after %v", n, page["next_after"])
		}
	})
}

// A tool call shows who made it and how it ended as the executor said:
// its tool_use_id, the subagent (agent_id, agent_type) and a failed
// call's error, each absent when empty; its tool is named as the agent
// calls it. The console's session page names the subagent and the error.
func TestLedgerReadShowsTheSubagentAndTheError(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)
	run := openRun(a, sess, "claude-code")
	own := readCall(a, run, "README.md")
	sub := storedCall(a, db.CreateToolCallParams{RunID: run, Server: "claude-code", Tool: "Bash", IsSideEffecting: true,
		ToolUseID: "toolu_01ABC", AgentID: "a1b2c3d4e5f6", AgentType: "Explore", Error: "Exit code 3"})
	mcp := storedCall(a, db.CreateToolCallParams{RunID: run, Server: "github", Tool: "create_pr", IsSideEffecting: true,
		ToolUseID: "toolu_02DEF"})

	page := a.Must(http.StatusOK, http.MethodGet, "/api/v1/runs/"+run, a.AgentKey, nil)
	byID := map[int64]map[string]any{}
	for _, c := range list(t, page, "tool_calls") {
		byID[int64(c["id"].(float64))] = c
	}
	tests := []struct {
		name string
		id   int64
		want map[string]any // nil: the key is absent
	}{
		{"the main agent's call names no subagent, no executor id and no error", own, map[string]any{
			"tool": "Read", "server": "claude-code", "tool_use_id": nil, "agent_id": nil, "agent_type": nil, "error": nil,
			"source_kind": "executor", "paths": []any{"README.md"}}},
		{"a subagent's failed call names the subagent and the error", sub, map[string]any{
			"tool": "Bash", "server": "claude-code", "side_effecting": true, "tool_use_id": "toolu_01ABC",
			"agent_id": "a1b2c3d4e5f6", "agent_type": "Explore", "error": "Exit code 3"}},
		{"an MCP tool is named as the agent calls it", mcp, map[string]any{
			"tool": "mcp__github__create_pr", "server": "github", "tool_use_id": "toolu_02DEF", "agent_id": nil,
			"error": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := byID[tt.id]
			if !ok {
				t.Fatalf("tool call %d is not in the run: %v", tt.id, page["tool_calls"])
			}
			for k, want := range tt.want {
				got, present := c[k]
				if want == nil {
					if present {
						t.Errorf("%s is %v, want it absent", k, got)
					}
					continue
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s is %v, want %v", k, got, want)
				}
			}
			for _, k := range []string{"id", "run", "started_at", "recorded_at", "side_effecting", "source_kind", "paths"} {
				if _, ok := c[k]; !ok {
					t.Errorf("%s is missing: %v", k, c)
				}
			}
		})
	}

	t.Run("the session page names the subagent and the error", func(t *testing.T) {
		p := webtest.ConsoleAs(t, a.Srv.URL, a.Lead.Email).Open("/sessions/" + sess)
		if p.Status != http.StatusOK {
			t.Fatalf("session page: %d", p.Status)
		}
		if n := webtest.CountTestID(p.Body, "tool-call-agent"); n != 1 {
			t.Errorf("%d tool calls name a subagent, want 1", n)
		}
		if n := webtest.CountTestID(p.Body, "tool-call-error"); n != 1 {
			t.Errorf("%d tool calls show an error, want 1", n)
		}
		text := p.Text()
		for _, s := range []string{"subagent Explore · a1b2c3", "Failed: Exit code 3"} {
			if !strings.Contains(text, s) {
				t.Errorf("the page does not say %q", s)
			}
		}
		if strings.Contains(text, "a1b2c3d4e5f6<") || strings.Contains(text, "· a1b2c3d") {
			t.Errorf("the subagent's id is not cut short")
		}
	})
}

// Who may read the ledger is who may read the session: any person, and
// the agent key that owns it; another key is 403, whatever it asks.
func TestLedgerReadIsTheSessionsAgentsOrAnyPersons(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)
	run := openRun(a, sess, "mine")
	readCall(a, run, "web/app.go")
	for _, path := range []string{"/api/v1/sessions/" + sess + "/runs", "/api/v1/runs/" + run} {
		for _, tt := range []struct {
			who, secret string
			status      int
		}{
			{"its own agent", a.AgentKey, http.StatusOK},
			{"a viewer", a.ViewerTok, http.StatusOK},
			{"a lead", a.LeadTok, http.StatusOK},
			{"an admin", a.AdminTok, http.StatusOK},
			{"another agent key", a.OtherKey, http.StatusForbidden},
			{"no credential", "", http.StatusUnauthorized},
		} {
			t.Run(tt.who+" reading "+path, func(t *testing.T) {
				r := a.Do(http.MethodGet, path, tt.secret, nil)
				if tt.status == http.StatusOK {
					if r.Status != http.StatusOK {
						t.Fatalf("%d %s", r.Status, r.Body)
					}
					return
				}
				code := map[int]string{http.StatusForbidden: "forbidden", http.StatusUnauthorized: "unauthorized"}[tt.status]
				webtest.CheckError(t, r, tt.status, code)
			})
		}
	}
	t.Run("another agent key hears 403, not 422, for a bad page", func(t *testing.T) {
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/runs/"+run+"?limit=0", a.OtherKey, nil), http.StatusForbidden, "forbidden")
	})
}

// An unknown session or run is 404 in the contract's shape.
func TestLedgerReadOfWhatDoesNotExistIs404(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	for _, tt := range []struct{ name, path, code string }{
		{"the runs of an unknown session", "/api/v1/sessions/ses_nope/runs", "session_not_found"},
		{"an unknown run", "/api/v1/runs/run_nope", "run_not_found"},
		{"an unknown run, with a page", "/api/v1/runs/run_nope?limit=5&after=3", "run_not_found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			webtest.CheckError(t, a.Do(http.MethodGet, tt.path, a.LeadTok, nil), http.StatusNotFound, tt.code)
		})
	}
}

// A query the ledger cannot read is 422 naming what is wrong, never a 500.
func TestLedgerReadRefusesBadQueryValues(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess, other := a.Session(false), a.Session(false)
	run := openRun(a, sess, "mine")
	elsewhere := openRun(a, other, "theirs")
	runs, one := "/api/v1/sessions/"+sess+"/runs", "/api/v1/runs/"+run
	for _, tt := range []struct{ name, path, code string }{
		{"a limit of 0", runs + "?limit=0", "invalid_limit"},
		{"a limit over 500", one + "?limit=501", "invalid_limit"},
		{"a negative limit", one + "?limit=-1", "invalid_limit"},
		{"a limit that is not a number", runs + "?limit=ten", "invalid_limit"},
		{"a limit with a fraction", one + "?limit=1.5", "invalid_limit"},
		{"a cursor that is not a tool call id", one + "?after=abc", "invalid_after"},
		{"a cursor of 0", one + "?after=0", "invalid_after"},
		{"a negative cursor", one + "?after=-4", "invalid_after"},
		{"a cursor past int64", one + "?after=99999999999999999999", "invalid_after"},
		{"a cursor naming no run", runs + "?after=run_nope", "invalid_after"},
		{"a cursor naming another session's run", runs + "?after=" + elsewhere, "invalid_after"},
		{"a cursor holding a NUL", runs + "?after=run%00x", "invalid_after"},
		{"a misspelt cursor", one + "?cursor=3", "unknown_parameter"},
		{"an unknown parameter beside good ones", runs + "?limit=2&next=x", "unknown_parameter"},
		{"a limit given twice", one + "?limit=1&limit=2", "repeated_parameter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			webtest.CheckError(t, a.Do(http.MethodGet, tt.path, a.AgentKey, nil), http.StatusUnprocessableEntity, tt.code)
		})
	}
	t.Run("a cursor past the last call reads an empty last page", func(t *testing.T) {
		page := a.Must(http.StatusOK, http.MethodGet, one+"?after=999999", a.AgentKey, nil)
		if n := len(list(t, page, "tool_calls")); n != 0 || page["next_after"] != nil {
			t.Errorf("%d tool calls, next_after %v", n, page["next_after"])
		}
	})
}

// The document's examples of the ledger's answers are answers the
// document describes.
func TestLedgerReadExamplesMatchTheDocument(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Example json.RawMessage `json:"example"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	c := apicheck.New(t, api.OpenAPI)
	for _, tt := range []struct{ template, path string }{
		{"/api/v1/sessions/{id}/runs", "/api/v1/sessions/ses_wiybcygy784b/runs"},
		{"/api/v1/runs/{id}", "/api/v1/runs/run_9kq3m1x7v2aa"},
	} {
		t.Run(tt.template, func(t *testing.T) {
			ex := doc.Paths[tt.template]["get"].Responses["200"].Content["application/json"].Example
			if len(ex) == 0 {
				t.Fatal("no example of the 200 answer")
			}
			r := httptest.NewRequest(http.MethodGet, tt.path, nil)
			r.Header.Set("Authorization", "Bearer mbk_example")
			c.Response(t, r, nil, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, bytes.Clone(ex))
		})
	}
}
