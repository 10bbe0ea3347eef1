package views

import (
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/madebook/madebook/internal/governance"
)

// Inbox is the Attention view: the counts by kind, the filters, and a page
// of the queue, one line per item.
type Inbox struct {
	Page   governance.AttentionPage
	Filter governance.AttentionFilter
	// Missions are the choices of the mission filter.
	Missions []governance.Mission
	// Limit is how many lines a page holds.
	Limit   int
	Now     time.Time
	CanLead bool
	CSRF    string
}

// Announce is what the live region says after an action, and what comes
// with it: the count in the navigation and the page title.
type Announce struct {
	Message string
	Title   string
	Count   int
}

// kindLabels name each kind of item in the counts bar.
var kindLabels = map[string]string{
	governance.ItemViolation:   "violations",
	governance.ItemPaused:      "paused",
	governance.ItemPlan:        "plans",
	governance.ItemDecision:    "gates",
	governance.ItemAsk:         "parked runs",
	governance.ItemPermission:  "permissions",
	governance.ItemRemediation: "remediations",
	governance.ItemTask:        "blocked tasks",
}

// emptyNotes say what would appear in a filtered, empty queue.
var emptyNotes = map[string]string{
	governance.ItemViolation:   "No critical violation is open. A change report that trips a critical policy stops its agent and appears here.",
	governance.ItemPaused:      "No session is paused. A session someone pulls the brake on appears here until it is released.",
	governance.ItemPlan:        "No plan waits for approval. A plan proposed on a high-risk mission appears here before its agent may change code.",
	governance.ItemDecision:    "No gate is open. When an agent asks a person to decide, its gate appears here.",
	governance.ItemAsk:         "No run is parked. A run that stops on a question for a person appears here.",
	governance.ItemPermission:  "No permission prompt waits. When an agent's tool asks for permission, the prompt appears here.",
	governance.ItemRemediation: "No required remediation is open. Remediations leads require appear here until closed.",
	governance.ItemTask:        "No task is blocked. A task an agent reports blocked appears here until it moves.",
}

// queueURL is the address of the queue under f with one more parameter
// set (name, value), or removed when value is "": the page at "/" or a
// fragment at "/attention/queue".
func queueURL(path string, f governance.AttentionFilter, set ...string) string {
	params := map[string]string{"kind": f.Kind, "mission": f.Mission, "agent": f.Agent, "session": f.Session,
		"state": f.State, "claimed": f.Claimed, "snoozed": f.Snoozed}
	for i := 0; i+1 < len(set); i += 2 {
		params[set[i]] = set[i+1]
	}
	return withQuery(path, params)
}

// withQuery is path with the parameters of params that are not "" as its
// query string.
func withQuery(path string, params map[string]string) string {
	v := url.Values{}
	for name, value := range params {
		if value != "" {
			v.Set(name, value)
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// refreshURL is where the queue refreshes itself from: its filters (the
// script adds how many lines it shows, as ?limit=).
func refreshURL(in Inbox) string {
	return queueURL("/attention/queue", in.Filter)
}

// moreURL is the next page of lines, under the same filters.
func moreURL(path string, in Inbox) string {
	return queueURL(path, in.Filter, "from", strconv.Itoa(in.Page.From+len(in.Page.Items)))
}

// moreLabel says what the next page brings.
func moreLabel(in Inbox) string {
	left := in.Page.Total - in.Page.From - len(in.Page.Items)
	if left <= in.Limit {
		return "Show the last " + strconv.Itoa(left)
	}
	return "Show " + strconv.Itoa(in.Limit) + " more of " + strconv.Itoa(left) + " left"
}

// itemURL opens one item: its form alone for htmx, a page otherwise.
func itemURL(it governance.AttentionItem) string {
	return "/attention/items/" + url.PathEscape(it.Kind) + "/" + url.PathEscape(it.Session) + "/" + url.PathEscape(it.Ref)
}

// taskURL is where a blocked task's answers go: its session's task.
func taskURL(it governance.AttentionItem) string {
	return "/sessions/" + url.PathEscape(it.Session) + "/tasks/" + url.PathEscape(it.Ref)
}

// ItemElementID is the element id of an item's line. A blocked task's ref
// is the agent's own task id, unique only within its session and free
// text: it is hex-encoded after the session's id.
func ItemElementID(kind, session, ref string) string {
	if kind == governance.ItemTask {
		return "item-task-" + session + "-" + hex.EncodeToString([]byte(ref))
	}
	return "item-" + kind + "-" + ref
}

// slotID is the element the item's form opens in.
func slotID(it governance.AttentionItem) string { return itemID(it) + "-open" }

// group is one session's lines on a page.
type group struct {
	First     governance.AttentionItem
	Continued bool
	Items     []governance.AttentionItem
}

// groups splits a page's items (already grouped by session) into groups.
func groups(p governance.AttentionPage) []group {
	var gs []group
	for _, it := range p.Items {
		if n := len(gs); n > 0 && gs[n-1].First.Session == it.Session {
			gs[n-1].Items = append(gs[n-1].Items, it)
			continue
		}
		gs = append(gs, group{First: it, Continued: len(gs) == 0 && p.After == it.Session, Items: []governance.AttentionItem{it}})
	}
	return gs
}

// filtered reports whether any filter narrows the queue.
func filtered(f governance.AttentionFilter) bool {
	return f.Kind != "" || f.Mission != "" || f.Agent != "" || f.Session != "" || f.State != "" || f.Claimed != "" || f.Snoozed != ""
}

// claimedChoices are the queue's "Claimed" filter, in order.
var claimedChoices = []struct{ Value, Label string }{
	{"", "or not"}, {governance.ClaimedMe, "by me"}, {governance.ClaimedNo, "by no one"}, {governance.ClaimedYes, "by someone"},
}

// scopePreview is the first few entries of a blocked scope, and how many
// more there are.
func scopePreview(scope []string) ([]string, int) {
	const n = 3
	if len(scope) <= n {
		return scope, 0
	}
	return scope[:n], len(scope) - n
}

// lineTitle is an item's title on its line: a gate's or a permission
// prompt's reference first.
func lineTitle(it governance.AttentionItem) string {
	switch it.Kind {
	case governance.ItemDecision:
		return it.Ref + ": " + it.Title
	case governance.ItemPermission:
		return "PRM-" + it.Ref + ": " + it.Title
	}
	return it.Title
}

// sessionName is a session's title, or its id when it has none.
func sessionName(it governance.AttentionItem) string {
	if it.SessionTitle != "" {
		return it.SessionTitle
	}
	return it.Session
}

// boolAttr is an ARIA state: "true" or "false".
func boolAttr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// streamAttrs connect a signed-in person's page to the push stream of
// Attention changes (htmx's SSE extension), from the queue as this page
// saw it. The stream's "closed" event (the person opened more streams
// than the server holds for one person, and this one was the oldest)
// closes it: the page polls instead of reconnecting, until it is hidden
// and shown again.
func streamAttrs(p Page) templ.Attributes {
	if p.Viewer == nil {
		return templ.Attributes{}
	}
	return templ.Attributes{"hx-ext": "sse", "sse-connect": "/attention/stream?since=" + url.QueryEscape(p.Since),
		"sse-close": "closed"}
}

// outcomeURL is where an item's outcome is read once it leaves the queue:
// what was done to it, by whom, when (204 while it still waits).
func outcomeURL(kind, session, ref string) string {
	return "/attention/items/" + url.PathEscape(kind) + "/" + url.PathEscape(session) + "/" + url.PathEscape(ref) + "/outcome"
}

// GoneID is the element on an item's line and page that says what became
// of it once it left the queue (another lead acted, or a stale submit).
func GoneID(kind, session, ref string) string { return ItemElementID(kind, session, ref) + "-gone" }

// OutcomeSentence says what became of an item, for the person me:
// "DEC-014 was resolved by ada@example.com 2 min ago: Keep it." or "You
// resolved DEC-014 just now: Keep it."
func OutcomeSentence(o governance.Outcome, now time.Time, me string) string {
	label := o.Label
	if label != "" && label[0] >= 'a' && label[0] <= 'z' {
		label = string(label[0]-'a'+'A') + label[1:]
	}
	var s string
	switch {
	case o.By != "" && o.By == me:
		s = "You " + o.Verb + " " + o.Label
	case o.By != "":
		s = label + " was " + o.Verb + " by " + o.By
	case o.Verb == "moved on":
		s = label + " moved on: its agent reported progress"
	default:
		s = label + " was " + o.Verb
	}
	if !o.At.IsZero() {
		s += " " + Age(now, o.At)
	}
	if o.Answer != "" {
		s += ": " + o.Answer
	}
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// questionPreview is an item's question (or detail) cut to fit on its
// line; the whole of it is shown when the line is opened.
func questionPreview(it governance.AttentionItem) string {
	q := it.Question
	if q == "" && (it.Kind == governance.ItemPlan || it.Kind == governance.ItemTask || it.Kind == governance.ItemRemediation) {
		q = it.Detail
	}
	const n = 120
	if r := []rune(q); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return q
}

// acceptInstruction is the instruction an "Accept proposal" form starts
// with: what was typed, after a failed submit, or else an instruction
// that takes the proposal up (the resolution carries its words), editable
// before sending.
func acceptInstruction(it governance.AttentionItem, f ItemForm) string {
	if f.Values["accepted"] != "" {
		return f.Values["instruction"]
	}
	return "Go ahead as you proposed."
}

// snoozedBy reports whether the person me snoozed the item.
func snoozedBy(it governance.AttentionItem, me string) bool {
	for _, s := range it.Snoozes {
		if s.By == me {
			return true
		}
	}
	return false
}

// claimedSince is how long ago an item was claimed, in words.
func claimedSince(it governance.AttentionItem, now time.Time) string {
	if it.ClaimedAt == nil {
		return ""
	}
	return Age(now, *it.ClaimedAt)
}

// Clock is a time of day as the console shows a near time: 15:04 UTC, with
// the date when it is not today.
func Clock(t time.Time) string {
	return t.UTC().Format("Jan 2 15:04 UTC")
}
