package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
)

// riskBands are the bands whose gates a workspace may set, in order.
var riskBands = []string{change.BandLow, change.BandMedium, change.BandHigh, change.BandCritical}

func riskGateKey(band string) string { return "risk_gate." + band }

// RiskGates returns what a change needs before merge at each risk band:
// the workspace's setting, or change.DefaultGates where it set none.
func (s *PolicyService) RiskGates(ctx context.Context) (map[string]string, error) {
	return riskGates(ctx, s.store.Reader())
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

// SetRiskGates sets the gates of the bands named (admin); an empty text
// means the band needs nothing. Later change reports use them. Errors:
// forbidden, invalid_band, gate_too_long.
func (s *PolicyService) SetRiskGates(ctx context.Context, actor auth.Actor, gates map[string]string) (map[string]string, error) {
	if err := actor.RequireAdmin("set the risk gates"); err != nil {
		return nil, err
	}
	for band, gate := range gates {
		known := false
		for _, b := range riskBands {
			known = known || b == band
		}
		if !known {
			return nil, errs.E(errs.Invalid, "invalid_band", "%q is not a risk band: use %s.", band, strings.Join(riskBands, ", "))
		}
		if len([]rune(gate)) > 200 {
			return nil, errs.E(errs.Invalid, "gate_too_long", "The %s gate is over 200 characters.", band)
		}
	}
	var out map[string]string
	err := s.write(ctx, func(q db.Querier) error {
		for band, gate := range gates {
			if err := q.SetSetting(ctx, db.SetSettingParams{Key: riskGateKey(band), Value: strings.TrimSpace(gate)}); err != nil {
				return err
			}
		}
		var err error
		out, err = riskGates(ctx, q)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set risk gates: %w", err)
	}
	return out, nil
}
