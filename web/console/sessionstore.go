package console

import (
	"net/http"

	"github.com/gorilla/sessions"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
)

// sessionStore is a gorilla/sessions Store backed by the web_sessions
// table, so that signing out (here, or everywhere) really ends a session.
// The cookie holds only the session's random token; the row holds who is
// signed in and the session's CSRF token, and nothing else is kept.
type sessionStore struct {
	auth *auth.Service
	opts sessions.Options
	name string
}

// Session value keys.
const (
	valueSession = "web_session" // an auth.WebSession
)

func newSessionStore(a *auth.Service, secure bool) *sessionStore {
	name := "madebook_session"
	if secure {
		name = "__Host-madebook_session" // Secure, Path=/, no Domain: the browser enforces all three
	}
	return &sessionStore{auth: a, name: name, opts: sessions.Options{Path: "/", MaxAge: int(auth.AbsoluteTimeout.Seconds()),
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}}
}

// Get returns the request's session, loaded once per request.
func (st *sessionStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	return sessions.GetRegistry(r).Get(st, name)
}

// New loads the session the request's cookie names; without a live one it
// returns a new, empty session.
func (st *sessionStore) New(r *http.Request, name string) (*sessions.Session, error) {
	s := sessions.NewSession(st, name)
	opts := st.opts
	s.Options, s.IsNew = &opts, true
	c, err := r.Cookie(name)
	if err != nil || c.Value == "" {
		return s, nil
	}
	ws, err := st.auth.WebSession(r.Context(), c.Value)
	if errs.KindOf(err) == errs.Unauthorized {
		return s, nil
	} else if err != nil {
		return s, err
	}
	s.ID, s.IsNew = c.Value, false
	s.Values[valueSession] = ws
	return s, nil
}

// Save writes the session's cookie; a session with a negative MaxAge is
// ended in the database and its cookie cleared.
func (st *sessionStore) Save(r *http.Request, w http.ResponseWriter, s *sessions.Session) error {
	if s.Options.MaxAge < 0 {
		if err := st.auth.Logout(r.Context(), s.ID); err != nil {
			return err
		}
		http.SetCookie(w, sessions.NewCookie(s.Name(), "", s.Options))
		return nil
	}
	http.SetCookie(w, sessions.NewCookie(s.Name(), s.ID, s.Options))
	return nil
}
