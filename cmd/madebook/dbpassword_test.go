package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// runWarned runs a command with stderr kept, and returns its error and
// what it warned.
func runWarned(t *testing.T, getenv func(string) string, args ...string) (error, string) {
	t.Helper()
	var out, warned bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := runStdio(ctx, append([]string{"madebook"}, args...), stdio{getenv: getenv, stdin: strings.NewReader(""), stdout: &out, stderr: &warned})
	return err, warned.String()
}

// fakePostgres is a PostgreSQL server on loopback that asks every client
// for a cleartext password, tells what it was sent, and refuses it.
func fakePostgres(t *testing.T) (addr string, passwords <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 16)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				be := pgproto3.NewBackend(conn, conn)
				if _, err := be.ReceiveStartupMessage(); err != nil {
					return
				}
				be.Send(&pgproto3.AuthenticationCleartextPassword{})
				if err := be.Flush(); err != nil {
					return
				}
				if err := be.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
					return
				}
				msg, err := be.Receive()
				if err != nil {
					return
				}
				if p, ok := msg.(*pgproto3.PasswordMessage); ok {
					got <- p.Password
				}
				be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: "password authentication failed"})
				be.Flush()
			}()
		}
	}()
	return ln.Addr().String(), got
}

// sent is the first password the fake server was sent.
func sent(t *testing.T, passwords <-chan string) string {
	t.Helper()
	select {
	case p := <-passwords:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("the server was sent no password")
		return ""
	}
}

// The PostgreSQL password can stay out of the command line: in
// MADEBOOK_DB, a file (--db-password-file), or libpq's PGPASSFILE; a --db
// URL with a password on the command line is warned about.
func TestThePostgresPasswordStaysOffTheCommandLine(t *testing.T) {
	addr, passwords := fakePostgres(t)
	dir := t.TempDir()
	url := "postgres://madebook@" + addr + "/madebook?sslmode=disable&connect_timeout=5"

	t.Run("a password in --db on the command line is warned about, never echoed", func(t *testing.T) {
		withPassword := "postgres://madebook:hunter2-secret@" + addr + "/madebook?sslmode=disable"
		err, warned := runWarned(t, noEnv, "migrate", "--db", withPassword)
		if err == nil || !strings.Contains(warned, "holds a password") || !strings.Contains(warned, "MADEBOOK_DB") ||
			!strings.Contains(warned, "--db-password-file") || strings.Contains(warned+err.Error(), "hunter2") {
			t.Errorf("warned %q, error %v", warned, err)
		}
		if got := sent(t, passwords); got != "hunter2-secret" {
			t.Errorf("sent %q", got)
		}
		err, warned = runWarned(t, envOf(map[string]string{"MADEBOOK_DB": withPassword}), "migrate")
		if err == nil || warned != "" {
			t.Errorf("the URL from MADEBOOK_DB: warned %q, error %v; want no warning", warned, err)
		}
		sent(t, passwords)
	})
	t.Run("--db-password-file sends the file's first line", func(t *testing.T) {
		file := filepath.Join(dir, "password")
		if err := os.WriteFile(file, []byte("from-a-file\nignored\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		err, warned := runWarned(t, noEnv, "migrate", "--db", url, "--db-password-file", file)
		if err == nil || warned != "" || strings.Contains(err.Error(), "from-a-file") {
			t.Errorf("warned %q, error %v", warned, err)
		}
		if got := sent(t, passwords); got != "from-a-file" {
			t.Errorf("sent %q, want the file's first line", got)
		}
		err, _ = runWarned(t, envOf(map[string]string{"MADEBOOK_DB": url, "MADEBOOK_DB_PASSWORD_FILE": file}), "token", "list")
		if err == nil {
			t.Error("the fake server let token list in")
		}
		if got := sent(t, passwords); got != "from-a-file" {
			t.Errorf("MADEBOOK_DB_PASSWORD_FILE: sent %q", got)
		}
	})
	t.Run("a password file that cannot be used says why and connects nowhere", func(t *testing.T) {
		empty := filepath.Join(dir, "empty")
		if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "password")
		for _, tc := range []struct {
			name string
			args []string
			says string
			code int
		}{
			{"a missing file", []string{"--db", url, "--db-password-file", filepath.Join(dir, "nope")}, "no such file", 1},
			{"an empty first line", []string{"--db", url, "--db-password-file", empty}, "is empty", 1},
			{"a SQLite path", []string{"--db", filepath.Join(dir, "x.db"), "--db-password-file", file}, "only to a postgres:// URL", 2},
			{"a URL with a password of its own", []string{"--db", "postgres://madebook:other@" + addr + "/madebook", "--db-password-file", file}, "holds a password already", 2},
			{"a URL with no user", []string{"--db", "postgres://" + addr + "/madebook", "--db-password-file", file}, "names no user", 2},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err, _ := runWarned(t, noEnv, append([]string{"migrate"}, tc.args...)...)
				code, msg := outcome(errors.Join(err))
				if err == nil || code != tc.code || !strings.Contains(msg, tc.says) || strings.Contains(msg, "from-a-file") || strings.Contains(msg, "other@") {
					t.Errorf("exit %d, %q; want %d saying %q", code, msg, tc.code, tc.says)
				}
			})
		}
		select {
		case p := <-passwords:
			t.Errorf("a refused password file still connected, sending %q", p)
		default:
		}
	})
	t.Run("libpq's PGPASSFILE is read by the driver", func(t *testing.T) {
		host, port, _ := net.SplitHostPort(addr)
		pass := filepath.Join(dir, "pgpass")
		if err := os.WriteFile(pass, []byte(fmt.Sprintf("%s:%s:madebook:madebook:from-pgpass\n", host, port)), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PGPASSFILE", pass)
		err, warned := runWarned(t, noEnv, "migrate", "--db", url)
		if err == nil || warned != "" {
			t.Errorf("warned %q, error %v", warned, err)
		}
		if got := sent(t, passwords); got != "from-pgpass" {
			t.Errorf("sent %q, want the password PGPASSFILE holds", got)
		}
	})
}
