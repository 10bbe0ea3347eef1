package governance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
)

// The kinds of Attention item.
const (
	ItemDecision = "decision" // an open gate: DECISION_REQUIRED
	ItemPlan     = "plan"     // a plan waiting on a high-risk mission: BLOCKED
	ItemPaused   = "paused"   // a session a person paused: BLOCKED
	ItemAsk      = "ask"      // a run parked on a question: a person picks an option
	// ItemViolation is an open critical violation: HARD_STOP until a
	// person clears it. Its ref is the violation's id.
	ItemViolation = "violation"
	// ItemRemediation is an open required remediation: REMEDIATE until it
	// is closed. Its ref is the remediation's id.
	ItemRemediation = "remediation"
	// ItemPermission is a permission prompt waiting on a person: a person
	// picks an option. Its ref is the prompt's id.
	ItemPermission = "permission"
	// ItemTask is a task its agent reported blocked, until the task
	// progresses, completes or fails. Its ref is the agent's task id.
	ItemTask = "task"
)

// AttentionService lists what people must act on.
type AttentionService struct{ *core }

// AskOption is one numbered answer to a parked run's question.
type AskOption struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

// AttentionItem is one thing a person must act on.
type AttentionItem struct {
	Kind  string         `json:"kind"`
	State protocol.State `json:"state"`
	// Ref is the gate's reference for a decision; the id of the ask,
	// violation, remediation or permission prompt; the agent's task id for
	// a blocked task; the session's id otherwise.
	Ref          string    `json:"ref"`
	Session      string    `json:"session"`
	SessionTitle string    `json:"session_title"`
	Agent        string    `json:"agent"`
	Mission      string    `json:"mission"`
	MissionTitle string    `json:"mission_title"`
	Title        string    `json:"title"`
	Question     string    `json:"question,omitempty"`
	Proposal     string    `json:"proposal,omitempty"`
	Detail       string    `json:"detail,omitempty"`
	BlockedScope []string  `json:"blocked_scope"`
	AllowedScope []string  `json:"allowed_scope"`
	OpenedAt     time.Time `json:"opened_at"`
	// Plan is the plan waiting for approval, for plan items.
	Plan *plan.Plan `json:"plan,omitempty"`
	// By is who paused the session, for paused items.
	By string `json:"by,omitempty"`
	// Run and Options are the parked run and the answers to its question,
	// for ask items; Options are a permission prompt's too.
	Run     string      `json:"run,omitempty"`
	Options []AskOption `json:"options,omitempty"`
	// Files are the files a violation was found in, a remediation or a
	// permission prompt names.
	Files []string `json:"files,omitempty"`
}

// List lists everything a person must act on, most severe first, then
// oldest first. Anyone signed in may read it.
func (s *AttentionService) List(ctx context.Context) ([]AttentionItem, error) {
	var items []AttentionItem
	err := s.store.Read(ctx, func(q db.Querier) error {
		pauses, err := q.ListAttentionPauses(ctx)
		if err != nil {
			return err
		}
		for _, p := range pauses {
			c := db.StoredRow("sessions", p.SessionID)
			detail := "Paused"
			if p.PausedBy != "" {
				detail += " by " + p.PausedBy
			}
			if p.PauseReason != "" {
				detail += ": " + p.PauseReason
			}
			items = append(items, AttentionItem{Kind: ItemPaused, State: protocol.Blocked, Ref: p.SessionID,
				Session: p.SessionID, SessionTitle: p.SessionTitle, Agent: p.Agent, Mission: p.MissionSlug,
				MissionTitle: p.MissionTitle, Title: "Session paused", Detail: detail, By: p.PausedBy,
				BlockedScope: []string{protocol.ScopeAllSessionWork}, AllowedScope: []string{},
				OpenedAt: c.NullTime("paused_at", p.PausedAt)})
			if err := c.Err(); err != nil {
				return err
			}
		}
		plans, err := q.ListAttentionPlans(ctx)
		if err != nil {
			return err
		}
		for _, p := range plans {
			c := db.StoredRow("plans", p.ID)
			var body plan.Plan
			c.JSON("body", p.Body, &body)
			items = append(items, AttentionItem{Kind: ItemPlan, State: protocol.Blocked, Ref: p.SessionID,
				Session: p.SessionID, SessionTitle: p.SessionTitle, Agent: p.Agent, Mission: p.MissionSlug,
				MissionTitle: p.MissionTitle, Title: "Plan waiting for approval", Detail: p.Summary, Plan: &body,
				BlockedScope: []string{protocol.ScopeAnyCodeChange},
				AllowedScope: []string{protocol.ScopeReadRepository, protocol.ScopeRevisePlan},
				OpenedAt:     c.Time("proposed_at", p.ProposedAt)})
			if err := c.Err(); err != nil {
				return err
			}
		}
		asks, err := q.ListOpenAsks(ctx)
		if err != nil {
			return err
		}
		for _, a := range asks {
			c := db.StoredRow("asks", a.ID)
			var opts map[string]string
			c.JSON("options", a.Options, &opts)
			item := AttentionItem{Kind: ItemAsk, State: protocol.DecisionRequired, Ref: a.ID,
				Session: a.SessionID, SessionTitle: a.SessionTitle, Agent: a.Agent, Mission: a.MissionSlug,
				MissionTitle: a.MissionTitle, Title: "Run " + a.RunName + " is parked on a question", Question: a.Prompt,
				Run: a.RunID, BlockedScope: []string{}, AllowedScope: []string{}, OpenedAt: c.Time("created_at", a.CreatedAt)}
			item.Options = askOptions(opts)
			if err := c.Err(); err != nil {
				return err
			}
			items = append(items, item)
		}
		violations, err := q.ListAttentionViolations(ctx)
		if err != nil {
			return err
		}
		for _, v := range violations {
			c := db.StoredRow("violations", v.ID)
			where := v.File
			if v.Line > 0 {
				where = fmt.Sprintf("%s:%d", v.File, v.Line)
			}
			items = append(items, AttentionItem{Kind: ItemViolation, State: protocol.HardStop, Ref: strconv.FormatInt(v.ID, 10),
				Session: v.SessionID, SessionTitle: v.SessionTitle, Agent: v.Agent, Mission: v.MissionSlug,
				MissionTitle: v.MissionTitle, Title: v.Policy + " was violated by " + v.Match,
				Detail: "Found in " + where + ". The agent is stopped until a person clears it.", Files: []string{v.File},
				BlockedScope: []string{protocol.ScopeAllWork}, AllowedScope: []string{},
				OpenedAt: c.Time("detected_at", v.DetectedAt)})
			if err := c.Err(); err != nil {
				return err
			}
		}
		rems, err := q.ListAttentionRemediations(ctx)
		if err != nil {
			return err
		}
		for _, r := range rems {
			c := db.StoredRow("remediations", r.ID)
			item := AttentionItem{Kind: ItemRemediation, State: protocol.Remediate, Ref: strconv.FormatInt(r.ID, 10),
				Session: r.SessionID, SessionTitle: r.SessionTitle, Agent: r.Agent, Mission: r.MissionSlug,
				MissionTitle: r.MissionTitle, Title: "Required remediation", Detail: r.Instruction, By: r.RequestedBy,
				Files: c.List("files", r.Files), BlockedScope: []string{}, AllowedScope: []string{}, OpenedAt: c.Time("created_at", r.CreatedAt)}
			if err := c.Err(); err != nil {
				return err
			}
			items = append(items, item)
		}
		prompts, err := q.ListAttentionPermissions(ctx)
		if err != nil {
			return err
		}
		for _, p := range prompts {
			c := db.StoredRow("permission_prompts", p.ID)
			var opts map[string]string
			c.JSON("options", p.Options, &opts)
			paths := c.List("paths", p.Paths)
			blocked := slices.Clone(paths)
			title := "Permission asked"
			if p.Tool != "" {
				blocked = append([]string{protocol.ToolScope(p.Tool)}, blocked...)
				title = "Permission asked to use " + p.Tool
			}
			item := AttentionItem{Kind: ItemPermission, State: protocol.DecisionRequired, Ref: strconv.FormatInt(p.ID, 10),
				Session: p.SessionID, SessionTitle: p.SessionTitle, Agent: p.Agent, Mission: p.MissionSlug,
				MissionTitle: p.MissionTitle, Title: title, Question: p.Prompt, Options: askOptions(opts), Files: paths,
				BlockedScope: blocked, AllowedScope: []string{}, OpenedAt: c.Time("requested_at", p.RequestedAt)}
			if err := c.Err(); err != nil {
				return err
			}
			items = append(items, item)
		}
		tasks, err := q.ListAttentionBlockedTasks(ctx)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			c := db.StoredRow("tasks", t.SessionID+"/"+t.Task)
			items = append(items, AttentionItem{Kind: ItemTask, State: protocol.ContinueWithWarning, Ref: t.Task,
				Session: t.SessionID, SessionTitle: t.SessionTitle, Agent: t.Agent, Mission: t.MissionSlug,
				MissionTitle: t.MissionTitle, Title: "Task " + t.Task + " is blocked",
				Detail:       "The agent reported this task blocked. It stays here until the task progresses, completes or fails; pause the session or ask for a remediation from its page if it needs a person.",
				BlockedScope: []string{}, AllowedScope: []string{}, OpenedAt: c.Time("updated_at", t.UpdatedAt)})
			if err := c.Err(); err != nil {
				return err
			}
		}
		decisions, err := q.ListAttentionDecisions(ctx)
		if err != nil {
			return err
		}
		for _, d := range decisions {
			c := db.StoredRow("decisions", d.Ref)
			items = append(items, AttentionItem{Kind: ItemDecision, State: protocol.DecisionRequired, Ref: d.Ref,
				Session: d.SessionID, SessionTitle: d.SessionTitle, Agent: d.Agent, Mission: d.MissionSlug,
				MissionTitle: d.MissionTitle, Title: d.Title, Question: d.Question, Proposal: d.Proposal,
				BlockedScope: c.List("blocked_scope", d.BlockedScope), AllowedScope: c.List("allowed_scope", d.AllowedScope),
				OpenedAt: c.Time("opened_at", d.OpenedAt)})
			if err := c.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("attention: %w", err)
	}
	slices.SortStableFunc(items, func(a, b AttentionItem) int {
		if a.State != b.State {
			return int(b.State) - int(a.State)
		}
		if c := a.OpenedAt.Compare(b.OpenedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Ref, b.Ref)
	})
	if items == nil {
		items = []AttentionItem{}
	}
	return items, nil
}

// Count is how many items List lists, counted in one query.
func (s *AttentionService) Count(ctx context.Context) (int, error) {
	n, err := s.store.Reader().CountAttention(ctx)
	if err != nil {
		return 0, fmt.Errorf("attention count: %w", err)
	}
	return int(n), nil
}
