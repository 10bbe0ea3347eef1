// Package auth is who may do what: people (admin, lead, viewer) with
// bcrypt passwords and personal API tokens, and agents with keys. Secrets
// are shown once and stored hashed.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
)

// Role is a person's role.
type Role string

// The roles, most powerful first.
const (
	Admin  Role = "admin"
	Lead   Role = "lead"
	Viewer Role = "viewer"
)

// ParseRole returns the role with the given name, or an invalid_role error.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case Admin, Lead, Viewer:
		return r, nil
	}
	return "", errs.E(errs.Invalid, "invalid_role", "Unknown role %q: use admin, lead or viewer.", s)
}

// Actor is whoever is calling: a person (UserID set) or an agent (KeyID set);
// or Madebook itself (System set), for what it does on its own, such as
// recording that a gate expired. A system actor is neither a person nor
// an agent, so it passes no Require check.
type Actor struct {
	UserID  int64
	Email   string
	Role    Role
	KeyID   int64
	KeyName string
	System  string
	// OSUser is the operating system's user running the local command
	// line (CommandLine only; "" when unknown).
	OSUser string
}

// commandLine is the System name of the local command line.
const commandLine = "cli"

// CommandLine is the operator at the local command line (madebook user
// add, key create, token create, rules infer --apply), who holds the
// database file and may do there what an admin may. osUser is the
// operating system's user running it ("" when unknown); the admin
// activity record names it.
func CommandLine(osUser string) Actor { return Actor{System: commandLine, OSUser: osUser} }

// IsCommandLine reports whether the actor is the local command line.
func (a Actor) IsCommandLine() bool { return a.System == commandLine && !a.IsPerson() && !a.IsAgent() }

// Who names the actor in the admin activity record: a person's email,
// "cli" (or "cli:USER", with the operating system's user) for the local
// command line, and the Label of anyone else.
func (a Actor) Who() string {
	switch {
	case a.IsPerson():
		return a.Email
	case a.IsCommandLine() && a.OSUser != "":
		return commandLine + ":" + a.OSUser
	case a.IsCommandLine():
		return commandLine
	}
	return a.Label()
}

// RequireOperator returns a forbidden error unless the actor is an admin
// or the local command line.
func (a Actor) RequireOperator(what string) error {
	if a.IsAdmin() || a.IsCommandLine() {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "Only an admin can %s.", what)
}

// System is Madebook itself doing the named work on its own, e.g.
// System("gate-expiry"); timelines label it "system:gate-expiry".
func System(name string) Actor { return Actor{System: name} }

// IsAgent reports whether the actor is an agent key.
func (a Actor) IsAgent() bool { return a.KeyID != 0 }

// IsPerson reports whether the actor is a signed-in person.
func (a Actor) IsPerson() bool { return a.UserID != 0 }

// CanLead reports whether the actor may act on the queue: a lead or an admin.
func (a Actor) CanLead() bool { return a.IsPerson() && (a.Role == Lead || a.Role == Admin) }

// IsAdmin reports whether the actor is an admin.
func (a Actor) IsAdmin() bool { return a.IsPerson() && a.Role == Admin }

// Label names the actor in timelines: "person:EMAIL", "agent:NAME" or
// "system:NAME".
func (a Actor) Label() string {
	if a.System != "" && !a.IsPerson() && !a.IsAgent() {
		return "system:" + a.System
	}
	if a.IsAgent() {
		return "agent:" + a.KeyName
	}
	return "person:" + a.Email
}

// RequireLead returns a forbidden error unless the actor is a lead or admin.
func (a Actor) RequireLead(what string) error {
	if a.CanLead() {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "Only a lead or an admin can %s.", what)
}

// RequirePerson returns a forbidden error unless the actor is a person.
func (a Actor) RequirePerson(what string) error {
	if a.IsPerson() {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "Only a person can %s.", what)
}

// RequireAgent returns a forbidden error unless the actor is an agent.
func (a Actor) RequireAgent(what string) error {
	if a.IsAgent() {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "Only an agent, with its key, can %s.", what)
}

// Secret prefixes tell an agent key from a personal token at a glance.
const (
	agentKeyPrefix = "mbk_"
	tokenPrefix    = "mbt_"
)

// User is a person who can sign in.
type User struct {
	ID       int64
	Email    string
	Role     Role
	Disabled bool
}

// Service creates and checks credentials.
type Service struct {
	store db.Transactor
	now   func() time.Time
	// uses are the credentials' last uses not yet written.
	uses uses
	// cache holds the credentials read, while nothing has changed since.
	cache credentialCache
	cost  int // bcrypt's
	// maxAge is the longest lifetime a new credential may have; 0: any.
	maxAge time.Duration
	// keepFailures is how many failed sign-ins are remembered at most.
	keepFailures int64

	dummyOnce sync.Once
	dummy     []byte
}

// NewService returns the credentials service.
func NewService(store db.Transactor, now func() time.Time) *Service {
	return &Service{store: store, now: now, uses: uses{pending: map[credential]time.Time{}},
		cache: credentialCache{max: maxCached}, cost: bcrypt.DefaultCost, keepFailures: maxFailuresKept}
}

// WithMaxAge sets the longest lifetime a new agent key or personal token
// may be given (MADEBOOK_TOKEN_MAX_AGE; 0, the default, is no limit): a
// create that asks for longer, or for no expiry, is refused (over_max_age),
// not shortened. Credentials made before keep their expiry.
func (s *Service) WithMaxAge(d time.Duration) *Service {
	s.maxAge = d
	return s
}

// WithPasswordCost sets bcrypt's cost for new passwords (tests use
// bcrypt.MinCost; the default is bcrypt.DefaultCost). Passwords already
// stored keep the cost they were hashed with.
func (s *Service) WithPasswordCost(cost int) *Service {
	s.cost = cost
	return s
}

// MaxAge is the longest lifetime a new credential may be given (0: any).
func (s *Service) MaxAge() time.Duration { return s.maxAge }

// NormalizeEmail trims and lower-cases an address and checks its shape.
func NormalizeEmail(s string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(s))
	if a, err := mail.ParseAddress(e); err != nil || a.Address != e {
		return "", errs.E(errs.Invalid, "invalid_email", "%q is not an email address.", s)
	}
	return e, nil
}

// AddUser adds a person; by is who adds them (an admin, or the command
// line), recorded with the new user in the admin activity. Errors:
// forbidden, invalid_email, invalid_role, invalid_password (under 8
// characters or over 72 bytes), email_taken.
func (s *Service) AddUser(ctx context.Context, by Actor, email, password string, role Role) (User, error) {
	if err := by.RequireOperator("add a user"); err != nil {
		return User{}, err
	}
	email, err := NormalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	if len([]rune(password)) < 8 {
		return User{}, errs.E(errs.Invalid, "invalid_password", "The password must be at least 8 characters.")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if errors.Is(err, bcrypt.ErrPasswordTooLong) {
		return User{}, errs.E(errs.Invalid, "invalid_password", "The password must be at most 72 bytes.")
	} else if err != nil {
		return User{}, fmt.Errorf("hash password: %w", err)
	}
	var u db.User
	err = s.store.Write(ctx, func(q db.Querier) error {
		if _, err := q.GetUserByEmail(ctx, email); err == nil {
			return errs.E(errs.Conflict, "email_taken", "A user with the email %s already exists.", email)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		now := s.now()
		u, err = q.CreateUser(ctx, db.CreateUserParams{Email: email, PasswordHash: string(hash), Role: string(role),
			CreatedAt: db.FormatTime(now)})
		if err != nil {
			return err
		}
		return activity.Record(ctx, q, now, by.Who(), activity.UserAdd, userTarget(u.Email), nil, userState(userFrom(u)))
	})
	if err != nil {
		return User{}, fmt.Errorf("add user %s: %w", email, err)
	}
	return userFrom(u), nil
}

// CheckPassword returns the enabled user with this email and password, or
// an invalid_credentials error that does not say which part was wrong.
func (s *Service) CheckPassword(ctx context.Context, email, password string) (User, error) {
	bad := errs.E(errs.Unauthorized, "invalid_credentials", "The email or password is wrong.")
	u, err := s.store.Reader().GetUserByEmail(ctx, strings.ToLower(strings.TrimSpace(email)))
	if errors.Is(err, sql.ErrNoRows) {
		// Spend the same time as a real comparison, so timing does not
		// tell which emails exist.
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return User{}, bad
	} else if err != nil {
		return User{}, fmt.Errorf("check password: %w", err)
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil || u.DisabledAt.Valid {
		return User{}, bad
	}
	return userFrom(u), nil
}

// dummyHash is a hash at the service's cost, made once, to compare against
// when no user has the email.
func (s *Service) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		s.dummy, _ = bcrypt.GenerateFromPassword([]byte("madebook-timing-equaliser"), s.cost)
	})
	return s.dummy
}

// MaxKeyName is the most characters of an agent key's name (and of a
// personal token's).
const MaxKeyName = 100

// KeyRequest is what a new agent key is asked for.
type KeyRequest struct {
	// Name names the agent everywhere: unique, one line.
	Name string
	// Lifetime is how long the key works from its creation (ParseLifetime
	// reads it); 0 is until it is revoked.
	Lifetime time.Duration
}

// TokenRequest is what a new personal token is asked for.
type TokenRequest struct {
	// Email is the person the token acts as.
	Email string
	// Name tells the person's tokens apart; "" names it after the day it
	// is made ("token 2026-11-29").
	Name string
	// Lifetime is how long the token works from its creation; 0 is until
	// it is revoked.
	Lifetime time.Duration
}

// Issued is a credential just created. Its secret is shown this once:
// Madebook keeps only its hash, and lists it by its id and prefix.
type Issued struct {
	ID     int64
	Secret string
	// Prefix is the secret's first characters, as lists show it.
	Prefix string
	// ExpiresAt is when it stops working (nil: when it is revoked).
	ExpiresAt *time.Time
}

// CreateKey creates an agent key that works until it is revoked and
// returns its secret: IssueKey with only a name.
func (s *Service) CreateKey(ctx context.Context, by Actor, name string) (string, error) {
	k, err := s.IssueKey(ctx, by, KeyRequest{Name: name})
	return k.Secret, err
}

// IssueKey creates an agent key and returns it with its secret, which is
// shown once and stored only as a hash. by is who creates it: a person is
// recorded as its creator, and never approves the work of its sessions
// (a key made from the command line has no creator). The admin activity
// records it, never its secret. Errors: forbidden (by is neither an admin
// nor the command line), name_required, name_too_long,
// invalid_characters (a key's name is one line: it names the agent
// everywhere), invalid_expiry, over_max_age, name_taken.
func (s *Service) IssueKey(ctx context.Context, by Actor, r KeyRequest) (Issued, error) {
	if err := by.RequireOperator("create an agent key"); err != nil {
		return Issued{}, err
	}
	name, err := input.Required("name", r.Name, MaxKeyName)
	if err != nil {
		return Issued{}, err
	}
	if _, err := input.CleanLine("name", name); err != nil {
		return Issued{}, err
	}
	if err := s.checkLifetime(r.Lifetime); err != nil {
		return Issued{}, err
	}
	out, hash, err := newCredential(agentKeyPrefix)
	if err != nil {
		return Issued{}, err
	}
	err = s.store.Write(ctx, func(q db.Querier) error {
		if _, err := q.GetAgentKeyByName(ctx, name); err == nil {
			return errs.E(errs.Conflict, "name_taken", "An agent key named %q already exists.", name)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		creator := sql.NullInt64{Int64: by.UserID, Valid: by.IsPerson()}
		now := s.now()
		out.ExpiresAt = expiry(now, r.Lifetime)
		k, err := q.CreateAgentKey(ctx, db.CreateAgentKeyParams{Name: name, KeyHash: hash, Prefix: out.Prefix,
			CreatedAt: db.FormatTime(now), CreatedBy: creator, ExpiresAt: nullTime(out.ExpiresAt)})
		if err != nil {
			return err
		}
		out.ID = k.ID
		return activity.Record(ctx, q, now, by.Who(), activity.KeyCreate, keyTarget(k.ID, k.Name), nil,
			keyState(k.Name, out.Prefix, out.ExpiresAt, false))
	})
	if err != nil {
		return Issued{}, fmt.Errorf("create key %q: %w", name, err)
	}
	return out, nil
}

// CreateToken creates a personal API token, named after the day, that
// works until it is revoked, and returns its secret: IssueToken with only
// an email.
func (s *Service) CreateToken(ctx context.Context, by Actor, email string) (string, error) {
	t, err := s.IssueToken(ctx, by, TokenRequest{Email: email})
	return t.Secret, err
}

// IssueToken creates a personal API token for the user with the request's
// email and returns it with its secret, shown once; by is who creates it
// (an admin, or the command line), recorded in the admin activity, never
// the secret. Errors: forbidden, name_too_long, invalid_characters,
// invalid_expiry, over_max_age, user_not_found.
func (s *Service) IssueToken(ctx context.Context, by Actor, r TokenRequest) (Issued, error) {
	if err := by.RequireOperator("create a personal token"); err != nil {
		return Issued{}, err
	}
	email := strings.ToLower(strings.TrimSpace(r.Email))
	name, err := input.Optional("name", r.Name, MaxKeyName)
	if err != nil {
		return Issued{}, err
	}
	if _, err := input.CleanLine("name", name); err != nil {
		return Issued{}, err
	}
	if err := s.checkLifetime(r.Lifetime); err != nil {
		return Issued{}, err
	}
	out, hash, err := newCredential(tokenPrefix)
	if err != nil {
		return Issued{}, err
	}
	err = s.store.Write(ctx, func(q db.Querier) error {
		u, err := q.GetUserByEmail(ctx, email)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "user_not_found", "No user has the email %s: add one with `madebook user add`.", email)
		} else if err != nil {
			return err
		}
		now := s.now()
		if name == "" {
			name = "token " + now.UTC().Format("2006-01-02")
		}
		out.ExpiresAt = expiry(now, r.Lifetime)
		out.ID, err = q.CreateAPIToken(ctx, db.CreateAPITokenParams{UserID: u.ID, Name: name, TokenHash: hash,
			Prefix: out.Prefix, CreatedAt: db.FormatTime(now), ExpiresAt: nullTime(out.ExpiresAt)})
		if err != nil {
			return err
		}
		after := tokenState(out.ID, name, out.Prefix, out.ExpiresAt, false)
		after["role"] = u.Role
		return activity.Record(ctx, q, now, by.Who(), activity.TokenCreate, userTarget(u.Email), nil, after)
	})
	if err != nil {
		return Issued{}, fmt.Errorf("create token for %s: %w", email, err)
	}
	return out, nil
}

// Authenticate returns the actor a bearer secret belongs to. Errors:
// unauthorized (missing, unknown, or its user disabled),
// credential_revoked, credential_expired. A revocation, an expiry, a
// disabled user or a new role holds on the very next request, on every
// replica and after a command-line revoke on the same file: the
// credential is read from the database (one indexed read), or taken from
// the cache only while the store's data version says nothing at all was
// committed since it was read (SQLite; on PostgreSQL every call reads),
// and it is judged against now at each call. The last use is kept in
// memory and written in batches (FlushLastUsed), at most once a minute a
// credential.
func (s *Service) Authenticate(ctx context.Context, secret string) (Actor, error) {
	if !strings.HasPrefix(secret, agentKeyPrefix) && !strings.HasPrefix(secret, tokenPrefix) {
		return Actor{}, unauthorized()
	}
	sum := sumSecret(secret)
	now := s.now()
	// The version is taken before the read, so that a commit between the
	// two is never held as current. A failed probe only costs the cache:
	// the read below is exact on its own.
	version, cacheable, err := s.store.DataVersion(ctx)
	cacheable = cacheable && err == nil
	c, hit := stored{}, false
	if cacheable {
		c, hit = s.cache.get(sum, version)
	}
	if !hit {
		if c, err = s.read(ctx, secret, sum); err != nil {
			return Actor{}, err
		}
		if cacheable {
			s.cache.put(sum, version, c)
		}
	}
	if err := c.cred.usable(c.revoked, c.expires, now); err != nil {
		return Actor{}, err
	}
	if c.refused {
		return Actor{}, unauthorized()
	}
	s.uses.seen(c.cred, c.lastUsed, now)
	return c.actor, nil
}

// read reads the credential whose secret has the sum, or returns
// unauthorized if there is none.
func (s *Service) read(ctx context.Context, secret string, sum [sha256.Size]byte) (stored, error) {
	hash := hex.EncodeToString(sum[:])
	q := s.store.Reader()
	if strings.HasPrefix(secret, agentKeyPrefix) {
		k, err := q.GetAgentKeyByHash(ctx, hash)
		if errors.Is(err, sql.ErrNoRows) {
			return stored{}, unauthorized()
		} else if err != nil {
			return stored{}, fmt.Errorf("authenticate: %w", err)
		}
		return stored{cred: credential{agentKey, k.ID}, actor: Actor{KeyID: k.ID, KeyName: k.Name},
			revoked: k.RevokedAt, expires: k.ExpiresAt, lastUsed: k.LastUsedAt}, nil
	}
	t, err := q.GetAPITokenByHash(ctx, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return stored{}, unauthorized()
	} else if err != nil {
		return stored{}, fmt.Errorf("authenticate: %w", err)
	}
	return stored{cred: credential{personalToken, t.ID}, actor: Actor{UserID: t.UserID, Email: t.Email, Role: Role(t.Role)},
		revoked: t.RevokedAt, expires: t.ExpiresAt, lastUsed: t.LastUsedAt,
		refused: t.DisabledAt != "" || t.Email == ""}, nil // a disabled person's token, or (never) one of nobody
}

// unauthorized is Authenticate's answer to a secret that is missing, of
// no credential, or of a disabled person's.
func unauthorized() error {
	return errs.E(errs.Unauthorized, "unauthorized", "Send a valid agent key or personal token as `Authorization: Bearer …`.")
}

func userFrom(u db.User) User {
	return User{ID: u.ID, Email: u.Email, Role: Role(u.Role), Disabled: u.DisabledAt.Valid}
}

// shownPrefix is how many of a secret's first characters lists show: its
// kind's four ("mbk_", "mbt_") and six random ones, 36 of its 256 bits.
const shownPrefix = 10

// newSecret returns a fresh random secret with the prefix, and its hash.
func newSecret(prefix string) (secret, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("random secret: %w", err)
	}
	secret = prefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, hashSecret(secret), nil
}

// newCredential is newSecret for an agent key or a personal token: the
// secret in an Issued, with the part lists show.
func newCredential(prefix string) (Issued, string, error) {
	secret, hash, err := newSecret(prefix)
	if err != nil {
		return Issued{}, "", err
	}
	return Issued{Secret: secret, Prefix: secret[:shownPrefix]}, hash, nil
}

// hashSecret hashes a secret for storage. The secrets are 256 random bits,
// so a fast hash is enough: there is nothing to brute-force.
func hashSecret(secret string) string {
	sum := sumSecret(secret)
	return hex.EncodeToString(sum[:])
}

// sumSecret is the SHA-256 sum of secret. A secret of usual length is
// copied to the stack, not the heap (a longer one grows the copy there):
// every request with a credential takes this sum.
func sumSecret(secret string) [sha256.Size]byte {
	var buf [128]byte
	return sha256.Sum256(append(buf[:0], secret...))
}
