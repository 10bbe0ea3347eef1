package change

import (
	"slices"
	"strconv"
	"strings"

	"github.com/madebook/madebook/internal/glob"
	"github.com/madebook/madebook/internal/protocol"
)

// Clause is one term of a mission's contract, as the change checks read it.
//
//   - forbid_path: Value is a glob (see package glob); the change must not
//     touch a path that matches it.
//   - require_path: Value is a glob; the change must touch at least one path
//     that matches it.
//   - forbid_dependency: Value is a dependency name, matched exactly, or a
//     prefix ending in "*" ("@types/*" forbids "@types/node"; "*" alone
//     forbids adding any dependency). A "*" anywhere else is literal.
//   - max_files_changed: Value is a positive whole number; the change must
//     not touch more files than that.
type Clause struct {
	Kind  protocol.ClauseKind `json:"kind"`
	Value string              `json:"value"`
}

// BreachID is the stable id of the breach of the clause at index i (from 0)
// of a mission's contract: "clause-1" for the first clause. It counts from 1
// as the mission form's own messages do ("Contract clause 1 …"), and it
// depends only on the clause's place in the contract, so the same clause
// broken by successive change reports keeps the same id (the brief's ref).
func BreachID(i int) string { return "clause-" + strconv.Itoa(i+1) }

// Breaches returns the clauses of a mission's contract that the change
// breaks, in clause order, each with the id BreachID gives its index. It is
// pure: Breach.At is left zero for the caller to stamp. It returns nil when
// the change keeps the contract.
//
// Found lists what broke the clause, sorted and without repeats, so the same
// change always gives the same text however the agent ordered its report:
// the changed paths a forbid_path glob matches, or the added dependencies a
// forbid_dependency value matches. A require_path breach has no Found (the
// point is what is missing), and a max_files_changed breach has Count, the
// number of files in the change (len(c.Files)).
//
// A clause that cannot be read is skipped rather than reported: an unknown
// kind, a glob that glob.Valid refuses (an empty one included), or a
// max_files_changed value that is not a positive whole number. An empty
// forbid_dependency value forbids nothing. Mission
// creation validates clauses, so such a clause only reaches here from a
// contract written before a rule existed; breaking an agent on a clause it
// cannot satisfy would hold it in REMEDIATE for ever.
func Breaches(clauses []Clause, c Change) []protocol.Breach {
	var out []protocol.Breach
	for i, cl := range clauses {
		b := protocol.Breach{ID: BreachID(i), Kind: cl.Kind, Value: cl.Value}
		switch cl.Kind {
		case protocol.ForbidPath:
			if glob.Valid(cl.Value) != nil {
				continue
			}
			b.Found = matchingPaths(cl.Value, c.Files)
			if len(b.Found) == 0 {
				continue
			}
		case protocol.RequirePath:
			if glob.Valid(cl.Value) != nil || len(matchingPaths(cl.Value, c.Files)) > 0 {
				continue
			}
		case protocol.ForbidDependency:
			b.Found = matchingDependencies(cl.Value, c.Dependencies)
			if len(b.Found) == 0 {
				continue
			}
		case protocol.MaxFilesChanged:
			n, err := strconv.Atoi(strings.TrimSpace(cl.Value))
			if err != nil || n < 1 || len(c.Files) <= n {
				continue
			}
			b.Count = len(c.Files)
		default:
			continue
		}
		out = append(out, b)
	}
	return out
}

// matchingPaths returns the changed paths that match pattern, sorted and
// without repeats. A file with no path matches nothing.
func matchingPaths(pattern string, files []File) []string {
	var found []string
	for _, f := range files {
		if f.Path != "" && glob.Match(pattern, f.Path) {
			found = append(found, f.Path)
		}
	}
	return sortedSet(found)
}

// matchingDependencies returns the added dependencies that value forbids,
// sorted and without repeats.
func matchingDependencies(value string, deps []string) []string {
	var found []string
	for _, d := range deps {
		if d != "" && DependencyMatch(value, d) {
			found = append(found, d)
		}
	}
	return sortedSet(found)
}

// DependencyMatch reports whether the dependency dep is the one value names:
// value exactly, or, when value ends in "*", any dependency that begins with
// what comes before it.
func DependencyMatch(value, dep string) bool {
	if prefix, ok := strings.CutSuffix(value, "*"); ok {
		return strings.HasPrefix(dep, prefix)
	}
	return dep == value
}

func sortedSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	return slices.Compact(s)
}
