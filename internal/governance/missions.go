package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

// Mission is what a set of sessions is working towards.
type Mission struct {
	Slug      string    `json:"slug"`
	Title     string    `json:"title"`
	Text      string    `json:"text"`
	HighRisk  bool      `json:"high_risk"`
	Evidence  []string  `json:"evidence"`
	Contract  []Clause  `json:"contract"`
	CreatedAt time.Time `json:"created_at"`
}

// Clause is one term of a mission's contract.
type Clause struct {
	Kind  protocol.ClauseKind `json:"kind"`
	Value string              `json:"value"`
}

// MissionInput is what a lead gives to create a mission.
type MissionInput struct {
	Slug     string   `json:"slug"`
	Title    string   `json:"title"`
	Text     string   `json:"text"`
	HighRisk bool     `json:"high_risk"`
	Evidence []string `json:"evidence"`
	Contract []Clause `json:"contract"`
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// CreateMission creates a mission. Errors: forbidden (not a lead),
// invalid_slug, title_required, invalid_clause, slug_taken.
func (s *Service) CreateMission(ctx context.Context, actor auth.Actor, in MissionInput) (Mission, error) {
	if err := actor.RequireLead("create a mission"); err != nil {
		return Mission{}, err
	}
	m, err := validMission(in)
	if err != nil {
		return Mission{}, err
	}
	contract, err := json.Marshal(m.Contract)
	if err != nil {
		return Mission{}, fmt.Errorf("encode contract: %w", err)
	}
	var row db.Mission
	err = s.write(ctx, func(q db.Querier) error {
		if _, err := q.GetMissionBySlug(ctx, m.Slug); err == nil {
			return errs.E(errs.Conflict, "slug_taken", "A mission with the slug %q already exists.", m.Slug)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		row, err = q.CreateMission(ctx, db.CreateMissionParams{Slug: m.Slug, Title: m.Title, Text: m.Text, HighRisk: m.HighRisk,
			Evidence: encodeList(m.Evidence), Contract: string(contract),
			CreatedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}, CreatedAt: db.FormatTime(s.now())})
		return err
	})
	if err != nil {
		return Mission{}, fmt.Errorf("create mission %s: %w", m.Slug, err)
	}
	return missionFrom(row), nil
}

// ListMissions lists every mission by slug. Any person or agent may read them.
func (s *Service) ListMissions(ctx context.Context) ([]Mission, error) {
	rows, err := s.store.Reader().ListMissions(ctx)
	if err != nil {
		return nil, fmt.Errorf("list missions: %w", err)
	}
	out := make([]Mission, len(rows))
	for i, r := range rows {
		out[i] = missionFrom(r)
	}
	return out, nil
}

func validMission(in MissionInput) (Mission, error) {
	var m Mission
	if !slugPattern.MatchString(in.Slug) {
		return m, errs.E(errs.Invalid, "invalid_slug", "The slug %q must be 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit.", in.Slug)
	}
	var err error
	m.Slug, m.HighRisk = in.Slug, in.HighRisk
	if m.Title, err = required("title", in.Title, 200); err != nil {
		return m, err
	}
	if m.Text, err = optional("text", in.Text, 20000); err != nil {
		return m, err
	}
	if m.Evidence, err = cleanList("evidence", in.Evidence, 20); err != nil {
		return m, err
	}
	if len(in.Contract) > 50 {
		return m, errs.E(errs.Invalid, "too_many_entries", "contract has %d clauses; at most 50 are allowed.", len(in.Contract))
	}
	m.Contract = make([]Clause, 0, len(in.Contract))
	for i, c := range in.Contract {
		c.Value, err = required("clause_value", c.Value, 500)
		if err != nil {
			return m, errs.E(errs.Invalid, "invalid_clause", "Contract clause %d has no value.", i+1)
		}
		switch c.Kind {
		case protocol.ForbidPath, protocol.RequirePath, protocol.ForbidDependency:
		case protocol.MaxFilesChanged:
			if n, err := strconv.Atoi(c.Value); err != nil || n < 1 {
				return m, errs.E(errs.Invalid, "invalid_clause", "Contract clause %d: max_files_changed needs a positive whole number, not %q.", i+1, c.Value)
			}
		default:
			return m, errs.E(errs.Invalid, "invalid_clause", "Contract clause %d has kind %q: use forbid_path, require_path, forbid_dependency or max_files_changed.", i+1, c.Kind)
		}
		m.Contract = append(m.Contract, c)
	}
	return m, nil
}

func missionFrom(r db.Mission) Mission {
	m := Mission{Slug: r.Slug, Title: r.Title, Text: r.Text, HighRisk: r.HighRisk, Evidence: decodeList(r.Evidence),
		Contract: []Clause{}, CreatedAt: db.MustTime(r.CreatedAt)}
	if err := json.Unmarshal([]byte(r.Contract), &m.Contract); err != nil {
		panic(fmt.Errorf("stored contract of %s: %w", r.Slug, err))
	}
	return m
}
