// Command madebook is the governance console for AI coding agents: the
// server (serve), and the operator's commands (migrate, user add, key
// create, token create, audit).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/rules"
	"github.com/madebook/madebook/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout)
	stop()
	if err != nil {
		if errors.As(err, new(auditFailed)) {
			os.Exit(1) // the reports on stdout already say what was found
		}
		fmt.Fprintln(os.Stderr, "madebook:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

const usage = `Usage:
  madebook serve  [--addr 127.0.0.1:8080] [--db ./madebook.db] [--secure-cookies]   migrate, then serve
  madebook migrate [--db PATH]
  madebook user add --email E --role admin|lead|viewer [--db PATH] (password: one line on stdin)
  madebook key create --name NAME [--db PATH]                       print a new agent key, once
  madebook rules infer --repo PATH [--apply] [--db PATH]          propose architecture rules from a repository's imports
  madebook token create --email E [--db PATH]                       print a new personal API token, once
  madebook audit [REPORT ...] [--db PATH] [--format table|json|csv] [--older-than 24h]
                                                                    run the audit reports (all four
                                                                    unless named); exit 1 if any row

Audit reports: unanswerable-asks, premature-side-effects, undelivered-resolutions, stale-gates.
--older-than is how long a gate stays open before stale-gates lists it (36h, 90m, 7d).
--db also reads MADEBOOK_DB, --addr MADEBOOK_ADDR, --secure-cookies MADEBOOK_SECURE_COOKIES=1.`

// usageError is a mistake in the command line; main exits 2 for it.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg + "\n" + usage }

// auditFailed is what the audit command returns when a report found rows:
// main exits 1 for it and prints nothing more.
type auditFailed struct{ reports []string }

func (a auditFailed) Error() string {
	return "audit: rows found by " + strings.Join(a.reports, ", ")
}

// config is every setting, from flags and the environment.
type config struct {
	addr          string
	db            string
	secureCookies bool
}

// run is the whole program: main only calls it.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	if len(args) < 2 {
		return usageError{"no command given"}
	}
	cmd, rest := args[1], args[2:]
	if (cmd == "user" || cmd == "key" || cmd == "token" || cmd == "rules") && len(rest) > 0 {
		cmd, rest = cmd+" "+rest[0], rest[1:]
	}
	cfg := config{addr: orDefault(getenv("MADEBOOK_ADDR"), "127.0.0.1:8080"), db: orDefault(getenv("MADEBOOK_DB"), "./madebook.db")}
	fs := flag.NewFlagSet("madebook "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.db, "db", cfg.db, "SQLite database file")
	var email, role, name string
	var format, olderThan string
	var repo string
	var apply bool
	switch cmd {
	case "serve":
		fs.StringVar(&cfg.addr, "addr", cfg.addr, "address to listen on")
		cfg.secureCookies = getenv("MADEBOOK_SECURE_COOKIES") == "1"
		fs.BoolVar(&cfg.secureCookies, "secure-cookies", cfg.secureCookies, "console cookies Secure and __Host- (served over TLS)")
	case "migrate":
	case "user add":
		fs.StringVar(&email, "email", "", "the user's email")
		fs.StringVar(&role, "role", "", "admin, lead or viewer")
	case "key create":
		fs.StringVar(&name, "name", "", "the agent key's name")
	case "token create":
		fs.StringVar(&email, "email", "", "the email of the user the token acts as")
	case "audit":
		fs.StringVar(&format, "format", "table", "table, json or csv")
		fs.StringVar(&olderThan, "older-than", "", "the age past which an open gate is stale (default 24h)")
	case "rules infer":
		fs.StringVar(&repo, "repo", "", "the repository to read")
		fs.BoolVar(&apply, "apply", false, "store the proposed rules (advisory)")
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return usageError{fmt.Sprintf("unknown command %q", cmd)}
	}
	if err := fs.Parse(rest); err != nil {
		return usageError{err.Error()}
	}
	// audit takes report names, before or after its flags.
	var reports []string
	for cmd == "audit" && fs.NArg() > 0 {
		reports = append(reports, fs.Arg(0))
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return usageError{err.Error()}
		}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	// Check the command line whole before touching the database.
	var r auth.Role
	var proposed []rules.Rule
	switch cmd {
	case "rules infer":
		if repo == "" {
			return usageError{"rules infer needs --repo"}
		}
		info, err := os.Stat(repo)
		if err != nil || !info.IsDir() {
			return fmt.Errorf("rules infer: %s is not a directory", repo)
		}
		if proposed, err = rules.Infer(os.DirFS(repo)); err != nil {
			return fmt.Errorf("rules infer: %w", err)
		}
		printRules(stdout, proposed)
		if !apply {
			return nil
		}
	case "user add":
		if email == "" || role == "" {
			return usageError{"user add needs --email and --role"}
		}
		var err error
		if r, err = auth.ParseRole(role); err != nil {
			return err
		}
	case "key create":
		if name == "" {
			return usageError{"key create needs --name"}
		}
	case "token create":
		if email == "" {
			return usageError{"token create needs --email"}
		}
	case "audit":
		for _, n := range reports {
			if _, err := audit.Lookup(n); err != nil {
				return usageError{fmt.Sprintf("unknown audit report %q", n)}
			}
		}
		if format != "table" && format != "json" && format != "csv" {
			return usageError{fmt.Sprintf("--format is table, json or csv, not %q", format)}
		}
		if _, err := audit.ParseOlderThan(olderThan); err != nil {
			return usageError{fmt.Sprintf("--older-than %q is not an age such as 36h, 90m or 7d", olderThan)}
		}
		// Auditing a path that holds no database would create an empty
		// one, and pass.
		if _, err := os.Stat(cfg.db); err != nil {
			return usageError{fmt.Sprintf("no database at %s: give --db PATH (or MADEBOOK_DB)", cfg.db)}
		}
	}

	store, err := db.Open(cfg.db)
	if err != nil {
		return err
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		return err
	}
	gov := governance.New(store, time.Now)
	// A fresh database ships the "Secrets in source" policy set.
	if err := gov.Policies.InstallDefaults(ctx); err != nil {
		return err
	}
	authSvc := auth.NewService(store, time.Now)

	switch cmd {
	case "serve":
		return serve(ctx, cfg, store, authSvc, gov, stdout)
	case "migrate":
		fmt.Fprintf(stdout, "database %s is up to date\n", cfg.db)
		return nil
	case "rules infer":
		n, err := gov.Policies.ImportRules(ctx, proposed)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "stored %d advisory rules in %s\n", n, cfg.db)
		return nil
	case "audit":
		age, _ := audit.ParseOlderThan(olderThan) // checked above
		return runAudit(ctx, store, reports, format, age, stdout)
	case "user add":
		password, err := readLine(stdin)
		if err != nil {
			return err
		}
		u, err := authSvc.AddUser(ctx, email, password, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added %s (%s)\n", u.Email, u.Role)
		return nil
	case "key create":
		key, err := authSvc.CreateKey(ctx, name)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, key)
		return nil
	default: // token create
		token, err := authSvc.CreateToken(ctx, email)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, token)
		return nil
	}
}

// serve runs the HTTP server until ctx is done, then shuts down gracefully.
func serve(ctx context.Context, cfg config, store *db.Store, authSvc *auth.Service, gov *governance.Services, stdout io.Writer) error {
	logger := slog.New(slog.NewJSONHandler(stdout, nil))
	handler := web.NewServer(web.Deps{Auth: authSvc, Gov: gov, Ledger: ledger.NewService(store, time.Now),
		Audit: audit.NewService(store, time.Now), Health: store.Ping, Logger: logger,
		SecureCookies: cfg.secureCookies})

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}

	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		gov.Briefs.RunTimes(flushCtx, time.Second, func(err error) { logger.Error("brief times", "error", err) })
	}()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("listening", "addr", "http://"+ln.Addr().String(), "db", cfg.db)

	select {
	case err = <-served:
	case <-ctx.Done():
		logger.Info("shutting down")
		shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = srv.Shutdown(shutCtx)
		cancel()
	}
	stopFlush()
	<-flushed
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err == nil {
		logger.Info("stopped")
	}
	return err
}

// runAudit runs the named audit reports (all of them if none) and prints
// them in the format: table, one JSON object, or CSV with a "# name" line
// before each report and a blank line between reports. It returns
// auditFailed if any report found rows.
func runAudit(ctx context.Context, store *db.Store, names []string, format string, olderThan time.Duration, stdout io.Writer) error {
	results, err := audit.NewService(store, time.Now).RunAll(ctx, audit.Options{OlderThan: olderThan}, names...)
	if err != nil {
		return err
	}
	var failing []string
	for _, r := range results {
		if !r.Passing() {
			failing = append(failing, r.Report.Name)
		}
	}
	switch format {
	case "json":
		err = audit.WriteJSON(stdout, results)
	case "csv":
		for i := 0; i < len(results) && err == nil; i++ {
			sep := ""
			if i > 0 {
				sep = "\n"
			}
			if _, err = fmt.Fprintf(stdout, "%s# %s\n", sep, results[i].Report.Name); err == nil {
				err = audit.WriteCSV(stdout, results[i])
			}
		}
	default:
		for i := 0; i < len(results) && err == nil; i++ {
			if i > 0 {
				_, err = fmt.Fprintln(stdout)
			}
			if err == nil {
				err = audit.WriteTable(stdout, results[i])
			}
		}
		if err == nil {
			if len(failing) == 0 {
				_, err = fmt.Fprintf(stdout, "\n%d of %d reports pass.\n", len(results), len(results))
			} else {
				_, err = fmt.Fprintf(stdout, "\n%d of %d reports found rows: %s.\n", len(failing), len(results), strings.Join(failing, ", "))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("print the audit: %w", err)
	}
	if len(failing) > 0 {
		return auditFailed{failing}
	}
	return nil
}

// printRules prints proposed architecture rules, one a line.
func printRules(w io.Writer, rs []rules.Rule) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "no rule to propose: no concern of the catalogue is used by two components or more")
		return
	}
	for _, r := range rs {
		fmt.Fprintf(w, "%s: %s, chosen in %d of %d components (%d%%); departures: %s\n", r.Concern, r.Chosen,
			r.Support, r.Total, r.Support*100/r.Total, strings.Join(r.Departures, ", "))
	}
}

// readLine reads one line (the password) from r.
func readLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on stdin: pipe one line, e.g. `echo 'secret-pass' | madebook user add …`")
	}
	return line, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
