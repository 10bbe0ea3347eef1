package policy_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
)

// goSource is a realistic Go file, varied by n.
func goSource(n int) string {
	return fmt.Sprintf(`// Package billing%[1]d computes invoices for the reporting service.
package billing%[1]d

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound%[1]d is returned when an invoice does not exist.
var ErrNotFound%[1]d = errors.New("billing: invoice not found")

// Invoice%[1]d is one customer's invoice for a billing period.
type Invoice%[1]d struct {
	ID         int64
	CustomerID int64
	Period     time.Time
	Lines      []Line%[1]d
	TotalCents int64
	Currency   string
}

// Line%[1]d is one line of an invoice.
type Line%[1]d struct {
	SKU         string
	Description string
	Quantity    int
	UnitCents   int64
}

// Store%[1]d reads and writes invoices.
type Store%[1]d struct {
	db      *sql.DB
	timeout time.Duration
}

// Get loads an invoice by id.
func (s *Store%[1]d) Get(ctx context.Context, id int64) (*Invoice%[1]d, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	row := s.db.QueryRowContext(ctx, "SELECT id, customer_id, period, total_cents, currency FROM invoices WHERE id = ?", id)
	var inv Invoice%[1]d
	if err := row.Scan(&inv.ID, &inv.CustomerID, &inv.Period, &inv.TotalCents, &inv.Currency); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound%[1]d
		}
		return nil, fmt.Errorf("billing: get invoice %%d: %%w", id, err)
	}
	lines, err := s.lines(ctx, id)
	if err != nil {
		return nil, err
	}
	inv.Lines = lines
	return &inv, nil
}

func (s *Store%[1]d) lines(ctx context.Context, id int64) ([]Line%[1]d, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT sku, description, quantity, unit_cents FROM invoice_lines WHERE invoice_id = ? ORDER BY position", id)
	if err != nil {
		return nil, fmt.Errorf("billing: lines of %%d: %%w", id, err)
	}
	defer rows.Close()
	var out []Line%[1]d
	for rows.Next() {
		var l Line%[1]d
		if err := rows.Scan(&l.SKU, &l.Description, &l.Quantity, &l.UnitCents); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Total recomputes an invoice's total from its lines, rounding half-even.
func Total%[1]d(lines []Line%[1]d) int64 {
	var total int64
	for _, l := range lines {
		total += int64(l.Quantity) * l.UnitCents
	}
	return total
}

// Describe renders an invoice for the customer's email.
func Describe%[1]d(inv *Invoice%[1]d) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Invoice %%d for %%s\n", inv.ID, inv.Period.Format("January 2006"))
	for i, l := range inv.Lines {
		// TODO(ana): localise the currency symbol.
		fmt.Fprintf(&b, "%%3d. %%-30s %%4d x %%8.2f %%s\n", i+1, l.Description, l.Quantity, float64(l.UnitCents)/100, inv.Currency)
	}
	fmt.Fprintf(&b, "Total: %%.2f %%s\n", float64(inv.TotalCents)/100, inv.Currency)
	return b.String()
}
`, n)
}

// tsSource is a realistic TypeScript component, varied by n.
func tsSource(n int) string {
	return fmt.Sprintf(`import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../api/client";

export interface Customer%[1]d {
  id: number;
  name: string;
  email: string;
  plan: "free" | "team" | "enterprise";
}

export function CustomerList%[1]d({ teamId }: { teamId: number }) {
  const [filter, setFilter] = useState("");
  const { data, isLoading, error } = useQuery({
    queryKey: ["customers", teamId, filter],
    queryFn: () => api.get<Customer%[1]d[]>("/teams/" + teamId + "/customers?q=" + encodeURIComponent(filter)),
  });
  if (isLoading) return <Spinner label="Loading customers" />;
  if (error) return <ErrorBanner error={error} />;
  return (
    <section className="customer-list">
      <input value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="Filter by name" />
      <ul>
        {data?.map((c) => (
          <li key={c.id}>
            <a href={"/customers/" + c.id}>{c.name}</a> <span className="plan">{c.plan}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
`, n)
}

// yamlSource is a realistic deployment manifest, varied by n.
func yamlSource(n int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: reporting-%[1]d
  labels:
    app: reporting
spec:
  replicas: 3
  selector:
    matchLabels:
      app: reporting
  template:
    metadata:
      labels:
        app: reporting
    spec:
      containers:
        - name: api
          image: registry.example.com/reporting:1.%[1]d.0
          ports:
            - containerPort: 8080
          env:
            - name: DATABASE_URL
              valueFrom:
                secretKeyRef:
                  name: reporting-db
                  key: url
          resources:
            limits:
              cpu: "500m"
              memory: 512Mi
`, n)
}

// benchChange is a 1 MiB change of Go, TypeScript and YAML files, with an
// AWS secret access key near the end of the last file.
func benchChange() change.Change {
	var c change.Change
	total := 0
	for i := 0; total < 1<<20; i++ {
		var f change.File
		switch i % 4 {
		case 0, 1:
			f = change.File{Path: fmt.Sprintf("internal/billing%d/invoice.go", i), Content: goSource(i) + goSource(i+1000)}
		case 2:
			f = change.File{Path: fmt.Sprintf("web/src/customers/List%d.tsx", i), Content: tsSource(i) + tsSource(i+1000)}
		default:
			f = change.File{Path: fmt.Sprintf("deploy/reporting-%d.yaml", i), Content: yamlSource(i)}
		}
		total += len(f.Content)
		c.Files = append(c.Files, f)
	}
	last := &c.Files[len(c.Files)-1]
	last.Path = "config/deploy.sh"
	last.Content += "# deploy\nexport " + awsSecretKey + "=" + awsSecret + "\naws s3 sync dist s3://reporting\n"
	c.Dependencies = []string{"github.com/lib/pq", "react", "@tanstack/react-query", "@types/react", "lodash",
		"golang.org/x/sync", "zod", "left-pad", "express", "@types/node"}
	return c
}

// benchPolicies is the default secrets set and 94 generated policies: 44
// content_regex, 30 path_glob and 20 dependency.
func benchPolicies() []policy.Policy {
	ps := policy.SecretsInSource()
	regexes := []string{
		`\bfmt\.Sprintf\("(?:SELECT|INSERT|UPDATE|DELETE) `,
		`(?i)\bconsole\.log\(`,
		`\beval\(`,
		`\bdebugger;`,
		`\bmd5\.New\(\)`,
		`\bsha1\.Sum\(`,
		`InsecureSkipVerify:\s*true`,
		`\bunsafe\.Pointer\(`,
		`dangerouslySetInnerHTML`,
		`\.innerHTML\s*=`,
		`\bdocument\.write\(`,
		`\bos\.Exit\(`,
		`\bexec\.Command\("(?:sh|bash)"`,
		`(?i)\bDROP\s+TABLE\b`,
		`http://[a-z0-9.-]+\.example\.com`,
		`(?i)x-internal-token`,
		`\b\d{3}-\d{2}-\d{4}\b`,
		`-----BEGIN CERTIFICATE-----`,
		`\bTODO\b[^(]`,
		`(?i)\bhack\b`,
		`\bpanic\("not implemented"\)`,
		`\bmath/rand\b`,
	}
	id := int64(1)
	for i := range ps {
		ps[i].ID = id
		id++
	}
	add := func(name string, kind policy.Kind, pattern string) {
		ps = append(ps, policy.Policy{ID: id, Name: name, Severity: protocol.SeverityMedium, Kind: kind, Pattern: pattern, Action: policy.ActionBlockMerge})
		id++
	}
	for i := range 44 {
		if i < len(regexes) {
			add(fmt.Sprintf("Rule %d", i), policy.KindContentRegex, regexes[i])
		} else {
			add(fmt.Sprintf("Internal host %d", i), policy.KindContentRegex, fmt.Sprintf(`(?i)\b(?:db|cache|queue)-%02d\.corp\.internal\b`, i))
		}
	}
	globs := []string{"vendor/**", "**/*.pem", "**/*.key", "secrets/**", "**/id_rsa", "**/.env", "db/migrations/*.sql",
		"**/node_modules/**", "third_party/**", "**/*.p12"}
	for i := range 30 {
		if i < len(globs) {
			add(fmt.Sprintf("Path %d", i), policy.KindPathGlob, globs[i])
		} else {
			add(fmt.Sprintf("Generated path %d", i), policy.KindPathGlob, fmt.Sprintf("services/legacy-%02d/**/*.go", i))
		}
	}
	deps := []string{"left-pad", "event-stream", "@types/*", "colors", "faker", "node-ipc", "request", "moment"}
	for i := range 20 {
		if i < len(deps) {
			add(fmt.Sprintf("Dependency %d", i), policy.KindDependency, deps[i])
		} else {
			add(fmt.Sprintf("Generated dependency %d", i), policy.KindDependency, fmt.Sprintf("internal-fork-%02d", i))
		}
	}
	return ps
}

func BenchmarkEvaluate1MiB100Policies(b *testing.B) {
	ps := benchPolicies()
	if len(ps) != 100 {
		b.Fatalf("%d policies, want 100", len(ps))
	}
	set := mustCompile(b, ps)
	c := benchChange()
	size := 0
	for _, f := range c.Files {
		size += len(f.Content)
	}
	fs := set.Evaluate(c)
	secret := false
	for _, f := range fs {
		if f.Policy == policy.SecretsName && f.Match == "AWS_SECRET_ACCESS_KEY" && f.File == "config/deploy.sh" {
			secret = true
		}
	}
	if !secret {
		b.Fatalf("the secret near the end was not found: %d findings", len(fs))
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		set.Evaluate(c)
	}
}

// BenchmarkEvaluateMetered1MiB100Policies is the same evaluation timed
// per policy, as change reports run it: the cost of the meter.
func BenchmarkEvaluateMetered1MiB100Policies(b *testing.B) {
	set := mustCompile(b, benchPolicies())
	c := benchChange()
	size := 0
	for _, f := range c.Files {
		size += len(f.Content)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		m := &policy.Meter{Now: time.Now, Stop: func(policy.Policy) bool { return false }}
		if _, err := set.EvaluateMetered(c, m); err != nil {
			b.Fatal(err)
		}
	}
}
