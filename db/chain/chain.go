// Package chain is the hash chain of Madebook's two append-only records:
// the timeline (table events: every session's events, transitions and
// people's answers) and the activity record (table admin_activity: every
// admin action, before and after). It is pure: the canonical encoding of
// a row, its hash, the JSON line `madebook audit export` writes, and the
// check `madebook audit verify` runs. The writers (db.AppendEvent,
// db.AppendActivity) and the verifier use the same functions.
//
// Each table is its own chain, ordered by id: a row's prev_hash is the hash
// of the row before it in the same table (Genesis for the first), and its
// hash is SHA-256 over Canonical, which holds the prev_hash, so changing,
// removing, adding or reordering any row breaks every link after it.
// Two chains rather than one because the tables have their own ids and
// their own writers: one chain across both would need an order between
// them that nothing else in Madebook has.
//
// Canonical encoding, version 1: the concatenation of netstrings
// (LENGTH ":" BYTES ","; LENGTH in decimal, of the UTF-8 bytes):
//
//	ns("madebook-chain-v1") ns(prev_hash) ns(chain) ns(id in decimal) ns(field 1) … ns(field n)
//
// with the chain's content fields in their fixed order (Fields), each
// text as stored, and "~" in place of the netstring for a NULL (no
// netstring starts with "~", so NULL and "" differ). Text is first made
// valid UTF-8, each byte that is not part of a valid sequence replaced by
// U+FFFD, as a JSON line carries it. The hash is the SHA-256 of that, in
// lowercase hex.
package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// The chains, named as their tables.
const (
	// Events is the timeline.
	Events = "events"
	// Activity is the activity record.
	Activity = "admin_activity"
)

// Version names the canonical encoding; it is the first thing hashed.
const Version = "madebook-chain-v1"

// Genesis is the prev_hash of a chain's first row: 64 zeros.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Field is one content field of a chain: its name in a JSON line and
// whether it may be null.
type Field struct {
	Name     string
	Nullable bool
}

// fields are each chain's content fields, in the order they are hashed
// and written.
var fields = map[string][]Field{
	Events:   {{Name: "at"}, {Name: "actor"}, {Name: "session"}, {Name: "kind"}, {Name: "ref"}, {Name: "detail"}},
	Activity: {{Name: "at"}, {Name: "actor"}, {Name: "action"}, {Name: "target"}, {Name: "before_json", Nullable: true}, {Name: "after_json", Nullable: true}},
}

// Chains are the chains, in the order an export writes them.
var Chains = []string{Events, Activity}

// Fields returns a chain's content fields in order, or nil for a name
// that is not a chain.
func Fields(chain string) []Field { return fields[chain] }

// Value is one field's content: text, or NULL.
type Value struct {
	Text string
	Null bool
}

// Text is a value that is text.
func Text(s string) Value { return Value{Text: s} }

// Nullable is the text s, or NULL when valid is false (as sql.NullString
// holds it).
func Nullable(s string, valid bool) Value { return Value{Text: s, Null: !valid} }

// Row is one row of a chain: which chain, its id, its content in the
// chain's field order, and its two hashes.
type Row struct {
	Chain    string
	ID       int64
	Values   []Value
	PrevHash string
	Hash     string
}

// Event is a timeline row's content, unchained.
func Event(id int64, at, actor, session, kind, ref, detail string) Row {
	return Row{Chain: Events, ID: id, Values: []Value{Text(at), Text(actor), Text(session), Text(kind), Text(ref), Text(detail)}}
}

// ActivityEntry is an activity record row's content, unchained.
func ActivityEntry(id int64, at, actor, action, target string, before, after Value) Row {
	return Row{Chain: Activity, ID: id, Values: []Value{Text(at), Text(actor), Text(action), Text(target), before, after}}
}

// Linked returns the row chained onto prev: prev_hash prev, and the hash
// of its content after it.
func (r Row) Linked(prev string) Row {
	r.PrevHash = prev
	r.Hash = Sum(r.Chain, prev, r.ID, r.Values)
	return r
}

// HashHolds reports whether the row's hash is the hash of its content and
// prev_hash.
func (r Row) HashHolds() bool { return r.Hash == Sum(r.Chain, r.PrevHash, r.ID, r.Values) }

// Sum is the hash of a row: lowercase hex SHA-256 of Canonical.
func Sum(chain, prev string, id int64, values []Value) string {
	h := sha256.Sum256(Canonical(chain, prev, id, values))
	return hex.EncodeToString(h[:])
}

// Canonical is the bytes a row's hash is taken over (the package comment
// defines them).
func Canonical(chain, prev string, id int64, values []Value) []byte {
	b := make([]byte, 0, 160)
	b = netstring(b, Version)
	b = netstring(b, prev)
	b = netstring(b, chain)
	b = netstring(b, strconv.FormatInt(id, 10))
	for _, v := range values {
		if v.Null {
			b = append(b, '~')
			continue
		}
		b = netstring(b, v.Text)
	}
	return b
}

// netstring appends s, made valid UTF-8, as a netstring.
func netstring(b []byte, s string) []byte {
	s = ValidUTF8(s)
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	b = append(b, s...)
	return append(b, ',')
}

// ValidUTF8 returns s with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as encoding/json writes a string: what a
// JSON line can carry of it.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, s[i:i+n]...)
		}
		i += n
	}
	return string(out)
}
