package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/app"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/demo"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/ratelimit"
	"github.com/madebook/madebook/web"
)

// serveConfig is serve's settings, from its flags and the environment.
type serveConfig struct {
	addr          string
	secureCookies bool
	demo          bool
	// lease is how long a delivery waits for the agent's acknowledgement
	// before a brief hands it over again.
	lease time.Duration
	// publicURL is the console's address as people reach it, which
	// notifications link to; "" is http:// and the listener's address.
	publicURL string
	// expirySweep is how often gates open past their mission's gate_ttl
	// are recorded expired (and so escalated).
	expirySweep time.Duration
	// maxOpenGates is how many gates one session may hold open.
	maxOpenGates int
	// metricsAddr, when set, serves /metrics without a token on a
	// listener of its own (keep it off the public network).
	metricsAddr string
	// trustedProxies are the proxies whose forwarding headers name the
	// client (--trusted-proxy); none: the client is the TCP peer.
	trustedProxies proxyList
	// mcpOrigins are the origins, besides the server's own, whose pages
	// may call the MCP server (--mcp-origin).
	mcpOrigins originList
	// limits are each credential's rate limits.
	limits ratelimit.Config
	// webhookAllow are the ranges webhooks may reach though they are
	// closed by default (loopback, private, …): --webhook-allow.
	webhookAllow allowList
	// maxAge is the longest lifetime a new agent key or personal token
	// may be given (the console's create-a-key form); 0: any.
	maxAge lifetimeFlag
}

// allowList is --webhook-allow: CIDRs or addresses, the flag repeated or
// its values comma-separated.
type allowList []netip.Prefix

func (l *allowList) String() string {
	var s []string
	for _, p := range *l {
		s = append(s, p.String())
	}
	return strings.Join(s, ",")
}

func (l *allowList) Set(v string) error {
	ps, err := notify.ParseAllow(v)
	if err != nil {
		return err
	}
	*l = append(*l, ps...)
	return nil
}

// proxyList is --trusted-proxy: CIDRs or addresses, the flag repeated or
// its values comma-separated.
type proxyList []*net.IPNet

func (p *proxyList) String() string {
	var s []string
	for _, n := range *p {
		s = append(s, n.String())
	}
	return strings.Join(s, ",")
}

// originList is --mcp-origin: origins (scheme://host[:port]), the flag
// repeated or its values comma-separated, kept as web.ParseOrigin
// writes them.
type originList []string

func (o *originList) String() string { return strings.Join(*o, ",") }

func (o *originList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		origin, err := web.ParseOrigin(part)
		if err != nil {
			return err
		}
		*o = append(*o, origin)
	}
	return nil
}

// limitFlag is a rate limit flag: N/s, N/m, N/h or off.
type limitFlag ratelimit.Limit

func (l *limitFlag) String() string { return ratelimit.Limit(*l).String() }

func (l *limitFlag) Set(v string) error {
	r, err := ratelimit.ParseLimit(v)
	if err != nil {
		return err
	}
	*l = limitFlag(r)
	return nil
}

func (p *proxyList) Set(v string) error {
	nets, err := web.ParseProxies(v)
	if err != nil {
		return err
	}
	*p = append(*p, nets...)
	return nil
}

// destinations is where webhooks may go: the default rule, opened where
// --webhook-allow says.
func (cfg serveConfig) destinations() notify.Destinations {
	return notify.Destinations{Allow: cfg.webhookAllow}
}

// runServe is `madebook serve`: it migrates the database, then serves the
// console and the API until ctx is done; with --demo, on a throwaway
// database with a simulated agent.
func runServe(ctx context.Context, c stdio, args []string) error {
	f := newFlags("serve", "madebook serve [--addr ADDR] [--db PATH|URL] [--public-url URL] [--metrics-addr ADDR] [--secure-cookies] [--delivery-lease D] [--expiry-sweep D] [--max-open-gates N] [--rate-requests RATE] [--rate-writes RATE] [--rate-sessions RATE] [--trusted-proxy CIDR]... [--mcp-origin ORIGIN]... [--webhook-allow CIDR]... [--token-max-age D] [--db-password-file FILE] [--demo]",
		"Migrate the database (creating it on first start), then serve the console, the JSON API\n"+
			"and /brief until interrupted (Ctrl-C, SIGTERM), logging JSON lines on stdout, and send\n"+
			"the webhooks' notifications (a failed one is tried again for up to a day).\n\n"+
			"--demo serves a throwaway database instead, removed at exit: missions, sessions in every\n"+
			"state, a simulated agent that keeps briefing and now and then opens a gate, and\n"+
			"demo credentials printed on stdout.")
	var cfg serveConfig
	f.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "listen on `ADDR`, a host:port; port 0 picks a free one")
	f.Env["addr"] = "MADEBOOK_ADDR"
	path := f.dbFlag()
	f.StringVar(&cfg.publicURL, "public-url", "", "link notifications to the console at `URL`, its address as people reach it (e.g. https://madebook.example.com); default http:// and --addr")
	f.Env["public-url"] = "MADEBOOK_PUBLIC_URL"
	f.StringVar(&cfg.metricsAddr, "metrics-addr", "", "also serve /metrics (Prometheus), without a token, on `ADDR`, a host:port kept off the public network; on --addr it takes an admin's token")
	f.Env["metrics-addr"] = "MADEBOOK_METRICS_ADDR"
	f.BoolVar(&cfg.secureCookies, "secure-cookies", false, "make the console's cookies Secure and __Host-, for serving over TLS")
	f.Env["secure-cookies"] = "MADEBOOK_SECURE_COOKIES"
	f.DurationVar(&cfg.lease, "delivery-lease", governance.DefaultDeliveryLease,
		"hand a delivery over again when its brief is not acknowledged within `D` (e.g. 2m, 30s)")
	f.Env["delivery-lease"] = "MADEBOOK_DELIVERY_LEASE"
	f.DurationVar(&cfg.expirySweep, "expiry-sweep", governance.DefaultExpirySweep,
		"record gates open past their mission's gate_ttl as expired every `D` (e.g. 30s), and once at start")
	f.Env["expiry-sweep"] = "MADEBOOK_EXPIRY_SWEEP"
	f.Var(&cfg.trustedProxies, "trusted-proxy",
		"trust X-Forwarded-For and X-Real-IP from the proxies at `CIDR` (e.g. 10.0.0.0/8, 127.0.0.1; repeat or comma-separate); otherwise the client is the TCP peer")
	f.Env["trusted-proxy"] = "MADEBOOK_TRUSTED_PROXIES"
	f.Var(&cfg.mcpOrigins, "mcp-origin",
		"let pages of `ORIGIN` (scheme://host[:port], e.g. https://ide.example.com; repeat or comma-separate) call /mcp; otherwise a request with an Origin header other than the server's own (--public-url, or the address it came to) is refused (403)")
	f.Env["mcp-origin"] = "MADEBOOK_MCP_ORIGIN"
	f.Var(&cfg.webhookAllow, "webhook-allow",
		"let webhooks reach `CIDR` (e.g. 10.0.0.0/8, 127.0.0.1; repeat or comma-separate), though loopback, private, link-local and other internal addresses are refused by default")
	f.Env["webhook-allow"] = "MADEBOOK_WEBHOOK_ALLOW"
	f.IntVar(&cfg.maxOpenGates, "max-open-gates", governance.DefaultMaxOpenGates,
		"refuse a session's gate beyond `N` open at once (409 too_many_open_gates): a stop for an agent that opens gates in a loop")
	f.Env["max-open-gates"] = "MADEBOOK_MAX_OPEN_GATES"
	cfg.limits = ratelimit.Defaults
	for _, l := range []struct {
		name, env string
		to        *ratelimit.Limit
		what      string
	}{
		{"rate-requests", "MADEBOOK_RATE_REQUESTS", &cfg.limits.Requests, "calls of any kind (briefs and checks among them)"},
		{"rate-writes", "MADEBOOK_RATE_WRITES", &cfg.limits.Writes, "calls that change something"},
		{"rate-sessions", "MADEBOOK_RATE_SESSIONS", &cfg.limits.Sessions, "sessions opened"},
	} {
		f.Var((*limitFlag)(l.to), l.name, "allow each agent key or token `RATE` "+l.what+": N/s, N/m or N/h, or off (past it: 429 rate_limited, with Retry-After)")
		f.Env[l.name] = l.env
	}
	maxAgeFlag(f, &cfg.maxAge)
	f.BoolVar(&cfg.demo, "demo", false, "a throwaway demo: its own temporary database, a simulated agent")
	if err := f.parse(c, args); err != nil {
		return err
	}
	if cfg.lease < time.Second {
		return f.Fail("--delivery-lease is %s; it must be at least 1s", cfg.lease)
	}
	if cfg.publicURL != "" {
		u, err := url.Parse(cfg.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return f.Fail("--public-url is %q; it must be an absolute http:// or https:// address", cfg.publicURL)
		}
	}
	if cfg.maxOpenGates < 1 {
		return f.Fail("--max-open-gates is %d; it must be at least 1", cfg.maxOpenGates)
	}
	if cfg.expirySweep < time.Second {
		return f.Fail("--expiry-sweep is %s; it must be at least 1s", cfg.expirySweep)
	}
	if cfg.demo && f.IsSet("db") {
		return f.Fail("--demo makes its own throwaway database: leave out --db")
	}

	logger := slog.New(slog.NewJSONHandler(c.stdout, nil))
	if cfg.demo {
		demoDB, remove, err := demo.NewDatabase()
		if err != nil {
			return err
		}
		defer func() {
			if err := remove(); err != nil {
				logger.Error("remove the demo database", "error", err)
			}
		}()
		*path = demoDB
		// The simulated agent's requests would bury the demo's
		// credentials: only its own lines, and failures, are logged.
		logger = slog.New(demo.QuietRequests(logger.Handler()))
	}

	// Listen first: the deep links' address is the listener's unless
	// --public-url names one, and the services are built with it.
	// Connections wait in the backlog while the database migrates.
	ls, err := listen(cfg, logger)
	if err != nil {
		return err
	}
	defer ls.close()
	logger.Info("migrating", "db", db.Describe(*path))
	a, err := app.Open(ctx, *path, app.Options{TokenMaxAge: cfg.maxAge.duration(), Governance: governance.Options{
		DeliveryLease: cfg.lease, MaxOpenGates: cfg.maxOpenGates, WebhookDestinations: cfg.destinations(), Logger: logger,
		PublicURL: ls.public}})
	if err != nil {
		return err
	}
	defer a.Close()
	users, err := a.Auth.CountUsers(ctx)
	if err != nil {
		return err
	}
	return serve(ctx, a, cfg, ls, users == 0, logger, c.stdout)
}

// listeners are serve's sockets and the public address they give.
type listeners struct {
	http, metrics net.Listener // metrics: nil without --metrics-addr
	public        string       // --public-url, else the HTTP listener's address
}

// listen opens the HTTP listener on cfg.addr and, with --metrics-addr, the
// metrics one.
func listen(cfg serveConfig, logger *slog.Logger) (listeners, error) {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return listeners{}, fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	ls := listeners{http: ln, public: cfg.publicURL}
	if ls.public == "" {
		ls.public = dialURL(ln.Addr())
	}
	if cfg.metricsAddr != "" {
		if ls.metrics, err = net.Listen("tcp", cfg.metricsAddr); err != nil {
			ln.Close()
			return listeners{}, fmt.Errorf("listen for metrics on %s: %w", cfg.metricsAddr, err)
		}
		logger.Info("metrics", "addr", "http://"+ls.metrics.Addr().String()+"/metrics")
	}
	return ls, nil
}

// close closes the listeners (serving has closed them already: a second
// close is harmless).
func (ls listeners) close() {
	ls.http.Close()
	if ls.metrics != nil {
		ls.metrics.Close()
	}
}

// serve serves the console and the API on ls, with the background
// workers beside it, until ctx is done or a worker fails; then it stops
// the workers in reverse order (runWorkers).
func serve(ctx context.Context, a *app.App, cfg serveConfig, ls listeners, noUsers bool, logger *slog.Logger, stdout io.Writer) error {
	ln, metricsLn, public := ls.http, ls.metrics, ls.public
	m := web.NewMetrics(a.Gov)
	// Shutdown waits for every handler; the console's push streams end
	// when it begins, instead of holding it for its whole timeout.
	stopping := make(chan struct{})
	srv := &http.Server{Handler: a.Handler(web.Deps{Logger: logger, SecureCookies: cfg.secureCookies,
		TrustedProxies: cfg.trustedProxies, Stopping: stopping, Metrics: m, Limits: ratelimit.New(cfg.limits),
		PublicURL: public, MCPOrigins: cfg.mcpOrigins}), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	srv.RegisterOnShutdown(func() { close(stopping) })

	// In the order they start; they stop in reverse.
	workers := []worker{
		// On PostgreSQL, other replicas' writes are heard until the
		// server is done (on SQLite Listen returns at once).
		{"change listener", func(ctx context.Context) error {
			a.Store.Listen(ctx, func(err error) { logger.Warn("listening for other replicas' changes; reconnecting", "error", err) })
			return nil
		}},
		// The agents' last-brief times and the credentials' last uses,
		// kept in memory, are written every second and once more at the
		// end.
		{"brief times", func(ctx context.Context) error {
			a.Gov.Briefs.RunTimes(ctx, time.Second, func(err error) { logger.Error("brief times", "error", err) })
			return nil
		}},
		{"last uses", func(ctx context.Context) error {
			a.Auth.RunLastUsed(ctx, time.Second, func(err error) { logger.Error("credentials' last use", "error", err) })
			return nil
		}},
		// The webhook sender runs until the HTTP server has shut down
		// (requests that write notifications have finished by then).
		{"webhook sender", func(ctx context.Context) error {
			sender := notify.NewSender(a.Store, logger, cfg.destinations())
			sender.Outcome = m.WebhookOutcome
			sender.Run(ctx)
			return nil
		}},
		// The expiry sweep runs once now, then every cfg.expirySweep;
		// every replica may run it (each gate is recorded once).
		{"expiry sweep", func(ctx context.Context) error {
			runExpiry(ctx, a, cfg.expirySweep, logger)
			return nil
		}},
	}
	if metricsLn != nil {
		workers = append(workers, worker{"metrics", serveMetrics(metricsLn, m.Handler(), logger)})
	}
	workers = append(workers, worker{"http", serveHTTP(srv, ln, logger)})
	if cfg.demo {
		// The demo plays against the server's own listener; a failure
		// to set it up stops the server.
		workers = append(workers, worker{"demo", func(ctx context.Context) error {
			return demo.Run(ctx, demo.Config{Auth: a.Auth, URL: dialURL(ln.Addr()), DB: a.Path, Pace: demo.DefaultPace,
				Out: stdout, Logger: logger, GateAgo: openGateAgo(a)})
		}})
	}

	logger.Info("listening", "addr", "http://"+ln.Addr().String(), "db", db.Describe(a.Path), "public_url", public,
		"trusted_proxies", cfg.trustedProxies.String(), "webhook_allow", cfg.webhookAllow.String())
	if noUsers && !cfg.demo {
		logger.Info(firstUserHint(a.Path))
	}
	err := runWorkers(ctx, workers)
	if err == nil {
		logger.Info("stopped")
	}
	return err
}

// shutdownTimeout is how long serve waits for requests under way to
// finish once it is stopped.
const shutdownTimeout = 10 * time.Second

// serveHTTP is the HTTP server's worker: it serves srv on ln until its
// context is done, then shuts it down gracefully, waiting up to
// shutdownTimeout for the requests under way.
func serveHTTP(srv *http.Server, ln net.Listener, logger *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		select {
		case err := <-served:
			return err
		case <-ctx.Done():
		}
		logger.Info("shutting down")
		shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		return srv.Shutdown(shutCtx)
	}
}

// serveMetrics is the worker of --metrics-addr's listener: /metrics
// without a token, closed at once when stopped. Its failure is logged,
// and the server goes on without it.
func serveMetrics(ln net.Listener, h http.Handler, logger *slog.Logger) func(context.Context) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return func(ctx context.Context) error {
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("metrics listener", "error", err)
			}
		}()
		<-ctx.Done()
		srv.Close()
		return nil
	}
}

// firstUserHint is the line serve logs on a database with no users: the
// exact command that creates the first admin (naming the database unless
// it is the default one).
func firstUserHint(path string) string {
	hint := "no users yet: create one with: " + auth.FirstAdminCommand
	if path != defaultDB {
		hint += " --db " + shellQuote(db.Describe(path))
	}
	return hint
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes s for a POSIX shell, unless it needs no quoting.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dialURL is the base URL that reaches a listener from this machine: an
// unspecified host (0.0.0.0, ::) is dialled on 127.0.0.1.
func dialURL(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && (tcp.IP == nil || tcp.IP.IsUnspecified()) {
		return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return "http://" + addr.String()
}
