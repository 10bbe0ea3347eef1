package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// msEnv is a real Madebook served over loopback HTTP for the Missions
// pages, with a lead, a viewer and an agent.
type msEnv struct {
	T   *testing.T
	Kit *testkit.Kit
	URL string

	Lead, Viewer, Admin, Agent             auth.Actor
	LeadTok, ViewerTok, AdminTok, AgentKey string
}

func newMsEnv(t *testing.T) *msEnv {
	t.Helper()
	kit := testkit.New(t)
	srv := httptest.NewServer(web.NewServer(webtest.Deps(kit)))
	t.Cleanup(srv.Close)
	e := &msEnv{T: t, Kit: kit, URL: srv.URL}
	e.Lead, e.LeadTok = kit.Lead()
	e.Viewer, e.ViewerTok = kit.Person(auth.Viewer)
	e.Admin, e.AdminTok = kit.Person(auth.Admin)
	e.Agent, e.AgentKey = kit.Agent()
	return e
}

// signIn signs in through the sign-in form.
func (e *msEnv) signIn(email string) *webtest.Client {
	e.T.Helper()
	b := webtest.SignInWith(e.T, e.URL, email, "password-123")
	b.CSRF = ""
	b.Open("/missions")
	if b.CSRF == "" {
		e.T.Fatal("no csrf token on /missions")
	}
	return b
}

// api sends a JSON request with a bearer secret and decodes the answer.
func (e *msEnv) api(method, path, secret string, body any) (int, map[string]any) {
	e.T.Helper()
	var r io.Reader = http.NoBody
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			e.T.Fatal(err)
		}
		r = strings.NewReader(string(buf))
	}
	req, err := http.NewRequest(method, e.URL+path, r)
	if err != nil {
		e.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		e.T.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return res.StatusCode, out
}

// state is every mission and every timeline line, as text: what "nothing
// was written" compares.
func (e *msEnv) state() string {
	e.T.Helper()
	var b strings.Builder
	for _, q := range []string{`SELECT id, slug, title, text, high_risk, evidence, contract, gate_ttl, updated_at FROM missions ORDER BY id`,
		`SELECT id, session_id, kind, ref, detail FROM events ORDER BY id`} {
		fmt.Fprintln(&b, strings.Join(e.Kit.Rows(q), "\n"))
	}
	return b.String()
}

func (e *msEnv) mission(slug string) governance.Mission {
	e.T.Helper()
	m, err := e.Kit.Gov.Missions.Get(context.Background(), slug)
	if err != nil {
		e.T.Fatal(err)
	}
	return m
}

func (e *msEnv) brief(session string) governance.Brief {
	e.T.Helper()
	b, err := e.Kit.Gov.Briefs.Brief(context.Background(), e.Agent, governance.BriefRequest{Session: session})
	if err != nil {
		e.T.Fatal(err)
	}
	return b
}

// msRow is the table row of the mission on a Missions page.
func msRow(t *testing.T, body, slug string) string {
	t.Helper()
	start := strings.Index(body, `data-slug="`+slug+`"`)
	if start < 0 {
		t.Fatalf("no row for %s on the page", slug)
	}
	end := strings.Index(body[start:], "</tr>")
	return body[start : start+end]
}

func TestConsoleLeadCreatesAndEditsAMission(t *testing.T) {
	e := newMsEnv(t)
	b := e.signIn(e.Lead.Email)

	list := b.Open("/missions")
	if list.Status != http.StatusOK || webtest.CountTestID(list.Text(), "new-mission") != 1 || webtest.CountTestID(list.Text(), "missions-empty") != 1 {
		t.Fatalf("empty Missions page: status %d, want a New mission link and the empty list:\n%s", list.Status, list.Text())
	}
	form := b.Open("/missions/new")
	if form.Status != http.StatusOK || webtest.CountTestID(form.Text(), "mission-new-form") != 1 {
		t.Fatalf("GET /missions/new: %d\n%s", form.Status, form.Text())
	}

	r := b.Submit("/missions", url.Values{"slug": {"billing-v2"}, "title": {"Billing v2"}, "text": {"Move billing."},
		"high_risk": {"on"}, "evidence": {"tests, review\nlint"},
		"contract": {"forbid_path vendor/**\n\n  max_files_changed   20  \r\nforbid_dependency left-pad"}})
	if r.Status != http.StatusSeeOther || r.Location() != "/missions?created=billing-v2" {
		t.Fatalf("create: status %d, location %q:\n%s", r.Status, r.Location(), r.Text())
	}
	m := e.mission("billing-v2")
	wantContract := []governance.Clause{{Kind: protocol.ForbidPath, Value: "vendor/**"}, {Kind: protocol.MaxFilesChanged, Value: "20"},
		{Kind: protocol.ForbidDependency, Value: "left-pad"}}
	if m.Title != "Billing v2" || m.Text != "Move billing." || !m.HighRisk || strings.Join(m.Evidence, ",") != "tests,review,lint" ||
		fmt.Sprint(m.Contract) != fmt.Sprint(wantContract) {
		t.Fatalf("created %+v", m)
	}

	session := e.Kit.Session(e.Agent, "billing-v2")
	if br := e.brief(session); br.NextAction != protocol.Blocked {
		t.Fatalf("a session of the new high-risk mission briefs %s", br.NextAction)
	}

	list = b.Open(r.Location())
	if !strings.Contains(list.Text(), "Mission billing-v2 created.") {
		t.Errorf("no notice after creating:\n%s", list.Text())
	}
	row := msRow(t, list.Text(), "billing-v2")
	for _, want := range []string{"Billing v2", "high-risk", "tests", "review", "lint", "forbid_path vendor/**",
		"max_files_changed 20", "data-testid=\"mission-sessions\">1\u00a0session<", `href="/missions/billing-v2/edit"`} {
		if !strings.Contains(row, want) {
			t.Errorf("the row does not show %q:\n%s", want, row)
		}
	}

	edit := b.Open("/missions/billing-v2/edit")
	if edit.Status != http.StatusOK || webtest.CountTestID(edit.Text(), "mission-edit-form") != 1 {
		t.Fatalf("GET edit: %d\n%s", edit.Status, edit.Text())
	}
	for _, want := range []string{`value="Billing v2"`, ">Move billing.</textarea>", "checked", ">tests, review, lint</textarea>",
		">forbid_path vendor/**\nmax_files_changed 20\nforbid_dependency left-pad</textarea>", `action="/missions/billing-v2"`} {
		if !strings.Contains(edit.Text(), want) {
			t.Errorf("the edit form does not hold %q", want)
		}
	}
	if strings.Contains(edit.Text(), `name="slug"`) {
		t.Error("the edit form offers to change the slug")
	}

	// Unticking high-risk lowers a protection: the lead's form says it is
	// an admin's to do, and changes nothing; an admin's untick lets the
	// session work again at once. A slug in the form is ignored.
	untick := url.Values{"slug": {"renamed"}, "title": {"Billing v3"}, "text": {"Move all of billing."},
		"evidence": {"tests"}, "contract": {"require_path CHANGELOG.md"}}
	if r = b.Submit("/missions/billing-v2", untick); r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Text(), "only an admin can do that") {
		t.Fatalf("a lead unticking high-risk: status %d:\n%s", r.Status, r.Text())
	}
	if !e.mission("billing-v2").HighRisk {
		t.Fatal("a lead's refused untick changed the mission")
	}
	r = e.signIn(e.Admin.Email).Submit("/missions/billing-v2", untick)
	if r.Status != http.StatusSeeOther || r.Location() != "/missions?updated=billing-v2" {
		t.Fatalf("edit: status %d, location %q:\n%s", r.Status, r.Location(), r.Text())
	}
	m = e.mission("billing-v2")
	if m.Title != "Billing v3" || m.Text != "Move all of billing." || m.HighRisk || strings.Join(m.Evidence, ",") != "tests" ||
		len(m.Contract) != 1 || m.Contract[0] != (governance.Clause{Kind: protocol.RequirePath, Value: "CHANGELOG.md"}) {
		t.Fatalf("edited %+v", m)
	}
	if br := e.brief(session); br.NextAction != protocol.Continue {
		t.Fatalf("after unticking high-risk the session briefs %s (%v)", br.NextAction, br.Reasons)
	}
	list = b.Open(r.Location())
	if !strings.Contains(list.Text(), "Mission billing-v2 saved.") || strings.Contains(list.Text(), "renamed") {
		t.Errorf("after the edit the list says:\n%s", list.Text())
	}
	if row := msRow(t, list.Text(), "billing-v2"); !strings.Contains(row, "Billing v3") || strings.Contains(row, "high-risk") {
		t.Errorf("the edited row:\n%s", row)
	}

	d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, session)
	if err != nil {
		t.Fatal(err)
	}
	last := d.Timeline[len(d.Timeline)-1]
	if last.Kind != "mission.updated" || last.Actor != "person:"+e.Admin.Email || !strings.Contains(last.Detail, "high-risk: yes → no") {
		t.Errorf("the session's timeline ends %+v, want who turned high-risk off", last)
	}
}

func TestConsoleMissionFormRefusesBadInputAndWritesNothing(t *testing.T) {
	e := newMsEnv(t)
	b := e.signIn(e.Lead.Email)
	taken := e.Kit.Mission(e.Lead, false)
	good := func(change map[string]string) url.Values {
		f := url.Values{"slug": {"fresh-mission"}, "title": {"A fresh mission"}, "text": {"Keep this text."},
			"high_risk": {"on"}, "evidence": {"tests"}, "contract": {"forbid_path vendor/**"}}
		for k, v := range change {
			f.Set(k, v)
		}
		return f
	}
	tests := []struct {
		name    string
		path    string
		form    url.Values
		field   string // the data-testid error-<field>, or "" for the message over the form
		message string
	}{
		{"a slug with capitals and spaces is refused", "/missions", good(map[string]string{"slug": "Bad Slug"}), "slug",
			`The slug "Bad Slug" must be 1 to 63 lower-case letters`},
		{"an empty slug is refused", "/missions", good(map[string]string{"slug": ""}), "slug", `The slug "" must be`},
		{"a missing title is refused", "/missions", good(map[string]string{"title": "  "}), "title", "The title is required."},
		{"an unknown clause kind is refused", "/missions", good(map[string]string{"contract": "forbid_path vendor/**\nforbid_everything x"}),
			"contract", `Contract clause 2 has kind "forbid_everything"`},
		{"a clause without a value is refused", "/missions", good(map[string]string{"contract": "require_path"}), "contract",
			"Contract clause 1 has no value."},
		{"a non-numeric max_files_changed is refused", "/missions", good(map[string]string{"contract": "max_files_changed twenty"}),
			"contract", `max_files_changed needs a positive whole number, not "twenty"`},
		{"a duplicate slug is refused", "/missions", good(map[string]string{"slug": taken}), "slug",
			fmt.Sprintf("A mission with the slug %q already exists.", taken)},
		{"an edit without a title is refused", "/missions/" + taken, good(map[string]string{"title": ""}), "title", "The title is required."},
		{"a gate_ttl under a minute is refused", "/missions", good(map[string]string{"gate_ttl": "30s"}), "gate_ttl",
			"gate_ttl 30s is shorter than 1m"},
		{"an edit with a gate_ttl that is not a duration is refused", "/missions/" + taken,
			good(map[string]string{"gate_ttl": "soon"}), "gate_ttl", `gate_ttl "soon" is not a duration`},
		{"an edit with a non-numeric max_files_changed is refused", "/missions/" + taken,
			good(map[string]string{"contract": "max_files_changed 1.5"}), "contract", `not "1.5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.T, b.T = t, t
			before := e.state()
			r := b.Submit(tt.path, tt.form)
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422:\n%s", r.Status, r.Text())
			}
			if after := e.state(); after != before {
				t.Fatalf("a refused form wrote:\nbefore %s\nafter  %s", before, after)
			}
			if !strings.Contains(r.Text(), tt.message) {
				t.Errorf("the page does not say %q:\n%s", tt.message, r.Text())
			}
			if got := webtest.CountTestID(r.Text(), "error-"+tt.field); got != 1 {
				t.Errorf("%d messages under %s, want 1:\n%s", got, tt.field, r.Text())
			}
			// What was typed is kept.
			for _, want := range []string{`value="` + tt.form.Get("title") + `"`, ">" + tt.form.Get("text") + "</textarea>",
				">" + tt.form.Get("contract") + "</textarea>", "checked"} {
				if !strings.Contains(r.Text(), want) {
					t.Errorf("the form lost %q", want)
				}
			}
		})
	}
	e.T, b.T = t, t
	if m := e.mission(taken); m.Title != "Mission "+taken {
		t.Fatalf("refused edits changed the mission: %+v", m)
	}
	if r := b.Submit("/missions/no-such-mission", good(nil)); r.Status != http.StatusNotFound {
		t.Fatalf("editing a mission that does not exist: %d, want 404", r.Status)
	}
	if r := b.Open("/missions/no-such-mission/edit"); r.Status != http.StatusNotFound {
		t.Fatalf("the edit form of a mission that does not exist: %d, want 404", r.Status)
	}
}

func TestConsoleViewerSeesMissionsButCannotChangeThem(t *testing.T) {
	e := newMsEnv(t)
	slug := e.Kit.Mission(e.Lead, false)
	b := e.signIn(e.Viewer.Email)

	list := b.Open("/missions")
	if list.Status != http.StatusOK || webtest.CountTestID(list.Text(), "mission-row") != 1 {
		t.Fatalf("a viewer's Missions page: %d\n%s", list.Status, list.Text())
	}
	if webtest.CountTestID(list.Text(), "new-mission") != 0 || webtest.CountTestID(list.Text(), "edit-mission") != 0 || strings.Contains(list.Text(), "/missions/new") {
		t.Errorf("a viewer is offered New or Edit:\n%s", list.Text())
	}
	before := e.state()
	for _, r := range []struct {
		name string
		do   func() webtest.Page
	}{
		{"GET /missions/new", func() webtest.Page { return b.Open("/missions/new") }},
		{"GET /missions/:slug/edit", func() webtest.Page { return b.Open("/missions/" + slug + "/edit") }},
		{"POST /missions", func() webtest.Page {
			return b.Submit("/missions", url.Values{"slug": {"viewers-mission"}, "title": {"Mine"}})
		}},
		{"POST /missions/:slug", func() webtest.Page {
			return b.Submit("/missions/"+slug, url.Values{"title": {"Renamed"}, "high_risk": {"on"}})
		}},
	} {
		if got := r.do(); got.Status != http.StatusForbidden {
			t.Errorf("%s as a viewer: %d, want 403", r.name, got.Status)
		}
	}
	if after := e.state(); after != before {
		t.Fatalf("a viewer's refused requests wrote:\nbefore %s\nafter  %s", before, after)
	}

	anon := webtest.NewClient(t, e.URL)
	if r := anon.Open("/missions"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location(), "/login") {
		t.Errorf("anonymous GET /missions: %d to %q, want the sign-in page", r.Status, r.Location())
	}
}

func TestMissionAPIGetAndPatch(t *testing.T) {
	e := newMsEnv(t)
	slug := e.Kit.Mission(e.Lead, false)
	session := e.Kit.Session(e.Agent, slug)
	if br := e.brief(session); br.NextAction != protocol.Continue {
		t.Fatalf("before: %s", br.NextAction)
	}

	for _, who := range []struct{ name, secret string }{{"viewer", e.ViewerTok}, {"agent", e.AgentKey}, {"lead", e.LeadTok}} {
		if status, m := e.api(http.MethodGet, "/api/v1/missions/"+slug, who.secret, nil); status != http.StatusOK || m["slug"] != slug {
			t.Errorf("GET as %s: %d %v", who.name, status, m)
		}
	}
	if status, m := e.api(http.MethodGet, "/api/v1/missions/no-such-mission", e.ViewerTok, nil); status != http.StatusNotFound ||
		m["error"].(map[string]any)["code"] != "mission_not_found" {
		t.Errorf("GET of a missing mission: %d %v", status, m)
	}

	before := e.state()
	for _, who := range []struct{ name, secret string }{{"viewer", e.ViewerTok}, {"agent", e.AgentKey}} {
		status, m := e.api(http.MethodPatch, "/api/v1/missions/"+slug, who.secret, map[string]any{"high_risk": true})
		if status != http.StatusForbidden || m["error"].(map[string]any)["code"] != "forbidden" {
			t.Errorf("PATCH as %s: %d %v, want 403 forbidden", who.name, status, m)
		}
	}
	for _, bad := range []struct {
		name   string
		path   string
		body   any
		status int
		code   string
	}{
		{"a missing mission", "/api/v1/missions/no-such-mission", map[string]any{"high_risk": true}, http.StatusNotFound, "mission_not_found"},
		{"an empty title", "/api/v1/missions/" + slug, map[string]any{"title": ""}, http.StatusUnprocessableEntity, "title_required"},
		{"an unknown clause", "/api/v1/missions/" + slug, map[string]any{"contract": []map[string]string{{"kind": "forbid_everything", "value": "x"}}},
			http.StatusUnprocessableEntity, "invalid_clause"},
		{"a new slug", "/api/v1/missions/" + slug, map[string]any{"slug": "renamed"}, http.StatusUnprocessableEntity, "slug_immutable"},
		{"a flag of the wrong type", "/api/v1/missions/" + slug, map[string]any{"high_risk": "yes"}, http.StatusUnprocessableEntity, "invalid_field"},
	} {
		status, m := e.api(http.MethodPatch, bad.path, e.LeadTok, bad.body)
		if status != bad.status || m["error"].(map[string]any)["code"] != bad.code {
			t.Errorf("PATCH with %s: %d %v, want %d %s", bad.name, status, m, bad.status, bad.code)
		}
	}
	if after := e.state(); after != before {
		t.Fatalf("refused PATCHes wrote:\nbefore %s\nafter  %s", before, after)
	}

	// A lead's PATCH changes only the fields it names.
	status, m := e.api(http.MethodPatch, "/api/v1/missions/"+slug, e.LeadTok, map[string]any{"high_risk": true, "evidence": []string{"tests"}})
	if status != http.StatusOK || m["high_risk"] != true || m["title"] != "Mission "+slug || m["text"] != "Do the thing." ||
		fmt.Sprint(m["evidence"]) != "[tests]" || m["slug"] != slug {
		t.Fatalf("PATCH as lead: %d %v", status, m)
	}
	if br := e.brief(session); br.NextAction != protocol.Blocked || br.Reasons[0].Code != "plan_not_approved" {
		t.Fatalf("after the PATCH the session briefs %s (%v), want BLOCKED plan_not_approved", br.NextAction, br.Reasons)
	}
	// Turning it off is an admin's: a lead's is 403 and writes nothing.
	if status, m = e.api(http.MethodPatch, "/api/v1/missions/"+slug, e.LeadTok, map[string]any{"high_risk": false}); status != http.StatusForbidden ||
		fmt.Sprint(m["error"]) == "" || !strings.Contains(fmt.Sprint(m["error"]), "lowers_protection") {
		t.Fatalf("a lead turning high_risk off: %d %v", status, m)
	}
	status, m = e.api(http.MethodPatch, "/api/v1/missions/"+slug, e.AdminTok, map[string]any{"high_risk": false, "slug": slug})
	if status != http.StatusOK || m["high_risk"] != false || fmt.Sprint(m["evidence"]) != "[tests]" {
		t.Fatalf("second PATCH: %d %v", status, m)
	}
	if br := e.brief(session); br.NextAction != protocol.Continue {
		t.Fatalf("after turning high-risk off the session briefs %s", br.NextAction)
	}
}

// A lead sets a mission's gate_ttl in the form, sees it in the list and in
// the edit form (as it is shown everywhere, "1h30m" for "90m"), and lifts
// it by emptying the field.
func TestConsoleMissionGateTTL(t *testing.T) {
	e := newMsEnv(t)
	b := e.signIn(e.Lead.Email)
	r := b.Submit("/missions", url.Values{"slug": {"expiring"}, "title": {"Expiring gates"}, "gate_ttl": {"90m"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("create: status %d:\n%s", r.Status, r.Text())
	}
	if m := e.mission("expiring"); m.GateTTL.String() != "1h30m" {
		t.Fatalf("created with gate_ttl %q, want 1h30m", m.GateTTL)
	}
	if row := msRow(t, b.Open("/missions").Text(), "expiring"); !strings.Contains(row, "gates expire after 1h30m") {
		t.Errorf("the row does not say when gates expire:\n%s", row)
	}
	edit := b.Open("/missions/expiring/edit")
	if !strings.Contains(edit.Text(), `name="gate_ttl" value="1h30m"`) {
		t.Errorf("the edit form does not hold the gate_ttl:\n%s", edit.Text())
	}
	// Lifting it lowers a protection: an admin's.
	if r = b.Submit("/missions/expiring", url.Values{"title": {"Expiring gates"}, "gate_ttl": {""}}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a lead lifting the gate_ttl: status %d", r.Status)
	}
	r = e.signIn(e.Admin.Email).Submit("/missions/expiring", url.Values{"title": {"Expiring gates"}, "gate_ttl": {""}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("edit: status %d:\n%s", r.Status, r.Text())
	}
	if m := e.mission("expiring"); m.GateTTL != 0 {
		t.Fatalf("an emptied gate_ttl left %q", m.GateTTL)
	}
	if row := msRow(t, b.Open("/missions").Text(), "expiring"); strings.Contains(row, "gates expire") {
		t.Errorf("a mission whose gates never expire says they do:\n%s", row)
	}
}
