package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// handleLoginPage serves GET /login.
func (k *console) handleLoginPage() echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, ok := webSession(c); ok {
			return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
		}
		f, err := k.loginForm(c, "", "")
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.Login(views.Page{Title: "Sign in", Assets: assets}, f))
	}
}

// handleLogin serves POST /login: a new session with a new id (any old one
// ends), or the form again with what went wrong (429 with Retry-After when
// the account or the client's address has failed too often).
func (k *console) handleLogin() echo.HandlerFunc {
	return func(c echo.Context) error {
		email := strings.TrimSpace(c.FormValue("email"))
		token, _, err := k.auth.Login(c.Request().Context(), email, c.FormValue("password"), c.RealIP())
		if err != nil {
			e, ok := errs.As(err)
			if !ok || (e.Kind != errs.Unauthorized && e.Kind != errs.TooMany) {
				return err
			}
			f, err := k.loginForm(c, email, e.Message)
			if err != nil {
				return err
			}
			if e.Kind == errs.TooMany {
				c.Response().Header().Set("Retry-After", strconv.Itoa(int(auth.SignInWindow.Seconds())))
			}
			return render(c, httpx.Status(e.Kind), views.Login(views.Page{Title: "Sign in", Assets: assets}, f))
		}
		old, err := k.store.Get(c.Request(), k.store.name)
		if err != nil {
			return err
		}
		if !old.IsNew {
			if err := k.auth.Logout(c.Request().Context(), old.ID); err != nil {
				return err
			}
		}
		s := sessions.NewSession(k.store, k.store.name)
		opts := k.store.opts
		s.ID, s.Options = token, &opts
		if err := s.Save(c.Request(), c.Response()); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, safeNext(c.FormValue("next")))
	}
}

// loginForm is the sign-in form with what the person typed and what went
// wrong; on a database with no user yet it says how to make the first.
func (k *console) loginForm(c echo.Context, email, problem string) (views.LoginForm, error) {
	n, err := k.auth.CountUsers(c.Request().Context())
	if err != nil {
		return views.LoginForm{}, err
	}
	return views.LoginForm{Email: email, Error: problem, NoUsers: n == 0, Next: safeNext(c.FormValue("next"))}, nil
}

// handleLogout serves POST /logout: this session ends.
func (k *console) handleLogout() echo.HandlerFunc {
	return func(c echo.Context) error {
		s, err := k.store.Get(c.Request(), k.store.name)
		if err != nil {
			return err
		}
		s.Options.MaxAge = -1
		if err := s.Save(c.Request(), c.Response()); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/login")
	}
}

// handleLogoutEverywhere serves POST /logout/everywhere: every session of
// this person ends, on every device.
func (k *console) handleLogoutEverywhere() echo.HandlerFunc {
	return func(c echo.Context) error {
		ws, _ := webSession(c)
		if _, err := k.auth.LogoutEverywhere(c.Request().Context(), ws.User.ID); err != nil {
			return err
		}
		s, err := k.store.Get(c.Request(), k.store.name)
		if err != nil {
			return err
		}
		s.Options.MaxAge = -1
		if err := s.Save(c.Request(), c.Response()); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/login")
	}
}

// safeNext keeps a post-login redirect on this site: a path of its own
// ("/sessions/ses_…?tab=x"), never another origin ("//evil", "/\\evil",
// "https://…") nor anything with a control character; "/" otherwise.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(next, "/") ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\") ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "/"
	}
	return next
}
