package views

import (
	"net/url"

	"github.com/madebook/madebook/internal/governance"
)

// sessionsFiltered reports whether any filter narrows the sessions list.
func sessionsFiltered(f governance.SessionFilter) bool {
	return f.State != "" || f.Mission != "" || f.Agent != "" || f.Q != ""
}

// sessionsURL is the sessions list under f's filters, from the page next
// names ("" for the first page).
func sessionsURL(f governance.SessionFilter, next string) string {
	v := url.Values{}
	for name, value := range map[string]string{"state": f.State, "mission": f.Mission, "agent": f.Agent, "q": f.Q, "next": next} {
		if value != "" {
			v.Set(name, value)
		}
	}
	if len(v) == 0 {
		return "/sessions"
	}
	return "/sessions?" + v.Encode()
}
