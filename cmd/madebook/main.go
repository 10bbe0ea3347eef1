// Command madebook is the governance console for AI coding agents: the
// server (serve), and the operator's commands (migrate, user add, key
// create, token create).
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
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout)
	stop()
	if err != nil {
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
  madebook token create --email E [--db PATH]                       print a new personal API token, once

--db also reads MADEBOOK_DB, --addr MADEBOOK_ADDR, --secure-cookies MADEBOOK_SECURE_COOKIES=1.`

// usageError is a mistake in the command line; main exits 2 for it.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg + "\n" + usage }

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
	if (cmd == "user" || cmd == "key" || cmd == "token") && len(rest) > 0 {
		cmd, rest = cmd+" "+rest[0], rest[1:]
	}
	cfg := config{addr: orDefault(getenv("MADEBOOK_ADDR"), "127.0.0.1:8080"), db: orDefault(getenv("MADEBOOK_DB"), "./madebook.db")}
	fs := flag.NewFlagSet("madebook "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.db, "db", cfg.db, "SQLite database file")
	var email, role, name string
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
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return usageError{fmt.Sprintf("unknown command %q", cmd)}
	}
	if err := fs.Parse(rest); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	// Check the command line whole before touching the database.
	var r auth.Role
	switch cmd {
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
	}

	store, err := db.Open(cfg.db)
	if err != nil {
		return err
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		return err
	}
	authSvc := auth.NewService(store, time.Now)

	switch cmd {
	case "serve":
		return serve(ctx, cfg, store, authSvc, stdout)
	case "migrate":
		fmt.Fprintf(stdout, "database %s is up to date\n", cfg.db)
		return nil
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
func serve(ctx context.Context, cfg config, store *db.Store, authSvc *auth.Service, stdout io.Writer) error {
	logger := slog.New(slog.NewJSONHandler(stdout, nil))
	gov := governance.NewService(store, time.Now)
	handler := web.NewServer(web.Deps{Auth: authSvc, Gov: gov, Ledger: ledger.NewService(store, time.Now), Health: store.Ping, Logger: logger,
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
		gov.RunBriefTimes(flushCtx, time.Second, func(err error) { logger.Error("brief times", "error", err) })
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
