package console

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// requireAdmin refuses everyone but an admin with 403. It runs after
// signedIn, so the actor is a signed-in person whose role was read from the
// database on this request.
func (k *console) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireAdmin("manage users, agent keys, personal tokens and tools"); err != nil {
			return err
		}
		return next(c)
	}
}

// handleUsers serves GET /admin/users (admin): every user, with a notice
// about the action just done (?done=…&user=ID).
func (k *console) handleUsers() echo.HandlerFunc {
	return func(c echo.Context) error {
		return k.renderUsers(c, http.StatusOK, views.UsersView{}, func(users []auth.Account) string {
			return userNotice(c.QueryParam("done"), c.QueryParam("user"), users)
		})
	}
}

// handleUserAdd serves POST /admin/users (admin): a new person, or the form
// again (422) with what is wrong and nothing written.
func (k *console) handleUserAdd(log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		email, role := strings.TrimSpace(c.FormValue("email")), c.FormValue("role")
		u, err := k.addUser(c, email, role, c.FormValue("password"))
		if err != nil {
			msg, ok := fixable(err)
			if !ok {
				return err
			}
			return k.renderUsers(c, http.StatusUnprocessableEntity, views.UsersView{Add: views.AddUserForm{Email: email, Role: role, Error: msg}}, nil)
		}
		adminDid(c, log, "user.added", u.Email, "role", string(u.Role))
		return c.Redirect(http.StatusSeeOther, doneURL("/admin/users", "added", "user", u.ID))
	}
}

func (k *console) addUser(c echo.Context, email, role, password string) (auth.User, error) {
	r, err := auth.ParseRole(role)
	if err != nil {
		return auth.User{}, err
	}
	return k.auth.AddUser(c.Request().Context(), httpx.Actor(c), email, password, r)
}

// handleUserRole serves POST /admin/users/:id/role (admin): the person's
// new role; their console sessions end and their tokens follow at once.
func (k *console) handleUserRole(log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := userID(c)
		if err == nil {
			var u auth.User
			u, err = k.auth.SetRole(c.Request().Context(), httpx.Actor(c), id, auth.Role(c.FormValue("role")))
			if err == nil {
				adminDid(c, log, "user.role_set", u.Email, "role", string(u.Role))
				return c.Redirect(http.StatusSeeOther, doneURL("/admin/users", "role", "user", u.ID))
			}
		}
		return k.usersProblem(c, err)
	}
}

// handleUserDisabled serves POST /admin/users/:id/disable and
// POST /admin/users/:id/enable (admin). Disabling ends the person's console
// sessions and stops their tokens at once.
func (k *console) handleUserDisabled(log *slog.Logger, disabled bool) echo.HandlerFunc {
	done, action := "enabled", "user.enabled"
	if disabled {
		done, action = "disabled", "user.disabled"
	}
	return func(c echo.Context) error {
		id, err := userID(c)
		if err == nil {
			var u auth.User
			u, err = k.auth.SetDisabled(c.Request().Context(), httpx.Actor(c), id, disabled)
			if err == nil {
				adminDid(c, log, action, u.Email)
				return c.Redirect(http.StatusSeeOther, doneURL("/admin/users", done, "user", u.ID))
			}
		}
		return k.usersProblem(c, err)
	}
}

// usersProblem answers a failed action on a user: the page again (422)
// with the message, or the error itself when a person cannot fix it.
func (k *console) usersProblem(c echo.Context, err error) error {
	msg, ok := fixable(err)
	if !ok {
		return err
	}
	return k.renderUsers(c, http.StatusUnprocessableEntity, views.UsersView{Error: msg}, nil)
}

// renderUsers renders the users page; notice, if given, says what was just done.
func (k *console) renderUsers(c echo.Context, status int, v views.UsersView, notice func([]auth.Account) string) error {
	users, err := k.auth.ListUsers(c.Request().Context())
	if err != nil {
		return err
	}
	p, err := k.page(c, "Users", "users")
	if err != nil {
		return err
	}
	if notice != nil {
		p.Notice = notice(users)
	}
	ws, _ := webSession(c)
	v.Users, v.Self, v.CSRF = users, ws.User.ID, ws.CSRF
	return render(c, status, views.UsersPage(p, v))
}

// handleKeys serves GET /admin/keys (admin): every agent key, never a
// secret, with a notice about the action just done (?done=…&key=ID).
func (k *console) handleKeys() echo.HandlerFunc {
	return func(c echo.Context) error {
		return k.renderKeys(c, http.StatusOK, views.KeysView{}, func(keys []auth.Key) string {
			return keyNotice(c.QueryParam("done"), c.QueryParam("key"), keys)
		})
	}
}

// handleKeyCreate serves POST /admin/keys (admin): a new agent key, with
// an optional lifetime (expires: 90d, 12h, …; required under the server's
// maximum age), whose secret this answer shows once (201, not stored, not
// cached), or the form again (422) with what is wrong and nothing written.
func (k *console) handleKeyCreate(log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		form := views.CreateKeyForm{Name: strings.TrimSpace(c.FormValue("name")), Expires: strings.TrimSpace(c.FormValue("expires"))}
		key, err := k.createKey(c, form)
		if err != nil {
			msg, ok := fixable(err)
			if !ok {
				return err
			}
			form.Error = msg
			return k.renderKeys(c, http.StatusUnprocessableEntity, views.KeysView{Create: form}, nil)
		}
		adminDid(c, log, "agent_key.created", form.Name, "key_id", key.ID, "expires", expiresText(key.ExpiresAt))
		c.Response().Header().Set("Cache-Control", "no-store")
		return k.renderKeys(c, http.StatusCreated, views.KeysView{New: &views.NewKey{Name: form.Name, Secret: key.Secret,
			Expires: expiresText(key.ExpiresAt)}}, func([]auth.Key) string {
			return fmt.Sprintf("Created the agent key %q.", form.Name)
		})
	}
}

func (k *console) createKey(c echo.Context, form views.CreateKeyForm) (auth.Issued, error) {
	var life time.Duration
	if form.Expires != "" {
		var err error
		if life, err = auth.ParseLifetime(form.Expires); err != nil {
			return auth.Issued{}, err
		}
	}
	return k.auth.IssueKey(c.Request().Context(), httpx.Actor(c), auth.KeyRequest{Name: form.Name, Lifetime: life})
}

// expiresText says when a new credential stops working.
func expiresText(t *time.Time) string {
	if t == nil {
		return "never (until it is revoked)"
	}
	return views.Stamp(*t)
}

// handleKeyRevoke serves POST /admin/keys/:id/revoke (admin): the key stops
// authenticating from the next request on, for good.
func (k *console) handleKeyRevoke(log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "key_not_found", "There is no agent key %q.")
		if err == nil {
			var key auth.Key
			key, err = k.auth.RevokeKey(c.Request().Context(), httpx.Actor(c), id)
			if err == nil {
				adminDid(c, log, "agent_key.revoked", key.Name)
				return c.Redirect(http.StatusSeeOther, doneURL("/admin/keys", "revoked", "key", key.ID))
			}
		}
		msg, ok := fixable(err)
		if !ok {
			return err
		}
		return k.renderKeys(c, http.StatusUnprocessableEntity, views.KeysView{Error: msg}, nil)
	}
}

// renderKeys renders the agent keys page; notice, if given, says what was just done.
func (k *console) renderKeys(c echo.Context, status int, v views.KeysView, notice func([]auth.Key) string) error {
	keys, err := k.auth.ListKeys(c.Request().Context(), httpx.Actor(c))
	if err != nil {
		return err
	}
	p, err := k.page(c, "Agent keys", "keys")
	if err != nil {
		return err
	}
	if notice != nil {
		p.Notice = notice(keys)
	}
	ws, _ := webSession(c)
	v.Keys, v.CSRF = keys, ws.CSRF
	if m := k.auth.MaxAge(); m > 0 {
		v.MaxAge = auth.FormatLifetime(m)
	}
	return render(c, status, views.KeysPage(p, v))
}

// handleTokens serves GET /admin/tokens (admin): every person's personal
// tokens, never a secret, with a notice about the action just done
// (?done=revoked&token=ID).
func (k *console) handleTokens() echo.HandlerFunc {
	return func(c echo.Context) error {
		return k.renderTokens(c, http.StatusOK, views.TokensView{}, func(tokens []auth.Token) string {
			return tokenNotice(c.QueryParam("done"), c.QueryParam("token"), tokens)
		})
	}
}

// handleTokenRevoke serves POST /admin/tokens/:id/revoke (admin): the
// token stops authenticating from the next request on, for good.
func (k *console) handleTokenRevoke(log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "token_not_found", "There is no personal token %q.")
		if err == nil {
			var t auth.Token
			t, err = k.auth.RevokeToken(c.Request().Context(), httpx.Actor(c), id)
			if err == nil {
				adminDid(c, log, "token.revoked", t.Owner, "token_id", t.ID, "name", t.Name)
				return c.Redirect(http.StatusSeeOther, doneURL("/admin/tokens", "revoked", "token", t.ID))
			}
		}
		msg, ok := fixable(err)
		if !ok {
			return err
		}
		return k.renderTokens(c, http.StatusUnprocessableEntity, views.TokensView{Error: msg}, nil)
	}
}

// renderTokens renders the personal tokens page; notice, if given, says
// what was just done.
func (k *console) renderTokens(c echo.Context, status int, v views.TokensView, notice func([]auth.Token) string) error {
	tokens, err := k.auth.ListTokens(c.Request().Context(), httpx.Actor(c))
	if err != nil {
		return err
	}
	p, err := k.page(c, "Personal tokens", "tokens")
	if err != nil {
		return err
	}
	if notice != nil {
		p.Notice = notice(tokens)
	}
	ws, _ := webSession(c)
	v.Tokens, v.CSRF = tokens, ws.CSRF
	return render(c, status, views.TokensPage(p, v))
}

// userID reads the :id of a user route.
func userID(c echo.Context) (int64, error) {
	return httpx.PathID(c, "user_not_found", "There is no user %q.")
}

// fixable returns the message of an error a person can fix from the form
// (bad input, a conflict, a row that is gone), or false for anything else.
func fixable(err error) (string, bool) {
	e, ok := errs.As(err)
	if !ok || (e.Kind != errs.Invalid && e.Kind != errs.Conflict && e.Kind != errs.NotFound) {
		return "", false
	}
	return e.Message, true
}

// doneURL is where an admin action redirects: the page, saying what was
// done to which row. The notice is built from the row, never from the
// address, so a crafted link cannot put words on the page.
func doneURL(page, done, param string, id int64) string {
	return page + "?" + url.Values{"done": {done}, param: {strconv.FormatInt(id, 10)}}.Encode()
}

// userNotice says what was just done to a user, or nothing.
func userNotice(done, id string, users []auth.Account) string {
	for _, u := range users {
		if strconv.FormatInt(u.ID, 10) != id {
			continue
		}
		switch done {
		case "added":
			return fmt.Sprintf("Added %s as %s.", u.Email, u.Role)
		case "role":
			return fmt.Sprintf("%s is now %s, and was signed out everywhere.", u.Email, u.Role)
		case "disabled":
			return fmt.Sprintf("Disabled %s: signed out everywhere, and their personal tokens no longer work.", u.Email)
		case "enabled":
			return fmt.Sprintf("Re-enabled %s: they can sign in again.", u.Email)
		}
	}
	return ""
}

// keyNotice says what was just done to an agent key, or nothing.
func keyNotice(done, id string, keys []auth.Key) string {
	for _, k := range keys {
		if strconv.FormatInt(k.ID, 10) == id && done == "revoked" {
			return fmt.Sprintf("Revoked the agent key %q: agents using it are refused from now on.", k.Name)
		}
	}
	return ""
}

// tokenNotice says what was just done to a personal token, or nothing.
func tokenNotice(done, id string, tokens []auth.Token) string {
	for _, t := range tokens {
		if strconv.FormatInt(t.ID, 10) == id && done == "revoked" {
			return fmt.Sprintf("Revoked the personal token %q of %s: calls with it are refused from now on.", t.Name, t.Owner)
		}
	}
	return ""
}

// adminDid records an admin action, who did it and when, in the server log.
func adminDid(c echo.Context, log *slog.Logger, action, target string, attrs ...any) {
	a := httpx.Actor(c)
	log.InfoContext(c.Request().Context(), "admin action",
		append([]any{"action", action, "target", target, "by", a.Label(), "by_id", a.UserID}, attrs...)...)
}
