package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
)

// riskBands are the bands whose gates a workspace may set, in order.
var riskBands = []string{change.BandLow, change.BandMedium, change.BandHigh, change.BandCritical}

func riskGateKey(band string) string { return "risk_gate." + band }

// RiskGates returns what a change needs before merge at each risk band:
// the workspace's setting, or change.DefaultGates where it set none.
func (s *PolicyService) RiskGates(ctx context.Context) (map[string]string, error) {
	return riskGates(ctx, s.core.store.Reader())
}

func riskGates(ctx context.Context, q db.Querier) (map[string]string, error) {
	gates := change.DefaultGates()
	for _, band := range riskBands {
		v, err := q.GetSetting(ctx, riskGateKey(band))
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("risk gates: %w", err)
		}
		gates[band] = v
	}
	return gates, nil
}

// gatesState is what the admin activity records of the risk gates.
func gatesState(gates map[string]string) activity.State {
	out := make(activity.State, len(gates))
	for band, gate := range gates {
		out[band] = gate
	}
	return out
}

// MaxRiskGate is the most characters of what a change needs before merge
// at one risk band.
const MaxRiskGate = input.Name

// RiskGates are the gates an admin sets, by risk band; an empty text means
// the band needs nothing.
type RiskGates map[string]string

// Validate returns the gates trimmed, or the first band that is unknown or
// whose gate is too long or holds a control character; the error names
// that band as its field. Errors: invalid_band, gate_too_long,
// invalid_characters.
func (g RiskGates) Validate() (RiskGates, error) {
	out := make(RiskGates, len(g))
	for band, gate := range g {
		if !slices.Contains(riskBands, band) {
			return nil, errs.E(errs.Invalid, "invalid_band", "%q is not a risk band: use %s.", band, strings.Join(riskBands, ", ")).In(band)
		}
		v, err := input.Optional("gate", gate, MaxRiskGate)
		if errs.CodeOf(err) == "invalid_characters" {
			return nil, errs.E(errs.Invalid, "invalid_characters", "The %s gate holds a control character: send text without one.", band).In(band)
		}
		if err != nil {
			return nil, errs.E(errs.Invalid, "gate_too_long", "The %s gate is %d characters; at most %d are allowed.", band,
				utf8.RuneCountInString(strings.TrimSpace(gate)), MaxRiskGate).In(band)
		}
		out[band] = v
	}
	return out, nil
}

// SetRiskGates sets the gates of the bands named (admin). Later change
// reports use them. Errors: forbidden, those of RiskGates.Validate.
func (s *PolicyService) SetRiskGates(ctx context.Context, actor auth.Actor, gates RiskGates) (map[string]string, error) {
	if err := actor.RequireAdmin("set the risk gates"); err != nil {
		return nil, err
	}
	gates, err := gates.Validate()
	if err != nil {
		return nil, err
	}
	var out map[string]string
	err = s.core.write(ctx, func(q db.Querier) error {
		was, err := riskGates(ctx, q)
		if err != nil {
			return err
		}
		for band, gate := range gates {
			if err := q.SetSetting(ctx, db.SetSettingParams{Key: riskGateKey(band), Value: gate}); err != nil {
				return err
			}
		}
		if out, err = riskGates(ctx, q); err != nil {
			return err
		}
		if before, after := gatesState(was), gatesState(out); activity.Changed(before, after) {
			return s.core.did(ctx, q, actor, activity.RiskGatesSet, "risk gates", before, after)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set risk gates: %w", err)
	}
	return out, nil
}
