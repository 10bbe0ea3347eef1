package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/errs"
)

// Account is a user as an admin sees it in the list of users.
type Account struct {
	User
	CreatedAt time.Time
	// DisabledAt is when the user was disabled; zero while enabled.
	DisabledAt time.Time
}

// RequireAdmin returns a forbidden error unless the actor is an admin.
func (a Actor) RequireAdmin(what string) error {
	if a.IsAdmin() {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "Only an admin can %s.", what)
}

// ListUsers returns every user, by email.
func (s *Service) ListUsers(ctx context.Context) ([]Account, error) {
	rows, err := s.store.Reader().ListUsers(ctx)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out := make([]Account, 0, len(rows))
	for _, r := range rows {
		c := db.StoredRow("users", r.ID)
		out = append(out, Account{
			User:       User{ID: r.ID, Email: r.Email, Role: Role(r.Role), Disabled: r.DisabledAt.Valid},
			CreatedAt:  c.Time("created_at", r.CreatedAt),
			DisabledAt: c.NullTime("disabled_at", r.DisabledAt),
		})
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
	}
	return out, nil
}

// FirstAdminCommand is the command that makes the first admin of a fresh
// database, as Madebook tells a newcomer (serve's log, the sign-in page).
const FirstAdminCommand = "echo 'a-long-password' | madebook user add --email you@example.com --role admin"

// CountUsers returns how many users there are, disabled ones included: zero
// on a fresh database, before anyone can sign in.
func (s *Service) CountUsers(ctx context.Context) (int64, error) {
	n, err := s.store.Reader().CountUsers(ctx)
	if err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// SetRole gives a user a new role. A change ends the user's console
// sessions in the same transaction, and their tokens carry the new role
// from the next request on (nothing remembers a credential's role). Errors: forbidden (by is not an admin),
// invalid_role, user_not_found, cannot_change_self (an admin demoting
// themselves).
func (s *Service) SetRole(ctx context.Context, by Actor, userID int64, role Role) (User, error) {
	if err := by.RequireAdmin("change a role"); err != nil {
		return User{}, err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	if userID == by.UserID && role != Admin {
		return User{}, errs.E(errs.Conflict, "cannot_change_self", "You cannot change your own role: ask another admin.")
	}
	var u User
	err := s.store.Write(ctx, func(q db.Querier) error {
		row, err := getUser(ctx, q, userID)
		if err != nil {
			return err
		}
		u = userFrom(row)
		if u.Role == role {
			return nil
		}
		if err := q.SetUserRole(ctx, db.SetUserRoleParams{ID: userID, Role: string(role)}); err != nil {
			return err
		}
		before := userState(u)
		u.Role = role
		if _, err = q.DeleteUserWebSessions(ctx, userID); err != nil {
			return err
		}
		return activity.Record(ctx, q, s.now(), by.Who(), activity.UserRole, userTarget(u.Email), before, userState(u))
	})
	if err != nil {
		return User{}, fmt.Errorf("set role of user %d: %w", userID, err)
	}
	return u, nil
}

// SetDisabled disables a user (who can then no longer sign in, and whose
// console sessions and personal tokens stop working at once) or enables
// them again. Disabling a disabled user, or enabling an enabled one,
// changes nothing. Errors: forbidden (by is not an admin), user_not_found,
// cannot_change_self (an admin disabling themselves).
func (s *Service) SetDisabled(ctx context.Context, by Actor, userID int64, disabled bool) (User, error) {
	if err := by.RequireAdmin("disable or enable a user"); err != nil {
		return User{}, err
	}
	if userID == by.UserID && disabled {
		return User{}, errs.E(errs.Conflict, "cannot_change_self", "You cannot disable yourself: ask another admin.")
	}
	var u User
	err := s.store.Write(ctx, func(q db.Querier) error {
		row, err := getUser(ctx, q, userID)
		if err != nil {
			return err
		}
		u = userFrom(row)
		if u.Disabled == disabled {
			return nil
		}
		at := sql.NullString{}
		if disabled {
			at = db.NullTime(s.now())
		}
		if err := q.SetUserDisabledAt(ctx, db.SetUserDisabledAtParams{ID: userID, DisabledAt: at}); err != nil {
			return err
		}
		before := userState(u)
		u.Disabled = disabled
		action := activity.UserEnable
		if disabled {
			action = activity.UserDisable
			if _, err = q.DeleteUserWebSessions(ctx, userID); err != nil {
				return err
			}
		}
		return activity.Record(ctx, q, s.now(), by.Who(), action, userTarget(u.Email), before, userState(u))
	})
	if err != nil {
		return User{}, fmt.Errorf("set user %d disabled=%t: %w", userID, disabled, err)
	}
	return u, nil
}

// userTarget names a user in the admin activity.
func userTarget(email string) string { return "user " + email }

// keyTarget names an agent key in the admin activity.
func keyTarget(id int64, name string) string { return fmt.Sprintf("key %d (%s)", id, name) }

// userState is what the admin activity records of a user: never the
// password or its hash.
func userState(u User) activity.State {
	return activity.State{"email": u.Email, "role": string(u.Role), "disabled": u.Disabled}
}

// getUser reads a user in a transaction, or returns user_not_found.
func getUser(ctx context.Context, q db.Querier, id int64) (db.User, error) {
	u, err := q.GetUser(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return db.User{}, errs.E(errs.NotFound, "user_not_found", "There is no user %d.", id)
	}
	return u, err
}
