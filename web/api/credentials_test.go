package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	auditsvc "github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// credentialList is the answer of GET /api/v1/tokens or /api/v1/keys.
type credentialList struct {
	Tokens []credentialRow `json:"tokens"`
	Keys   []credentialRow `json:"keys"`
}

type credentialRow struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Owner      string     `json:"owner"`
	Prefix     string     `json:"prefix"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	State      string     `json:"state"`
}

func listOf(t *testing.T, r webtest.Response) credentialList {
	t.Helper()
	var l credentialList
	if r.Status != http.StatusOK {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// secondServer is another Madebook process on a's database: its own
// store, services and server, on its own address.
func secondServer(t *testing.T, a *webtest.API) *webtest.API {
	t.Helper()
	store, err := db.Open(a.Kit.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	now := a.Kit.Clock.Now
	gov := governance.New(store, now, governance.Options{})
	kit := &testkit.Kit{TB: t, Path: a.Kit.Path, Store: store, Auth: auth.NewService(store, now), Gov: gov,
		Ledger: ledger.NewService(gov.Transactor(), now, gov.Briefs), Audit: auditsvc.NewService(store, now, 0), Clock: a.Kit.Clock}
	srv := httptest.NewServer(web.NewServer(webtest.Deps(kit)))
	t.Cleanup(srv.Close)
	b := *a
	b.Kit, b.Srv = kit, srv
	return &b
}

// People list and revoke their own tokens over the API, an admin anyone's
// and every agent key; nothing shows a secret, and what is revoked is
// refused on its next request.
func TestCredentialsOverTheAPI(t *testing.T) {
	a := webtest.NewAPI(t)
	ctx := t.Context()
	laptop, err := a.Kit.Auth.IssueToken(ctx, testkit.Operator, auth.TokenRequest{Email: a.Lead.Email, Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{a.LeadTok, a.AdminTok, a.ViewerTok, a.AgentKey, a.OtherKey, laptop.Secret}
	noSecret := func(t *testing.T, body []byte) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(string(body), s) || strings.Contains(string(body), s[10:]) {
				t.Fatalf("the answer holds a secret: %s", body)
			}
		}
	}

	t.Run("a person lists their own tokens, with prefixes and no secret", func(t *testing.T) {
		a.T = t
		r := a.Do(http.MethodGet, "/api/v1/tokens", a.LeadTok, nil)
		noSecret(t, r.Body)
		l := listOf(t, r)
		if len(l.Tokens) != 2 || l.Tokens[1].Name != "laptop" || l.Tokens[1].Prefix != laptop.Prefix || l.Tokens[0].Owner != a.Lead.Email ||
			l.Tokens[0].State != "active" || l.Tokens[0].ExpiresAt != nil || l.Tokens[0].RevokedAt != nil {
			t.Fatalf("the lead's tokens: %s", r.Body)
		}
	})
	t.Run("an admin lists everyone's tokens and every key", func(t *testing.T) {
		a.T = t
		r := a.Do(http.MethodGet, "/api/v1/tokens", a.AdminTok, nil)
		noSecret(t, r.Body)
		if l := listOf(t, r); len(l.Tokens) != 4 {
			t.Errorf("the admin sees %d tokens, want 4: %s", len(l.Tokens), r.Body)
		}
		r = a.Do(http.MethodGet, "/api/v1/keys", a.AdminTok, nil)
		noSecret(t, r.Body)
		if l := listOf(t, r); len(l.Keys) != 2 || l.Keys[0].Name != a.Agent.KeyName || !strings.HasPrefix(a.AgentKey, l.Keys[0].Prefix) {
			t.Errorf("the keys: %s", r.Body)
		}
	})
	t.Run("agents see no tokens, and only an admin sees keys", func(t *testing.T) {
		a.T = t
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/tokens", a.AgentKey, nil), http.StatusForbidden, "forbidden")
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/keys", a.LeadTok, nil), http.StatusForbidden, "forbidden")
		webtest.CheckError(t, a.Do(http.MethodDelete, fmt.Sprintf("/api/v1/keys/%d", a.Other.KeyID), a.LeadTok, nil),
			http.StatusForbidden, "forbidden")
		webtest.CheckError(t, a.Do(http.MethodDelete, fmt.Sprintf("/api/v1/tokens/%d", laptop.ID), a.AgentKey, nil),
			http.StatusForbidden, "forbidden")
	})
	t.Run("a person cannot revoke another's token", func(t *testing.T) {
		a.T = t
		webtest.CheckError(t, a.Do(http.MethodDelete, fmt.Sprintf("/api/v1/tokens/%d", laptop.ID), a.ViewerTok, nil),
			http.StatusForbidden, "forbidden")
		a.Must(http.StatusOK, http.MethodGet, "/api/v1/missions", laptop.Secret, nil)
	})
	t.Run("a person revokes their own token: it is refused on its next request, their other one is not", func(t *testing.T) {
		a.T = t
		got := a.Must(http.StatusOK, http.MethodDelete, fmt.Sprintf("/api/v1/tokens/%d", laptop.ID), a.LeadTok, nil)
		if got["state"] != "revoked" || got["revoked_at"] == nil || got["name"] != "laptop" {
			t.Errorf("revoked: %v", got)
		}
		r := a.Do(http.MethodGet, "/api/v1/missions", laptop.Secret, nil)
		webtest.CheckError(t, r, http.StatusUnauthorized, "credential_revoked")
		a.Must(http.StatusOK, http.MethodGet, "/api/v1/missions", a.LeadTok, nil)
	})
	t.Run("revoking twice, an unknown id and no id are refused", func(t *testing.T) {
		a.T = t
		webtest.CheckError(t, a.Do(http.MethodDelete, fmt.Sprintf("/api/v1/tokens/%d", laptop.ID), a.AdminTok, nil),
			http.StatusConflict, "already_revoked")
		webtest.CheckError(t, a.Do(http.MethodDelete, "/api/v1/tokens/9999", a.AdminTok, nil), http.StatusNotFound, "token_not_found")
		webtest.CheckError(t, a.Do(http.MethodDelete, "/api/v1/tokens/laptop", a.AdminTok, nil), http.StatusNotFound, "token_not_found")
		webtest.CheckError(t, a.Do(http.MethodDelete, "/api/v1/keys/9999", a.AdminTok, nil), http.StatusNotFound, "key_not_found")
	})
	t.Run("an admin revokes a key: the agent is refused on its next brief", func(t *testing.T) {
		a.T = t
		session := a.Session(false)
		a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": session})
		got := a.Must(http.StatusOK, http.MethodDelete, fmt.Sprintf("/api/v1/keys/%d", a.Agent.KeyID), a.AdminTok, nil)
		if got["state"] != "revoked" || got["name"] != a.Agent.KeyName {
			t.Errorf("revoked: %v", got)
		}
		webtest.CheckError(t, a.Do(http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": session}),
			http.StatusUnauthorized, "credential_revoked")
		webtest.CheckError(t, a.Do(http.MethodDelete, fmt.Sprintf("/api/v1/keys/%d", a.Agent.KeyID), a.AdminTok, nil),
			http.StatusConflict, "already_revoked")
	})
}

// An expired key is refused at once, over HTTP, with what expired when;
// the lists show its expiry and its last use.
func TestAnExpiredKeyIsRefusedOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t)
	key, err := a.Kit.Auth.IssueKey(t.Context(), testkit.Operator, auth.KeyRequest{Name: "hour", Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := a.Kit.Auth.Authenticate(t.Context(), key.Secret)
	if err != nil {
		t.Fatal(err)
	}
	session := a.Kit.Session(agent, a.Kit.Mission(a.Lead, false))
	a.Kit.Clock.Advance(30 * time.Minute)
	used := a.Kit.Clock.Now()
	a.Must(http.StatusOK, http.MethodPost, "/brief", key.Secret, map[string]any{"session": session})
	a.Kit.Clock.Advance(30 * time.Minute)
	r := a.Do(http.MethodPost, "/brief", key.Secret, map[string]any{"session": session})
	webtest.CheckError(t, r, http.StatusUnauthorized, "credential_expired")
	if !strings.Contains(string(r.Body), "expired at 2026-11-29T13:00:00Z") {
		t.Errorf("the refusal does not say when: %s", r.Body)
	}
	for _, k := range listOf(t, a.Do(http.MethodGet, "/api/v1/keys", a.AdminTok, nil)).Keys {
		if k.Name != "hour" {
			continue
		}
		if k.State != "expired" || k.ExpiresAt == nil || !k.ExpiresAt.Equal(used.Add(30*time.Minute)) ||
			k.LastUsedAt == nil || !k.LastUsedAt.Equal(used) {
			t.Errorf("the expired key is listed as %+v; want expired at %v, last used at %v", k, used.Add(30*time.Minute), used)
		}
	}
}

// Two servers on one database (two replicas on PostgreSQL, two processes
// on one SQLite file): what one revokes, the other refuses on the very
// next request, with no wait.
func TestARevocationThroughOneServerHoldsOnAnother(t *testing.T) {
	a := webtest.NewAPI(t)
	b := secondServer(t, a)
	session := a.Session(false)
	// B has let both credentials in before.
	b.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": session})
	b.Must(http.StatusOK, http.MethodGet, "/api/v1/missions", a.LeadTok, nil)

	a.Must(http.StatusOK, http.MethodDelete, fmt.Sprintf("/api/v1/keys/%d", a.Agent.KeyID), a.AdminTok, nil)
	webtest.CheckError(t, b.Do(http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": session}),
		http.StatusUnauthorized, "credential_revoked")

	tokens := listOf(t, a.Do(http.MethodGet, "/api/v1/tokens", a.LeadTok, nil)).Tokens
	a.Must(http.StatusOK, http.MethodDelete, fmt.Sprintf("/api/v1/tokens/%d", tokens[0].ID), a.LeadTok, nil)
	webtest.CheckError(t, b.Do(http.MethodGet, "/api/v1/missions", a.LeadTok, nil), http.StatusUnauthorized, "credential_revoked")
	b.Must(http.StatusOK, http.MethodPost, "/brief", a.OtherKey, map[string]any{"session": b.Kit.Session(a.Other, a.Kit.Mission(a.Admin, false))})
}
