package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/webtest"
)

// An admin classifies tools in the console; the ledger follows the
// registry for calls that do not say; leads and viewers cannot touch it.
func TestConsoleToolRegistry(t *testing.T) {
	kit, base := consoleServer(t, false)
	admin, _ := kit.Person(auth.Admin)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	ctx := context.Background()
	session := kit.Session(agent, kit.Mission(lead, false))
	run, err := kit.Ledger.StartRun(ctx, agent, session, "probe", "")
	if err != nil {
		t.Fatal(err)
	}
	call := func() bool {
		c, err := kit.Ledger.RecordToolCall(ctx, agent, run.ID, ledger.ToolCallInput{Server: "mcp-monitor", Tool: "get_cpu_info"})
		if err != nil {
			t.Fatal(err)
		}
		return c.SideEffecting
	}
	if !call() {
		t.Fatal("an unclassified tool is not side-effecting")
	}

	b := webtest.ConsoleAs(t, base, admin.Email)
	if res, body := b.Get("/admin/tools"); res.StatusCode != http.StatusOK || !strings.Contains(body, "No tool is classified yet") {
		t.Fatalf("tools page: %d", res.StatusCode)
	}
	res, _ := b.PostForm("/admin/tools", url.Values{"server": {"mcp-monitor"}, "tool": {"get_cpu_info"}, "side_effecting": {"false"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/tools?done=saved" {
		t.Fatalf("save: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if _, body := b.Get("/admin/tools?done=saved"); !strings.Contains(body, `data-testid="tool-row"`) || !strings.Contains(body, "read-only") {
		t.Fatal("the classified tool is not listed as read-only")
	}
	if call() {
		t.Fatal("a tool the registry calls read-only was recorded as side-effecting")
	}
	if res, body := b.PostForm("/admin/tools", url.Values{"server": {""}, "tool": {"x"}}); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(body, `data-testid="error-server">The server is required.</p>`) {
		t.Fatalf("empty server: %d, not said beside the server field", res.StatusCode)
	}

	for _, who := range []string{lead.Email} {
		o := webtest.ConsoleAs(t, base, who)
		if res, _ := o.Get("/admin/tools"); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s GET /admin/tools: %d", who, res.StatusCode)
		}
		if res, _ := o.PostForm("/admin/tools/delete", url.Values{"server": {"mcp-monitor"}, "tool": {"get_cpu_info"}}); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s delete: %d", who, res.StatusCode)
		}
	}

	if res, _ := b.PostForm("/admin/tools/delete", url.Values{"server": {"mcp-monitor"}, "tool": {"get_cpu_info"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if !call() {
		t.Fatal("after removal the tool's calls are not side-effecting again")
	}
	if res, _ := b.PostForm("/admin/tools/delete", url.Values{"server": {"mcp-monitor"}, "tool": {"get_cpu_info"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("deleting an unknown tool: %d", res.StatusCode)
	}
}
