package auth

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/errs"
)

// The states of a credential, as lists show them.
const (
	StateActive  = "active"
	StateExpired = "expired"
	StateRevoked = "revoked"
)

// UseResolution is how precisely a credential's last use is kept: it is
// written at most once in this long, so that authenticating stays a read.
const UseResolution = time.Minute

// Key is an agent key as an admin sees it. Its secret is never kept.
type Key struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Prefix is the secret's first characters ("mbk_" and six more; ""
	// for a key made before they were kept).
	Prefix    string    `json:"prefix"`
	CreatedAt time.Time `json:"created_at"`
	// CreatedBy is the email of the person who created the key ("" for a
	// key made from the command line): they never approve its work.
	CreatedBy string `json:"created_by"`
	// ExpiresAt is when the key stops working (nil: when it is revoked).
	ExpiresAt *time.Time `json:"expires_at"`
	// LastUsedAt is when it last authenticated, to the minute (nil: never).
	LastUsedAt *time.Time `json:"last_used_at"`
	// RevokedAt is when the key was revoked (nil: it was not).
	RevokedAt *time.Time `json:"revoked_at"`
	// State is active, expired or revoked.
	State string `json:"state"`
}

// Revoked reports whether the key was revoked.
func (k Key) Revoked() bool { return k.RevokedAt != nil }

// Token is a personal API token as its owner, or an admin, sees it. Its
// secret is never kept.
type Token struct {
	ID     int64 `json:"id"`
	UserID int64 `json:"-"`
	// Owner is the email of the person the token acts as.
	Owner string `json:"owner"`
	Name  string `json:"name"`
	// Prefix is the secret's first characters ("mbt_" and six more; ""
	// for a token made before they were kept).
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// State is active, expired or revoked.
	State string `json:"state"`
}

// stateOf is a credential's state at now.
func stateOf(revoked, expires *time.Time, now time.Time) string {
	switch {
	case revoked != nil:
		return StateRevoked
	case expires != nil && !now.Before(*expires):
		return StateExpired
	}
	return StateActive
}

// credentialKind tells agent keys and personal tokens apart.
type credentialKind uint8

const (
	agentKey credentialKind = iota + 1
	personalToken
)

// credential names one agent key or personal token.
type credential struct {
	kind credentialKind
	id   int64
}

func (c credential) table() string {
	if c.kind == agentKey {
		return "agent_keys"
	}
	return "api_tokens"
}

func (c credential) what() string {
	if c.kind == agentKey {
		return "agent key"
	}
	return "personal token"
}

// usable returns nil if a credential whose stored revocation and expiry
// are these works at now, else credential_revoked or credential_expired
// (or a server fault for a stored time that does not parse).
func (c credential) usable(revoked, expires sql.NullString, now time.Time) error {
	if !revoked.Valid && !expires.Valid {
		return nil
	}
	row := db.StoredRow(c.table(), c.id)
	r, e := row.TimePtr("revoked_at", revoked), row.TimePtr("expires_at", expires)
	if err := row.Err(); err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	switch stateOf(r, e, now) {
	case StateRevoked:
		return errs.E(errs.Unauthorized, "credential_revoked", "This %s was revoked at %s: ask for a new one.",
			c.what(), r.Format(time.RFC3339))
	case StateExpired:
		return errs.E(errs.Unauthorized, "credential_expired", "This %s expired at %s: ask for a new one.",
			c.what(), e.Format(time.RFC3339))
	}
	return nil
}

// uses holds the last use of each credential that authenticated since the
// last flush, when its stored one was older than UseResolution: a request
// is a read, so the stamps are kept here and written in batches.
type uses struct {
	mu      sync.Mutex
	pending map[credential]time.Time
}

// seen notes that c authenticated at now, unless its stored last use is
// within UseResolution of it. A stored time that does not parse is
// written over.
func (u *uses) seen(c credential, stored sql.NullString, now time.Time) {
	if stored.Valid {
		if t, err := db.ParseTime(stored.String); err == nil && now.Sub(t) < UseResolution {
			return
		}
	}
	u.mu.Lock()
	if t, ok := u.pending[c]; !ok || now.After(t) {
		u.pending[c] = now
	}
	u.mu.Unlock()
}

// latest is the later of the stored last use and the pending one.
func (u *uses) latest(c credential, stored *time.Time) *time.Time {
	u.mu.Lock()
	t, ok := u.pending[c]
	u.mu.Unlock()
	if ok && (stored == nil || t.After(*stored)) {
		return &t
	}
	return stored
}

// FlushLastUsed writes the pending last uses in one transaction, each
// only forward (a later stored time wins). On failure they stay pending
// for the next flush.
func (s *Service) FlushLastUsed(ctx context.Context) error {
	s.uses.mu.Lock()
	batch := s.uses.pending
	s.uses.pending = make(map[credential]time.Time, len(batch))
	s.uses.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	order := slices.SortedFunc(maps.Keys(batch), func(a, b credential) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.id, b.id))
	})
	err := s.store.Write(ctx, func(q db.Querier) error {
		for _, c := range order {
			at := db.NullTime(batch[c])
			var err error
			if c.kind == agentKey {
				err = q.TouchAgentKey(ctx, db.TouchAgentKeyParams{ID: c.id, At: at})
			} else {
				err = q.TouchAPIToken(ctx, db.TouchAPITokenParams{ID: c.id, At: at})
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.uses.mu.Lock()
		for c, t := range batch {
			if p, ok := s.uses.pending[c]; !ok || t.After(p) {
				s.uses.pending[c] = t
			}
		}
		s.uses.mu.Unlock()
		return fmt.Errorf("flush credentials' last use: %w", err)
	}
	return nil
}

// RunLastUsed flushes the credentials' last uses every interval until ctx
// is done, then once more. Flush errors go to report.
func (s *Service) RunLastUsed(ctx context.Context, interval time.Duration, report func(error)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := s.FlushLastUsed(context.WithoutCancel(ctx)); err != nil {
				report(err)
			}
			return
		case <-tick.C:
			if err := s.FlushLastUsed(ctx); err != nil {
				report(err)
			}
		}
	}
}

// checkLifetime refuses a lifetime a new credential may not have: out of
// ParseLifetime's bounds (invalid_expiry), or none or longer than the
// server's maximum age (over_max_age).
func (s *Service) checkLifetime(d time.Duration) error {
	if d != 0 && (d < MinLifetime || d > MaxLifetime) {
		return errs.E(errs.Invalid, "invalid_expiry", "A credential lives at least 1m and at most 36500d, not %s.", FormatLifetime(d))
	}
	switch max := s.maxAge; {
	case max == 0:
		return nil
	case d == 0:
		return errs.E(errs.Invalid, "over_max_age",
			"This server gives credentials an expiry of at most %s (MADEBOOK_TOKEN_MAX_AGE): ask for one of %s or less (e.g. --expires %s).",
			FormatLifetime(max), FormatLifetime(max), FormatLifetime(max))
	case d > max:
		return errs.E(errs.Invalid, "over_max_age",
			"%s is longer than this server allows (MADEBOOK_TOKEN_MAX_AGE is %s): ask for %s or less.",
			FormatLifetime(d), FormatLifetime(max), FormatLifetime(max))
	}
	return nil
}

// expiry is when a credential made at now with the lifetime d stops
// working (nil for 0: never).
func expiry(now time.Time, d time.Duration) *time.Time {
	if d == 0 {
		return nil
	}
	t := now.Add(d).UTC()
	return &t
}

// nullTime stores an optional time.
func nullTime(t *time.Time) sql.NullString {
	if t == nil {
		return sql.NullString{}
	}
	return db.NullTime(*t)
}

// stamp is an optional time as the admin activity records it.
func stamp(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// keyState is what the admin activity records of an agent key: never its
// secret or hash.
func keyState(name, prefix string, expires *time.Time, revoked bool) activity.State {
	return activity.State{"name": name, "prefix": prefix, "expires_at": stamp(expires), "revoked": revoked}
}

// tokenState is what the admin activity records of a personal token:
// never its secret or hash.
func tokenState(id int64, name, prefix string, expires *time.Time, revoked bool) activity.State {
	return activity.State{"token_id": id, "name": name, "prefix": prefix, "expires_at": stamp(expires), "revoked": revoked}
}

// ListKeys returns every agent key, oldest first, never a secret. Errors:
// forbidden (by is neither an admin nor the command line).
func (s *Service) ListKeys(ctx context.Context, by Actor) ([]Key, error) {
	if err := by.RequireOperator("list the agent keys"); err != nil {
		return nil, err
	}
	rows, err := s.store.Reader().ListAgentKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list agent keys: %w", err)
	}
	now := s.now()
	out := make([]Key, 0, len(rows))
	for _, r := range rows {
		c := db.StoredRow("agent_keys", r.ID)
		k := Key{ID: r.ID, Name: r.Name, Prefix: r.Prefix, CreatedAt: c.Time("created_at", r.CreatedAt), CreatedBy: r.CreatedBy,
			ExpiresAt: c.TimePtr("expires_at", r.ExpiresAt), LastUsedAt: c.TimePtr("last_used_at", r.LastUsedAt),
			RevokedAt: c.TimePtr("revoked_at", r.RevokedAt)}
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("list agent keys: %w", err)
		}
		k.LastUsedAt = s.uses.latest(credential{agentKey, k.ID}, k.LastUsedAt)
		k.State = stateOf(k.RevokedAt, k.ExpiresAt, now)
		out = append(out, k)
	}
	return out, nil
}

// RevokeKey revokes an agent key: it stops authenticating on the next
// request, on every replica, and for good. Errors: forbidden (by is
// neither an admin nor the command line), key_not_found, already_revoked.
func (s *Service) RevokeKey(ctx context.Context, by Actor, keyID int64) (Key, error) {
	if err := by.RequireOperator("revoke an agent key"); err != nil {
		return Key{}, err
	}
	var k Key
	err := s.store.Write(ctx, func(q db.Querier) error {
		row, err := q.GetAgentKey(ctx, keyID)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "key_not_found", "There is no agent key %d.", keyID)
		} else if err != nil {
			return err
		}
		if row.RevokedAt.Valid {
			return errs.E(errs.Conflict, "already_revoked", "The agent key %q is already revoked.", row.Name)
		}
		now := s.now().UTC()
		if err := q.RevokeAgentKey(ctx, db.RevokeAgentKeyParams{ID: keyID, RevokedAt: db.NullTime(now)}); err != nil {
			return err
		}
		c := db.StoredRow("agent_keys", row.ID)
		k = Key{ID: row.ID, Name: row.Name, Prefix: row.Prefix, CreatedAt: c.Time("created_at", row.CreatedAt),
			ExpiresAt: c.TimePtr("expires_at", row.ExpiresAt), LastUsedAt: c.TimePtr("last_used_at", row.LastUsedAt),
			RevokedAt: &now, State: StateRevoked}
		if err := c.Err(); err != nil {
			return err
		}
		if row.CreatedBy.Valid {
			creator, err := q.GetUser(ctx, row.CreatedBy.Int64)
			if err != nil {
				return err
			}
			k.CreatedBy = creator.Email
		}
		k.LastUsedAt = s.uses.latest(credential{agentKey, k.ID}, k.LastUsedAt)
		return activity.Record(ctx, q, now, by.Who(), activity.KeyRevoke, keyTarget(k.ID, k.Name),
			keyState(k.Name, k.Prefix, k.ExpiresAt, false), keyState(k.Name, k.Prefix, k.ExpiresAt, true))
	})
	if err != nil {
		return Key{}, fmt.Errorf("revoke agent key %d: %w", keyID, err)
	}
	return k, nil
}

// ListTokens returns the personal tokens by may see, oldest first, never
// a secret: a person's own, or everyone's for an admin or the command
// line. Errors: forbidden (an agent key).
func (s *Service) ListTokens(ctx context.Context, by Actor) ([]Token, error) {
	var rows []db.ListAPITokensRow
	var err error
	switch {
	case by.IsAdmin() || by.IsCommandLine():
		rows, err = s.store.Reader().ListAPITokens(ctx)
	case by.IsPerson():
		var own []db.ListUserAPITokensRow
		own, err = s.store.Reader().ListUserAPITokens(ctx, by.UserID)
		for _, r := range own {
			rows = append(rows, db.ListAPITokensRow(r))
		}
	default:
		return nil, errs.E(errs.Forbidden, "forbidden", "Only a person can list personal tokens.")
	}
	if err != nil {
		return nil, fmt.Errorf("list personal tokens: %w", err)
	}
	now := s.now()
	out := make([]Token, 0, len(rows))
	for _, r := range rows {
		t, err := s.tokenFrom(r, now)
		if err != nil {
			return nil, fmt.Errorf("list personal tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// tokenFrom converts a stored token; an error names the row.
func (s *Service) tokenFrom(r db.ListAPITokensRow, now time.Time) (Token, error) {
	c := db.StoredRow("api_tokens", r.ID)
	t := Token{ID: r.ID, UserID: r.UserID, Owner: r.Email, Name: r.Name, Prefix: r.Prefix,
		CreatedAt: c.Time("created_at", r.CreatedAt), ExpiresAt: c.TimePtr("expires_at", r.ExpiresAt),
		LastUsedAt: c.TimePtr("last_used_at", r.LastUsedAt), RevokedAt: c.TimePtr("revoked_at", r.RevokedAt)}
	if err := c.Err(); err != nil {
		return Token{}, err
	}
	t.LastUsedAt = s.uses.latest(credential{personalToken, t.ID}, t.LastUsedAt)
	t.State = stateOf(t.RevokedAt, t.ExpiresAt, now)
	return t, nil
}

// RevokeToken revokes a personal token: it stops authenticating on the
// next request, on every replica, and for good. A person may revoke their
// own tokens, an admin (or the command line) anyone's. The admin activity
// records it (token.revoke), never the secret. Errors: forbidden (an
// agent key, or another person's token), token_not_found,
// already_revoked.
func (s *Service) RevokeToken(ctx context.Context, by Actor, tokenID int64) (Token, error) {
	if !by.IsPerson() && !by.IsCommandLine() {
		return Token{}, errs.E(errs.Forbidden, "forbidden", "Only a person can revoke a personal token.")
	}
	var t Token
	err := s.store.Write(ctx, func(q db.Querier) error {
		row, err := q.GetAPIToken(ctx, tokenID)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "token_not_found", "There is no personal token %d.", tokenID)
		} else if err != nil {
			return err
		}
		if row.UserID != by.UserID && !by.IsAdmin() && !by.IsCommandLine() {
			return errs.E(errs.Forbidden, "forbidden", "Personal token %d is not yours: only its owner or an admin can revoke it.", tokenID)
		}
		if row.RevokedAt.Valid {
			return errs.E(errs.Conflict, "already_revoked", "The personal token %d (%s) is already revoked.", row.ID, row.Name)
		}
		now := s.now().UTC()
		if err := q.RevokeAPIToken(ctx, db.RevokeAPITokenParams{ID: tokenID, RevokedAt: db.NullTime(now)}); err != nil {
			return err
		}
		if t, err = s.tokenFrom(db.ListAPITokensRow(row), now); err != nil {
			return err
		}
		t.RevokedAt, t.State = &now, StateRevoked
		return activity.Record(ctx, q, now, by.Who(), activity.TokenRevoke, userTarget(t.Owner),
			tokenState(t.ID, t.Name, t.Prefix, t.ExpiresAt, false), tokenState(t.ID, t.Name, t.Prefix, t.ExpiresAt, true))
	})
	if err != nil {
		return Token{}, fmt.Errorf("revoke personal token %d: %w", tokenID, err)
	}
	return t, nil
}
