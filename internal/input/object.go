package input

import (
	"encoding/json"
	"maps"
)

// Object is a JSON object's members, each value kept as its JSON: the
// input of a tool call an agent asks about. Shallow reads a flat one
// (plain keys, scalar values, no key twice, at most flatMax members) by
// keeping its bytes, with no map built; encoding/json decodes any other
// into a map (UnmarshalJSON), as it decodes a map[string]json.RawMessage,
// null included. The zero Object has no members.
type Object struct {
	flat []byte // a flat object's JSON, as Shallow read it
	m    map[string]json.RawMessage
}

// flatMax is the most members a flat Object has: Shallow leaves a larger
// object to encoding/json, so that finding a duplicate key is a look at a
// few keys, never a quadratic walk.
const flatMax = 16

// UnmarshalJSON decodes data as encoding/json decodes it into a
// map[string]json.RawMessage, refusing what that refuses in its words.
func (o *Object) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*o = Object{m: m}
	return nil
}

// ParseObject reads data, one JSON object: a flat one as Shallow reads
// it, any other through encoding/json (UnmarshalJSON).
func ParseObject(data []byte) (Object, error) {
	if o, _, ok := flatObject(data, skipSpace(data, 0), true); ok {
		return o, nil
	}
	var o Object
	err := json.Unmarshal(data, &o)
	return o, err
}

// Lookup sets values[i] to the JSON value of member keys[i], or to nil
// when the object has no such member, reading a flat object once.
func (o Object) Lookup(keys []string, values []json.RawMessage) {
	clear(values)
	if o.flat == nil {
		for i, k := range keys {
			values[i] = o.m[k]
		}
		return
	}
	object(o.flat, 0, false, func(key []byte, i int) (int, bool) {
		end, _ := scalar(o.flat, i) // Shallow checked every value
		for j, k := range keys {
			if k == string(key) {
				values[j] = o.flat[i:end:end]
			}
		}
		return end, true
	})
}

// Map returns the members as a map, a new one.
func (o Object) Map() map[string]json.RawMessage {
	if o.flat == nil {
		return maps.Clone(o.m)
	}
	m := map[string]json.RawMessage{}
	object(o.flat, 0, false, func(key []byte, i int) (int, bool) {
		end, _ := scalar(o.flat, i)
		m[string(key)] = o.flat[i:end:end]
		return end, true
	})
	return m
}
