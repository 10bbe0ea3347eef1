package views

import "github.com/madebook/madebook/internal/governance"

// sessionsFiltered reports whether any filter narrows the sessions list.
func sessionsFiltered(f governance.SessionFilter) bool {
	return f.State != "" || f.Mission != "" || f.Agent != "" || f.Q != ""
}

// sessionsURL is the sessions list under f's filters, from the page next
// names ("" for the first page).
func sessionsURL(f governance.SessionFilter, next string) string {
	return withQuery("/sessions", map[string]string{"state": f.State, "mission": f.Mission, "agent": f.Agent, "q": f.Q, "next": next})
}
