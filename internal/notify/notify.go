// Package notify tells people outside the console what needs them: it
// turns the events a write records on a session's timeline into
// notifications, writes one to the outbox for each webhook endpoint that
// subscribes to it, inside the same transaction as their cause, and sends
// the outbox (Sender): Slack-shaped JSON with a deep link into the
// console, signed with the endpoint's secret, retried with backoff for a
// day.
//
// The mapping from a timeline event to a notification is in one place,
// here (causeOf); governance calls Enqueue at the end of every write
// transaction and the ledger for each event it records.
package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
)

// The notification events an endpoint may subscribe to.
const (
	// AttentionCreated: a new item in the Attention view (a gate opened,
	// a plan waiting on a high-risk mission, a session paused, a run's
	// question, a permission prompt, a required remediation, a blocked
	// task, a critical violation).
	AttentionCreated = "attention.created"
	// DecisionExpired: a gate stayed open past its mission's gate_ttl.
	DecisionExpired = "decision.expired"
	// HardStop: a critical policy violation opened; the session's agent
	// is stopped until a person clears it.
	HardStop = "hard_stop"
)

// TestEvent is the event of a test notification an admin sends to check
// an endpoint (TestBody); nothing subscribes to it.
const TestEvent = "webhook.test"

// Events are the notification events, in the order forms list them.
var Events = []string{AttentionCreated, DecisionExpired, HardStop}

// Timeline event kinds that cause notifications and exist for them: the
// services that record them name them by these constants.
const (
	// KindViolationDetected is recorded for each violation a change
	// report opens; its ref is the violation's id.
	KindViolationDetected = "violation.detected"
	// KindDecisionExpired is recorded once per gate that expired
	// unanswered; its ref is the gate's, its detail the question.
	KindDecisionExpired = "decision.expired"
)

// Attention item kinds, as the console's item pages name them (governance
// defines the same names: a test holds them together).
const (
	itemDecision    = "decision"
	itemPlan        = "plan"
	itemPaused      = "paused"
	itemAsk         = "ask"
	itemViolation   = "violation"
	itemRemediation = "remediation"
	itemPermission  = "permission"
	itemTask        = "task"
)

// Event is one line a write recorded on a session's timeline: what may
// cause a notification.
type Event struct {
	Session string
	At      string // as stored (db.FormatTime)
	Actor   string
	Kind    string
	Ref     string
	Detail  string
}

// Notifier writes notifications to the outbox. It knows the console's
// public address, for the deep links, set when it is made. A nil
// *Notifier writes deep links without an address.
type Notifier struct {
	base string
}

// NewNotifier returns a notifier whose deep links start with publicURL
// (e.g. https://madebook.example.com); "" leaves them relative.
func NewNotifier(publicURL string) *Notifier {
	return &Notifier{base: strings.TrimRight(publicURL, "/")}
}

// PublicURL is the address deep links start with.
func (n *Notifier) PublicURL() string {
	if n == nil {
		return ""
	}
	return n.base
}

// item names an Attention item: what a deep link opens.
type item struct{ kind, session, ref string }

// note is one notification before it is addressed: the events it is, in
// order of precedence (an endpoint subscribed to several gets the first
// it subscribes to, once), the item it is about, and what it says.
type note struct {
	events []string
	item   item
	at     string
	// headline is the bold first words; lines are what follows, one per
	// line (several when causes of one transaction are merged).
	headline string
	lines    []string
}

// Enqueue writes the notifications the events cause to the outbox through
// q, in the caller's transaction: one row per endpoint subscribed to
// each. Events that cause none cost no query. Several critical
// violations one write opens on one session are one HARD_STOP.
func (n *Notifier) Enqueue(ctx context.Context, q db.Querier, evs []Event) error {
	var notes []note
	for _, ev := range evs {
		nt, ok, err := causeOf(ctx, q, ev)
		if err != nil {
			return fmt.Errorf("notify %s: %w", ev.Kind, err)
		}
		if !ok {
			continue
		}
		notes = append(notes, nt)
	}
	notes = merge(notes)
	if len(notes) == 0 {
		return nil
	}
	hooks, err := q.ListWebhookSubscriptions(ctx)
	if err != nil {
		return fmt.Errorf("notify: list endpoints: %w", err)
	}
	if len(hooks) == 0 {
		return nil
	}
	sessions := map[string]db.GetSessionRow{}
	for _, nt := range notes {
		s, ok := sessions[nt.item.session]
		if !ok {
			if s, err = q.GetSession(ctx, nt.item.session); err != nil {
				return fmt.Errorf("notify: load session %s: %w", nt.item.session, err)
			}
			sessions[nt.item.session] = s
		}
		bodies := map[string]string{}
		for _, h := range hooks {
			c := db.StoredRow("webhooks", h.ID)
			subscribed := c.List("events", h.Events)
			if err := c.Err(); err != nil {
				return err
			}
			i := slices.IndexFunc(nt.events, func(e string) bool { return slices.Contains(subscribed, e) })
			if i < 0 {
				continue
			}
			event := nt.events[i]
			body, ok := bodies[event]
			if !ok {
				if body, err = n.body(event, nt, s); err != nil {
					return err
				}
				bodies[event] = body
			}
			if _, err := q.AddOutbox(ctx, db.AddOutboxParams{WebhookID: h.ID, Event: event, Payload: body, CreatedAt: nt.at}); err != nil {
				return fmt.Errorf("notify: write the outbox: %w", err)
			}
		}
	}
	return nil
}

// merge makes one notification of each session's HARD_STOP in one write:
// the critical violations one change report opens, and the required
// remediations requested with them, are one cause. Every other
// notification stands alone.
func merge(notes []note) []note {
	stops := map[string]int{} // session → index of its violation note
	drop := make([]bool, len(notes))
	for i, nt := range notes {
		if nt.item.kind != itemViolation {
			continue
		}
		j, ok := stops[nt.item.session]
		if !ok {
			stops[nt.item.session] = i
			continue
		}
		notes[j].lines = append(notes[j].lines, nt.lines...)
		notes[j].headline = fmt.Sprintf("HARD_STOP: %d critical violations", len(notes[j].lines))
		drop[i] = true
	}
	for i, nt := range notes {
		if j, ok := stops[nt.item.session]; ok && nt.item.kind == itemRemediation {
			notes[j].lines = append(notes[j].lines, "Required remediation: "+strings.Join(nt.lines, " "))
			drop[i] = true
		}
	}
	out := notes[:0]
	for i, nt := range notes {
		if !drop[i] {
			out = append(out, nt)
		}
	}
	return out
}

// causeOf maps one timeline event to the notification it causes, if any:
// the one place that says which events notify. It reads through q what
// the event itself does not say (a violation's severity, a remediation's,
// the id of the permission prompt just opened).
func causeOf(ctx context.Context, q db.Querier, ev Event) (note, bool, error) {
	nt := note{at: ev.At, item: item{session: ev.Session, ref: ev.Ref}, events: []string{AttentionCreated}}
	switch ev.Kind {
	case KindViolationDetected:
		id, err := strconv.ParseInt(ev.Ref, 10, 64)
		if err != nil {
			return nt, false, fmt.Errorf("violation ref %q: %w", ev.Ref, err)
		}
		v, err := q.GetViolation(ctx, id)
		if err != nil {
			return nt, false, fmt.Errorf("load violation %d: %w", id, err)
		}
		if v.Severity != "critical" {
			return nt, false, nil // not an Attention item: a brief's REMEDIATE or a warning
		}
		nt.events = []string{HardStop, AttentionCreated}
		nt.item.kind, nt.headline = itemViolation, "HARD_STOP: critical violation"
		nt.lines = []string{fmt.Sprintf("%s: %s in %s:%d", v.Policy, v.Match, v.File, v.Line)}
		if v.BreachID.Valid { // a breach of a blocked scope: no policy, no line
			b, err := q.GetScopeBreach(ctx, v.BreachID.Int64)
			if err != nil {
				return nt, false, fmt.Errorf("load breach %d: %w", v.BreachID.Int64, err)
			}
			c := db.StoredRow("scope_breaches", b.ID)
			files := c.List("files", b.Files)
			if err := c.Err(); err != nil {
				return nt, false, err
			}
			nt.headline = "HARD_STOP: blocked scope breached"
			nt.lines = []string{fmt.Sprintf("%s: %s changed %s before its decision was made", v.Policy, v.Match, strings.Join(files, ", "))}
		}
	case KindDecisionExpired:
		nt.events = []string{DecisionExpired}
		nt.item.kind, nt.headline = itemDecision, "Gate "+ev.Ref+" expired unanswered"
		nt.lines = []string{ev.Detail}
	case "decision.opened":
		nt.item.kind, nt.headline = itemDecision, "Gate "+ev.Ref+" waits on a decision"
		nt.lines = []string{ev.Detail}
	case "plan.proposed": // recorded only when the plan waits for a lead (a high-risk mission)
		nt.item.kind, nt.item.ref, nt.headline = itemPlan, ev.Session, "A plan waits for approval"
		nt.lines = []string{ev.Detail}
	case "session.paused":
		nt.item.kind, nt.item.ref, nt.headline = itemPaused, ev.Session, "Session paused by "+strings.TrimPrefix(ev.Actor, "person:")
		nt.lines = []string{ev.Detail}
	case "ask.opened":
		nt.item.kind, nt.headline = itemAsk, "A run asks a question"
		nt.lines = []string{ev.Detail}
	case "remediation.requested":
		id, err := strconv.ParseInt(ev.Ref, 10, 64)
		if err != nil {
			return nt, false, fmt.Errorf("remediation ref %q: %w", ev.Ref, err)
		}
		r, err := q.GetRemediation(ctx, id)
		if err != nil {
			return nt, false, fmt.Errorf("load remediation %d: %w", id, err)
		}
		if r.Severity != "required" {
			return nt, false, nil // advisory: not an Attention item
		}
		nt.item.kind, nt.headline = itemRemediation, "A required remediation was requested"
		nt.lines = []string{ev.Detail}
	case "lifecycle.event":
		switch ev.Ref {
		case "permission.prompt.requested":
			open, err := q.ListOpenPermissionPrompts(ctx, ev.Session)
			if err != nil {
				return nt, false, fmt.Errorf("load permission prompts: %w", err)
			}
			if len(open) == 0 {
				return nt, false, errors.New("a permission prompt was requested but none is open")
			}
			p := open[len(open)-1]
			nt.item.kind, nt.item.ref, nt.headline = itemPermission, strconv.FormatInt(p.ID, 10), "A permission prompt waits"
			nt.lines = []string{p.Prompt}
		case "task.blocked":
			var payload struct {
				Task string `json:"task"`
			}
			if err := json.Unmarshal([]byte(ev.Detail), &payload); err != nil || payload.Task == "" {
				return nt, false, fmt.Errorf("task.blocked payload %q names no task", ev.Detail)
			}
			nt.item.kind, nt.item.ref, nt.headline = itemTask, payload.Task, "Task "+payload.Task+" is blocked"
		default:
			return nt, false, nil
		}
	default:
		return nt, false, nil
	}
	return nt, true, nil
}

// Payload is the JSON body of a notification: Slack's incoming-webhook
// shape (text, and blocks for the rich version), with a madebook object
// for receivers that are programs.
type Payload struct {
	Text     string  `json:"text"`
	Blocks   []Block `json:"blocks"`
	Madebook Meta    `json:"madebook"`
}

// Block is a Slack block: a section of mrkdwn text.
type Block struct {
	Type string    `json:"type"`
	Text BlockText `json:"text"`
}

// BlockText is a block's text.
type BlockText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Meta is what a program needs of a notification.
type Meta struct {
	Event   string `json:"event"`
	Kind    string `json:"kind"` // the Attention item's kind
	Ref     string `json:"ref"`
	Session string `json:"session"`
	Mission string `json:"mission"`
	Agent   string `json:"agent"`
	Link    string `json:"link"`
	At      string `json:"at"`
}

// maxLine is the most characters of one line of a notification's text.
const maxLine = 300

// body renders the notification's JSON for one event.
func (n *Notifier) body(event string, nt note, s db.GetSessionRow) (string, error) {
	link := n.PublicURL() + "/attention/items/" + url.PathEscape(nt.item.kind) + "/" + url.PathEscape(nt.item.session) +
		"/" + url.PathEscape(nt.item.ref)
	where := fmt.Sprintf("session %s (%s), agent %s, mission %s", s.ID, clip(s.Title), s.Agent, s.MissionSlug)
	var plain, rich strings.Builder
	plain.WriteString(escape(nt.headline + " on " + where))
	fmt.Fprintf(&rich, "*%s*\n%s", escape(nt.headline), escape(where))
	for _, l := range nt.lines {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		plain.WriteString("\n" + escape(clip(l)))
		rich.WriteString("\n>" + escape(clip(l)))
	}
	fmt.Fprintf(&rich, "\n<%s|Open in Madebook>", link)
	// Slack's control characters are escaped already: JSON's escaping of
	// them for HTML would only make the body harder to read.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Payload{Text: plain.String(),
		Blocks: []Block{{Type: "section", Text: BlockText{Type: "mrkdwn", Text: rich.String()}}},
		Madebook: Meta{Event: event, Kind: nt.item.kind, Ref: nt.item.ref, Session: s.ID, Mission: s.MissionSlug, Agent: s.Agent,
			Link: link, At: nt.at}}); err != nil {
		return "", fmt.Errorf("notify: encode: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// TestBody is the JSON of a test notification: Slack-shaped like every
// other, event TestEvent, saying who sent it at (as stored:
// db.FormatTime), and linking to the console's notifications page.
func (n *Notifier) TestBody(by, at string) (string, error) {
	link := n.PublicURL() + "/admin/webhooks"
	headline := "Test notification from Madebook"
	line := "Sent by " + by + " to check this endpoint: nothing needs you."
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Payload{Text: escape(headline + "\n" + line),
		Blocks: []Block{{Type: "section", Text: BlockText{Type: "mrkdwn",
			Text: fmt.Sprintf("*%s*\n%s\n<%s|Open in Madebook>", escape(headline), escape(line), link)}}},
		Madebook: Meta{Event: TestEvent, Link: link, At: at}}); err != nil {
		return "", fmt.Errorf("notify: encode: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// escape makes text safe in Slack's mrkdwn: &, < and > are its control
// characters.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// clip keeps one line of text to maxLine characters.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxLine {
		return s
	}
	r := []rune(s)
	return string(r[:maxLine-1]) + "…"
}

// nullString is s as a nullable column.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
