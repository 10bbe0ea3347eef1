package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/errs"
)

// Console sign-in limits.
const (
	// IdleTimeout ends a console session nobody used for this long.
	IdleTimeout = 30 * time.Minute
	// AbsoluteTimeout ends a console session this long after sign-in.
	AbsoluteTimeout = 8 * time.Hour
	// touchEvery bounds how often a session's last use is written.
	touchEvery = time.Minute

	maxFailuresAccount = 5
	maxFailuresAddress = 20
	// maxFailuresKept bounds the failures remembered: the newest are kept,
	// so that callers who choose ever new emails and addresses cannot grow
	// the table without end.
	maxFailuresKept = 50_000
	// maxKey bounds the email stored as a limit's key (the longest
	// address RFC 5321 allows).
	maxKey = 254
)

// SignInWindow is how long a failed sign-in counts against its account
// and its address: the wait a refused sign-in is told (Retry-After).
const SignInWindow = 15 * time.Minute

// addressKey is the key of a client address for its sign-in limit: an
// IPv4 address itself, an IPv6 address its /64 (one subscriber's
// network, which holds more addresses than any limit could count).
func addressKey(address string) string {
	ip := net.ParseIP(address)
	if ip == nil || ip.To4() != nil {
		return address
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// WebSession is a signed-in console session.
type WebSession struct {
	User User
	// CSRF is the token every state-changing form and htmx request of this
	// session must carry.
	CSRF string
}

var errNoSession = errs.E(errs.Unauthorized, "signed_out", "Sign in to continue.")

// Login checks an email and password and starts a console session. It
// returns the session's secret token (for the cookie). Failures are
// limited two ways in 15 minutes: 5 per account (whatever addresses they
// come from, so one account cannot be guessed at from many) and 20 per
// client address (an IPv6 address counts as its /64; so one client
// cannot spray a password over many accounts). Errors:
// too_many_attempts, invalid_credentials.
func (s *Service) Login(ctx context.Context, email, password, address string) (string, WebSession, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	// The limit's key is text either engine stores (PostgreSQL's text holds
	// no NUL and only UTF-8): such bytes become U+FFFD, which no account's
	// email holds.
	key := strings.ReplaceAll(strings.ToValidUTF8(email, "\uFFFD"), "\x00", "\uFFFD")
	if len(key) > maxKey {
		n := maxKey
		for n > 0 && !utf8.RuneStart(key[n]) {
			n-- // cut between characters, never inside one
		}
		key = key[:n]
	}
	address = addressKey(address)
	now := s.now()
	since := db.FormatTime(now.Add(-SignInWindow))
	n, err := s.store.Reader().CountLoginFailures(ctx, db.CountLoginFailuresParams{Email: key, Address: address, Since: since})
	if err != nil {
		return "", WebSession{}, fmt.Errorf("login: %w", err)
	}
	if n.ByEmail >= maxFailuresAccount {
		return "", WebSession{}, errs.E(errs.TooMany, "too_many_attempts",
			"Too many failed sign-ins to this account. Wait 15 minutes and try again, or ask an admin to check the account.")
	}
	if n.ByAddress >= maxFailuresAddress {
		return "", WebSession{}, errs.E(errs.TooMany, "too_many_attempts",
			"Too many failed sign-ins from your address. Wait 15 minutes and try again.")
	}
	u, err := s.CheckPassword(ctx, email, password)
	if errs.CodeOf(err) == "invalid_credentials" {
		if werr := s.store.Write(ctx, func(q db.Querier) error {
			if err := q.DeleteOldLoginFailures(ctx, since); err != nil {
				return err
			}
			if err := q.AddLoginFailure(ctx, db.AddLoginFailureParams{Email: key, Address: address, At: db.FormatTime(now)}); err != nil {
				return err
			}
			return q.TrimLoginFailures(ctx, s.keepFailures)
		}); werr != nil {
			return "", WebSession{}, fmt.Errorf("login: %w", werr)
		}
		return "", WebSession{}, err
	} else if err != nil {
		return "", WebSession{}, err
	}
	token, hash, err := newSecret("")
	if err != nil {
		return "", WebSession{}, err
	}
	csrf, _, err := newSecret("")
	if err != nil {
		return "", WebSession{}, err
	}
	err = s.store.Write(ctx, func(q db.Querier) error {
		if err := q.ClearLoginFailures(ctx, key); err != nil {
			return err
		}
		if _, err := q.DeleteExpiredWebSessions(ctx, db.DeleteExpiredWebSessionsParams{
			CreatedBefore: db.FormatTime(now.Add(-AbsoluteTimeout)), SeenBefore: db.FormatTime(now.Add(-IdleTimeout))}); err != nil {
			return err
		}
		return q.CreateWebSession(ctx, db.CreateWebSessionParams{IDHash: hash, UserID: u.ID, CsrfToken: csrf, CreatedAt: db.FormatTime(now)})
	})
	if err != nil {
		return "", WebSession{}, fmt.Errorf("login: %w", err)
	}
	return token, WebSession{User: u, CSRF: csrf}, nil
}

// WebSession returns the console session a cookie token belongs to, and
// notes its use. Errors: signed_out (unknown, idle for 30 minutes, older
// than 8 hours, or its user disabled).
func (s *Service) WebSession(ctx context.Context, token string) (WebSession, error) {
	if token == "" {
		return WebSession{}, errNoSession
	}
	hash := hashSecret(token)
	row, err := s.store.Reader().GetWebSession(ctx, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return WebSession{}, errNoSession
	} else if err != nil {
		return WebSession{}, fmt.Errorf("web session: %w", err)
	}
	now := s.now()
	// The row's key is a hash of the cookie's secret: the error names its
	// user instead.
	c := db.StoredRow("web_sessions", fmt.Sprintf("of user %d", row.UserID))
	created, seen := c.Time("created_at", row.CreatedAt), c.Time("last_seen_at", row.LastSeenAt)
	if err := c.Err(); err != nil {
		return WebSession{}, fmt.Errorf("web session: %w", err)
	}
	if row.DisabledAt.Valid || now.Sub(created) > AbsoluteTimeout || now.Sub(seen) > IdleTimeout {
		if err := s.store.Write(ctx, func(q db.Querier) error { return q.DeleteWebSession(ctx, hash) }); err != nil {
			return WebSession{}, fmt.Errorf("end web session: %w", err)
		}
		return WebSession{}, errNoSession
	}
	if now.Sub(seen) >= touchEvery {
		if err := s.store.Write(ctx, func(q db.Querier) error {
			return q.TouchWebSession(ctx, db.TouchWebSessionParams{IDHash: hash, LastSeenAt: db.FormatTime(now)})
		}); err != nil {
			return WebSession{}, fmt.Errorf("touch web session: %w", err)
		}
	}
	return WebSession{User: User{ID: row.UserID, Email: row.Email, Role: Role(row.Role)}, CSRF: row.CsrfToken}, nil
}

// Logout ends one console session.
func (s *Service) Logout(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	if err := s.store.Write(ctx, func(q db.Querier) error { return q.DeleteWebSession(ctx, hashSecret(token)) }); err != nil {
		return fmt.Errorf("logout: %w", err)
	}
	return nil
}

// LogoutEverywhere ends every console session of the user and returns how
// many there were.
func (s *Service) LogoutEverywhere(ctx context.Context, userID int64) (int64, error) {
	var n int64
	err := s.store.Write(ctx, func(q db.Querier) error {
		var err error
		n, err = q.DeleteUserWebSessions(ctx, userID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("logout everywhere: %w", err)
	}
	return n, nil
}
