package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// The markers around the figures the bench writes into a document
// (--doc): everything between them is replaced, the rest kept.
const (
	docBegin = "<!-- madebook-bench: begin (written by `go run ./cmd/madebook-bench --doc FILE`; do not edit) -->"
	docEnd   = "<!-- madebook-bench: end -->"
)

// CheckDoc says why WriteDoc could not write into the file at path, or
// nil: a run checks it before it measures.
func CheckDoc(path string) error {
	_, _, err := docSection(path)
	return err
}

// WriteDoc replaces the figures section of the Markdown file at path with
// a run's output, headed by when, on what and with which settings it ran.
func WriteDoc(path string, cfg Config, output string, at time.Time) error {
	head, tail, err := docSection(path)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Write(head)
	fmt.Fprintf(&b, "\n\nRun on %s, commit %s, %s %s/%s, %d CPUs; %s:\n\n```text\n%s```\n\n",
		at.UTC().Format("2006-01-02 15:04 MST"), commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(),
		cfg.settings(), output)
	b.Write(tail)
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// docSection reads the file at path and returns what comes before its
// figures section (the begin marker included) and after it (from the end
// marker on). The file must hold both markers, begin before end.
func docSection(path string) (head, tail []byte, err error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	i, j := bytes.Index(doc, []byte(docBegin)), bytes.Index(doc, []byte(docEnd))
	if i < 0 || j < i {
		return nil, nil, fmt.Errorf("%s has no section to write: put %q and, after it, %q on lines of their own", path, docBegin, docEnd)
	}
	return doc[:i+len(docBegin)], doc[j:], nil
}

// settings describes a run's settings, "the default settings" when they
// are Defaults.
func (c Config) settings() string {
	engine := "SQLite"
	if c.DB != "" {
		engine = "PostgreSQL"
	}
	d := c
	d.DB, d.CPUProfile = "", ""
	if d == Defaults {
		return engine + ", the default settings"
	}
	return fmt.Sprintf("%s, --sessions %d --duration %s --open-duration %s --concurrency %d --rate %d (wrk %v)",
		engine, c.Sessions, c.Duration, c.OpenDuration, c.Concurrency, c.Rate, c.Wrk)
}

// commit is the checkout's commit, "+ changes" when its tree differs
// from it, or "unknown" outside a git checkout.
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " + changes"
	}
	return c
}
