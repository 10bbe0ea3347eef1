// Package views is the console's HTML, as templ components. Components take
// view-model structs and domain types, never database rows or an
// echo.Context; elements tests look for carry data-testid.
package views

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/plan"
)

// Page is what every full page needs.
type Page struct {
	Title string
	// Nav names the current section: attention, sessions, missions, audit,
	// or an admin page (users, keys, tools, policies, rules, webhooks,
	// activity).
	Nav string
	// Viewer is the signed-in person; nil on the sign-in page.
	Viewer *Viewer
	// CSRF is the token every state-changing request must carry.
	CSRF string
	// Count is the number of Attention items.
	Count int
	// Since is the Attention queue's fingerprint when the page was built:
	// the push stream says at once if the queue changed after it.
	Since  string
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
	CSS, HTMX, JS, Icon string
	// SSE is htmx's server-sent events extension.
	SSE string
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

// adminSection is one admin page in the admin pages' own navigation.
type adminSection struct{ Nav, Href, Label string }

// adminSections are the admin pages, in the order their navigation lists
// them. The main navigation has one Admin entry for all of them.
var adminSections = []adminSection{
	{"users", "/admin/users", "Users"}, {"keys", "/admin/keys", "Agent keys"},
	{"tokens", "/admin/tokens", "Personal tokens"}, {"tools", "/admin/tools", "Tools"},
	{"policies", "/admin/policies", "Policies"}, {"rules", "/admin/rules", "Rules"},
	{"webhooks", "/admin/webhooks", "Notifications"},
}

// inSection is the aria-current of a navigation entry that stands for a
// section of pages: "true" on any page of it, "false" elsewhere.
func inSection(nav string, sections []adminSection) string {
	for _, s := range sections {
		if s.Nav == nav {
			return "true"
		}
	}
	return "false"
}

// itemID is an item's element id (ItemElementID).
func itemID(it governance.AttentionItem) string { return ItemElementID(it.Kind, it.Session, it.Ref) }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// decisionState names a gate's state the way a person reads it: an
// expired gate is still open (expired is never rejected), and a gate
// resolved after it expired says so.
func decisionState(d governance.Decision) string {
	switch {
	case d.Expired && d.ExpiredAt != nil:
		return "open, expired unanswered at " + Stamp(*d.ExpiredAt)
	case d.ExpiredAt != nil:
		return deliveryState(d.DeliveredAt, d.AckedAt, d.Status == governance.DecisionResolved) +
			" (it had expired unanswered at " + Stamp(*d.ExpiredAt) + ")"
	}
	return deliveryState(d.DeliveredAt, d.AckedAt, d.Status == governance.DecisionResolved)
}

// deliveryState says where a thing decided for an agent stands: open,
// decided and not yet delivered, delivered (sent) but not acknowledged, or
// acknowledged (the agent confirmed it got it).
func deliveryState(delivered, acked *time.Time, decided bool) string {
	switch {
	case acked != nil:
		return "acknowledged at " + Stamp(*acked)
	case delivered != nil:
		return "delivered at " + Stamp(*delivered) + ", not acknowledged"
	case decided:
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

// planOption is one option of a stopping point, with its key.
type planOption struct {
	Key string
	plan.Option
}

// planOptions lists a stopping point's options in key order.
func planOptions(sp plan.StoppingPoint) []planOption {
	out := make([]planOption, 0, len(sp.Options))
	for _, key := range slices.Sorted(maps.Keys(sp.Options)) {
		out = append(out, planOption{Key: key, Option: sp.Options[key]})
	}
	return out
}

// stepEffect says whether a step writes, as the plan check counts it
// (plan.Step.Writes with the tool registry's classifier): "writes" or
// "read-only".
func stepEffect(s plan.Step, tools plan.Classifier) string {
	if s.Writes(tools) {
		return "writes"
	}
	return "read-only"
}

// writesTitle says why a writing step writes: a step that says it only
// reads is overruled by the tool registry.
func writesTitle(s plan.Step) string {
	if s.Tool != "" && s.SideEffecting != nil && !*s.SideEffecting {
		return "The step says it only reads, but the tool registry marks this tool side-effecting or does not know it, and the registry wins"
	}
	return "This step changes something outside the agent"
}

// stepWhat is what a step runs: server and tool, or its prompt.
func stepWhat(s plan.Step) string {
	switch {
	case s.Tool != "" && s.Server != "":
		return s.Server + "/" + s.Tool
	case s.Tool != "":
		return s.Tool
	case s.Prompt != "":
		return s.Prompt
	case s.Kind == "join":
		return "join"
	}
	return ""
}

// joinQuorum is how many of a join's inputs must succeed, when it says.
func joinQuorum(s plan.Step) string {
	if s.MinSuccess > 0 {
		return " (at least " + strconv.Itoa(s.MinSuccess) + " must succeed)"
	}
	return ""
}

// sessionNeeds counts what waits on a person on a session: open critical
// violations, a plan waiting, open gates, unanswered asks and permission
// prompts.
func sessionNeeds(v SessionView) int {
	n := 0
	for _, x := range v.D.Violations {
		if x.Severity == "critical" {
			n++
		}
	}
	if v.D.Plan != nil && v.D.Plan.Status == governance.PlanProposed {
		n++
	}
	for _, d := range v.D.Decisions {
		if d.Status == governance.DecisionOpen {
			n++
		}
	}
	for _, r := range v.Runs {
		for _, a := range r.Asks {
			if a.AnsweredAt == nil {
				n++
			}
		}
	}
	for _, p := range v.D.Permissions {
		if p.AnsweredAt == nil {
			n++
		}
	}
	return n
}

// plural is "1 file" or "3 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// pausedText says a session is paused, with its reason when it has one
// (brakes pulled before a reason was required may have none).
func pausedText(reason string) string {
	if reason == "" {
		return "Paused."
	}
	return "Paused: " + reason
}
