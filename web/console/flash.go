package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// A flash is the words that say what an action did and what happens next,
// carried across the redirect after a plain (non-htmx) form to the page it
// goes back to, which shows them once in its role=status region. The
// cookie holds the words and an HMAC of them keyed by the signed-in
// session's CSRF token, so only this console, for this person, puts words
// there: a link cannot, and another session's flash is ignored.

// flashMaxAge is how long a flash waits for its page, in seconds.
const flashMaxAge = 60

// flashName is the flash cookie's name (with the __Host- prefix when the
// console's cookies are Secure).
func (k *console) flashName() string {
	if k.store.opts.Secure {
		return "__Host-madebook_flash"
	}
	return "madebook_flash"
}

func (k *console) flashCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: k.flashName(), Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: k.store.opts.Secure, SameSite: http.SameSiteLaxMode}
}

// flashMAC is the HMAC of msg under the signed-in person's CSRF token.
func flashMAC(csrf, msg string) []byte {
	m := hmac.New(sha256.New, []byte(csrf))
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// setFlash keeps msg for the next page this person opens.
func (k *console) setFlash(c echo.Context, msg string) {
	ws, ok := webSession(c)
	if !ok || msg == "" {
		return
	}
	enc := base64.RawURLEncoding
	c.SetCookie(k.flashCookie(enc.EncodeToString([]byte(msg))+"."+enc.EncodeToString(flashMAC(ws.CSRF, msg)), flashMaxAge))
}

// takeFlash returns the words a flash holds for this person, and clears
// it: a flash shows once. A flash that does not verify is cleared too.
func (k *console) takeFlash(c echo.Context) string {
	ck, err := c.Cookie(k.flashName())
	if err != nil || ck.Value == "" {
		return ""
	}
	c.SetCookie(k.flashCookie("", -1))
	ws, ok := webSession(c)
	if !ok {
		return ""
	}
	body, sig, found := strings.Cut(ck.Value, ".")
	if !found {
		return ""
	}
	enc := base64.RawURLEncoding
	msg, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || subtle.ConstantTimeCompare(mac, flashMAC(ws.CSRF, string(msg))) != 1 {
		return ""
	}
	return string(msg)
}
