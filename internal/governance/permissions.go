package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/protocol"
)

// PermissionService answers the permission prompts agents' clients raise
// (seed 002's permission.prompt.requested): a person picks one of the
// prompt's options, and the agent's next brief delivers the answer once.
type PermissionService struct{ core *core }

// PermissionPrompt is a question an agent's client asked a person before
// using a tool, with the options it offers and, once answered, the option
// a person chose.
type PermissionPrompt struct {
	ID          int64       `json:"id"`
	Session     string      `json:"session"`
	Prompt      string      `json:"prompt"`
	Options     []AskOption `json:"options"`
	Tool        string      `json:"tool"`
	Paths       []string    `json:"paths"`
	RequestedAt time.Time   `json:"requested_at"`
	// Answer is the option chosen; empty while the prompt waits.
	Answer     string     `json:"answer,omitempty"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
	AnsweredBy string     `json:"answered_by,omitempty"`
	// DeliveredAt is when a brief first handed the answer to the agent.
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	// AckedAt is when the agent acknowledged the brief that delivered it.
	AckedAt *time.Time `json:"acked_at,omitempty"`
}

// permissionRef is how a prompt is named in reasons and the timeline.
func permissionRef(id int64) string { return fmt.Sprintf("PRM-%d", id) }

// openPrompt records the prompt a permission.prompt.requested event
// carries, inside q's transaction.
func openPrompt(ctx context.Context, q db.Querier, session string, ve validEvent, now time.Time) (PermissionPrompt, error) {
	options, err := json.Marshal(ve.ev.Options)
	if err != nil {
		return PermissionPrompt{}, fmt.Errorf("encode options: %w", err)
	}
	paths := ve.paths
	if paths == nil {
		paths = []string{}
	}
	encoded, err := json.Marshal(paths)
	if err != nil {
		return PermissionPrompt{}, fmt.Errorf("encode paths: %w", err)
	}
	row, err := q.CreatePermissionPrompt(ctx, db.CreatePermissionPromptParams{SessionID: session, Prompt: ve.ev.Prompt,
		Options: string(options), Tool: ve.tool, Paths: string(encoded), RequestedAt: db.FormatTime(now)})
	if err != nil {
		return PermissionPrompt{}, err
	}
	return promptFrom(row, "")
}

// promptFrom converts a permission_prompts row; answeredBy is the email of
// the person who answered it. An error names the row.
func promptFrom(r db.PermissionPrompt, answeredBy string) (PermissionPrompt, error) {
	c := db.StoredRow("permission_prompts", r.ID)
	var options map[string]string
	c.JSON("options", r.Options, &options)
	p := PermissionPrompt{ID: r.ID, Session: r.SessionID, Prompt: r.Prompt, Options: AskOptions(options), Tool: r.Tool,
		Paths: c.List("paths", r.Paths), RequestedAt: c.Time("requested_at", r.RequestedAt), Answer: r.Answer.String,
		AnsweredAt: c.TimePtr("answered_at", r.AnsweredAt), AnsweredBy: answeredBy,
		DeliveredAt: c.TimePtr("delivered_at", r.DeliveredAt), AckedAt: c.TimePtr("acked_at", r.AckedAt)}
	if err := c.Err(); err != nil {
		return PermissionPrompt{}, err
	}
	return p, nil
}

// AskOptions lists numbered options (an ask's or a permission prompt's) by key, in key order.
func AskOptions(options map[string]string) []AskOption {
	out := make([]AskOption, 0, len(options))
	for _, key := range slices.Sorted(maps.Keys(options)) {
		out = append(out, AskOption{Key: key, Label: options[key]})
	}
	return out
}

// promptFact is a waiting prompt as the protocol engine reads it.
func promptFact(p PermissionPrompt) protocol.PermissionPrompt {
	options := make(map[string]string, len(p.Options))
	for _, o := range p.Options {
		options[o.Key] = o.Label
	}
	return protocol.PermissionPrompt{ID: permissionRef(p.ID), Prompt: p.Prompt, Options: options, Tool: p.Tool,
		Paths: p.Paths, OpenedAt: p.RequestedAt}
}

// Answer records a person's answer to a waiting permission prompt, one of
// its options, as the event permission.prompt.resolved in the session's
// timeline; the agent's next brief delivers it once. id is the prompt's
// number or its reference (PRM-12). Errors: forbidden (not a lead),
// option_required, permission_not_found, unknown_option (with the
// options), already_answered.
func (s *PermissionService) Answer(ctx context.Context, actor auth.Actor, id, option string) (PermissionPrompt, error) {
	if err := actor.RequireLead("answer a permission prompt"); err != nil {
		return PermissionPrompt{}, err
	}
	option = strings.TrimSpace(option)
	if option == "" {
		return PermissionPrompt{}, errs.E(errs.Invalid, "option_required", "Choose one of the prompt's options.").In("option")
	}
	notFound := errs.E(errs.NotFound, "permission_not_found", "No permission prompt has the id %q.", id)
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.ToUpper(id), "PRM-"), 10, 64)
	if err != nil || n <= 0 {
		return PermissionPrompt{}, notFound
	}
	now := s.core.now()
	var out PermissionPrompt
	err = s.core.write(ctx, func(q db.Querier) error {
		row, err := q.GetPermissionPrompt(ctx, n)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound
		} else if err != nil {
			return err
		}
		p, err := promptFrom(row, "")
		if err != nil {
			return err
		}
		if p.AnsweredAt != nil {
			return errs.E(errs.Conflict, "already_answered", "%s was already answered: option %s.", permissionRef(n), p.Answer).
				With("answer", p.Answer)
		}
		label := ""
		for _, o := range p.Options {
			if o.Key == option {
				label = o.Label
			}
		}
		if label == "" {
			keys := make([]string, len(p.Options))
			for i, o := range p.Options {
				keys[i] = o.Key
			}
			return errs.E(errs.Invalid, "unknown_option", "%q is not one of the prompt's options (%s).", option, strings.Join(keys, ", ")).
				In("option").With("options", keys)
		}
		row, err = q.AnswerPermissionPrompt(ctx, db.AnswerPermissionPromptParams{ID: n, Answer: sql.NullString{String: option, Valid: true},
			AnsweredAt: db.NullTime(now), AnsweredBy: sql.NullInt64{Int64: actor.UserID, Valid: true}})
		if errors.Is(err, sql.ErrNoRows) { // answered meanwhile; unreachable in one writer
			return errs.E(errs.Conflict, "already_answered", "%s was already answered.", permissionRef(n))
		} else if err != nil {
			return err
		}
		detail, err := json.Marshal(map[string]string{"option": option, "label": label})
		if err != nil {
			return err
		}
		if err := s.core.event(ctx, q, row.SessionID, actor, now, "lifecycle.event", lifecycle.PermissionPromptResolved,
			string(detail)); err != nil {
			return err
		}
		out, err = promptFrom(row, actor.Email)
		return err
	})
	if err != nil {
		return PermissionPrompt{}, fmt.Errorf("answer permission prompt %s: %w", id, err)
	}
	return out, nil
}
