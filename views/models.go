// Package views is the console's HTML, as templ components. Components take
// view-model structs and domain types, never database rows or an
// echo.Context; elements tests look for carry data-testid.
package views

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/madebook/madebook/internal/governance"
)

// Page is what every full page needs.
type Page struct {
	Title string
	// Nav names the current section: attention, sessions, missions, users, keys.
	Nav string
	// Viewer is the signed-in person; nil on the sign-in page.
	Viewer *Viewer
	// CSRF is the token every state-changing request must carry.
	CSRF string
	// Count is the number of Attention items.
	Count  int
	Assets Assets
	// Notice is a one-line confirmation shown at the top.
	Notice string
}

// Viewer is the signed-in person.
type Viewer struct {
	Email   string
	Role    string
	CanLead bool
	IsAdmin bool
}

// Assets are the cache-busted asset addresses.
type Assets struct {
	CSS, HTMX, JS string
}

// FieldErrors maps a form field to what is wrong with it.
type FieldErrors map[string]string

func csrfHeader(token string) string {
	return fmt.Sprintf(`{"X-CSRF-Token": %q}`, token)
}

func titleWithCount(title string, count int) string {
	if count > 0 {
		return fmt.Sprintf("(%d) %s — Madebook", count, title)
	}
	return title + " — Madebook"
}

// Age says how long ago t was, in words a person scans quickly.
func Age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
}

// Stamp is a time as people read it in the console: UTC, to the second.
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func current(nav, section string) string {
	if nav == section {
		return "page"
	}
	return "false"
}

// itemID is an item's element id. A blocked task's ref is the agent's own
// task id, unique only within its session and free text: it is hex-encoded
// after the session's id.
func itemID(it governance.AttentionItem) string {
	if it.Kind == governance.ItemTask {
		return "item-task-" + it.Session + "-" + hex.EncodeToString([]byte(it.Ref))
	}
	return "item-" + it.Kind + "-" + it.Ref
}

func sessionLabel(it governance.AttentionItem) string {
	if it.SessionTitle != "" {
		return it.SessionTitle + " (" + it.Session + ")"
	}
	return it.Session
}

func countKind(items []governance.AttentionItem, kind string) int {
	n := 0
	for _, it := range items {
		if it.Kind == kind {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// decisionState names a gate's state the way a person reads it.
func decisionState(d governance.Decision) string {
	switch {
	case d.DeliveredAt != nil:
		return "delivered at " + Stamp(*d.DeliveredAt)
	case d.Status == governance.DecisionResolved:
		return "decided, not yet delivered"
	default:
		return "open"
	}
}

func resolutionRefs(rs []governance.Resolution) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Ref
	}
	return out
}

// badgeText is an item's label: its state, or PARKED for a run's question.
func badgeText(it governance.AttentionItem) string {
	if it.Kind == governance.ItemAsk {
		return "PARKED"
	}
	return it.State.String()
}

// promptLabel is the label of the option a permission prompt was answered
// with.
func promptLabel(p governance.PermissionPrompt) string {
	for _, o := range p.Options {
		if o.Key == p.Answer {
			return o.Label
		}
	}
	return ""
}
