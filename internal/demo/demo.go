// Package demo is `madebook serve --demo`: it fills a throwaway database
// through the server's own public API, as a lead and an agent would,
// prints how to sign in, then plays a simulated agent that keeps briefing
// and now and then opens a gate. Serve runs it as one of its workers.
package demo

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/madebook/madebook/internal/auth"
)

// The demo's people.
const (
	Email     = "demo@example.com"
	agentName = "demo-agent"
)

// Pace is how busy the simulated agent is.
type Pace struct {
	// BriefEvery is how often it briefs each session.
	BriefEvery time.Duration
	// GateEvery is how often it opens a new gate.
	GateEvery time.Duration
	// MaxGates caps the gates it opens, so that an unattended demo does
	// not grow without bound.
	MaxGates int
}

// DefaultPace is `serve --demo`'s pace.
var DefaultPace = Pace{BriefEvery: 5 * time.Second, GateEvery: 20 * time.Second, MaxGates: 30}

// Config is what the demo plays against.
type Config struct {
	// Auth issues the demo's credentials.
	Auth *auth.Service
	// URL is the server's own address (http://ADDR).
	URL string
	// DB names the throwaway database in the banner.
	DB   string
	Pace Pace
	// Out is where the banner goes; Logger takes the agent's lines.
	Out    io.Writer
	Logger *slog.Logger
	// GateAgo opens a gate on the session as the agent whose key is
	// given, as if age ago: the API opens gates now, and the demo shows
	// one nobody answered in time. The session must not have been
	// briefed yet, so that no cached brief misses the gate.
	GateAgo func(ctx context.Context, key, session string, g Gate, age time.Duration) error
}

// Run seeds the database, prints the banner, then plays the simulated
// agent until ctx is done. It returns an error only if the setup fails
// (being stopped while it sets up is no failure).
func Run(ctx context.Context, cfg Config) error {
	err := play(ctx, cfg)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func play(ctx context.Context, cfg Config) error {
	creds, err := issueCredentials(ctx, cfg.Auth)
	if err != nil {
		return err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	c := &client{base: cfg.URL, lead: creds.token, agent: creds.key, http: &http.Client{Transport: transport, Timeout: 10 * time.Second},
		gateAgo: func(ctx context.Context, session string, g Gate, age time.Duration) error {
			return cfg.GateAgo(ctx, creds.key, session, g, age)
		}}
	sessions, err := seed(ctx, c)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if _, err := io.WriteString(cfg.Out, banner(cfg, creds)); err != nil {
		return fmt.Errorf("print the banner: %w", err)
	}
	(&simulatedAgent{api: c, pace: cfg.Pace, sessions: sessions, logger: cfg.Logger, last: map[string]string{},
		acks: map[string]string{}}).run(ctx)
	return nil
}

// credentials are the demo's: the admin's password and personal token,
// and the agent's key.
type credentials struct {
	password, token, key string
}

// issueCredentials adds the demo admin and issues its token and the
// agent's key. Under a maximum age (MADEBOOK_TOKEN_MAX_AGE) they live
// that long; otherwise until the demo ends.
func issueCredentials(ctx context.Context, a *auth.Service) (credentials, error) {
	by := auth.CommandLine("demo")
	c := credentials{password: rand.Text()}
	if _, err := a.AddUser(ctx, by, Email, c.password, auth.Admin); err != nil {
		return c, fmt.Errorf("add the demo user: %w", err)
	}
	life := a.MaxAge()
	token, err := a.IssueToken(ctx, by, auth.TokenRequest{Email: Email, Name: "demo", Lifetime: life})
	if err != nil {
		return c, fmt.Errorf("issue the demo token: %w", err)
	}
	key, err := a.IssueKey(ctx, by, auth.KeyRequest{Name: agentName, Lifetime: life})
	if err != nil {
		return c, fmt.Errorf("issue the demo agent key: %w", err)
	}
	c.token, c.key = token.Secret, key.Secret
	return c, nil
}

// banner is how to sign in, and what the simulated agent does.
func banner(cfg Config, c credentials) string {
	return fmt.Sprintf(`
  Madebook demo
  -------------
  Console    %s  (sign in below)
  Email      %s
  Password   %s
  API token  %s
  Agent key  %s
  Try        curl -H 'Authorization: Bearer %s' %s/api/v1/attention

  A simulated agent (%s) briefs every %s and opens a gate every %s, %d at most.
  The database is thrown away at exit (Ctrl-C): %s

`, cfg.URL, Email, c.password, c.token, c.key, c.token, cfg.URL, agentName, cfg.Pace.BriefEvery, cfg.Pace.GateEvery, cfg.Pace.MaxGates, cfg.DB)
}

// NewDatabase makes a temporary directory for the demo's database and
// returns the database's path and a function that removes the directory.
func NewDatabase() (path string, remove func() error, err error) {
	dir, err := os.MkdirTemp("", "madebook-demo-")
	if err != nil {
		return "", nil, fmt.Errorf("demo: %w", err)
	}
	return filepath.Join(dir, "madebook.db"), func() error { return os.RemoveAll(dir) }, nil
}

// QuietRequests wraps a log handler to drop the per-request lines below
// warning: in the demo the simulated agent's requests would bury the
// demo's credentials and everything else.
func QuietRequests(h slog.Handler) slog.Handler { return quietRequests{h} }

type quietRequests struct{ slog.Handler }

func (q quietRequests) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "request" && r.Level < slog.LevelWarn {
		return nil
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietRequests) WithAttrs(as []slog.Attr) slog.Handler {
	return quietRequests{q.Handler.WithAttrs(as)}
}

func (q quietRequests) WithGroup(name string) slog.Handler {
	return quietRequests{q.Handler.WithGroup(name)}
}
