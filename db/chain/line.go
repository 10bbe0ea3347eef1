package chain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// AppendLine appends the row as one JSON line (ending in a newline), its
// fields in a fixed order: chain, id, the chain's content fields, then
// prev_hash and hash. Text is written as encoding/json writes it, without
// HTML escaping; a NULL is null.
func AppendLine(b []byte, r Row) ([]byte, error) {
	fs := fields[r.Chain]
	if fs == nil {
		return b, fmt.Errorf("%q is not a chain", r.Chain)
	}
	if len(r.Values) != len(fs) {
		return b, fmt.Errorf("%s row %d has %d values, want %d", r.Chain, r.ID, len(r.Values), len(fs))
	}
	b = append(b, `{"chain":`...)
	b = appendString(b, r.Chain)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	for i, f := range fs {
		b = append(b, ',')
		b = appendString(b, f.Name)
		b = append(b, ':')
		if r.Values[i].Null {
			b = append(b, "null"...)
		} else {
			b = appendString(b, r.Values[i].Text)
		}
	}
	b = append(b, `,"prev_hash":`...)
	b = appendString(b, r.PrevHash)
	b = append(b, `,"hash":`...)
	b = appendString(b, r.Hash)
	return append(b, "}\n"...), nil
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		// A string always encodes: this is a broken invariant of
		// encoding/json, not bad input.
		panic(err)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// ParseLine reads one JSON line of a chain: an object with exactly the
// fields AppendLine writes for its chain, each once, in any order. The
// error says what is wrong with the line.
func ParseLine(line []byte) (Row, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return Row{}, errors.New("not a JSON object")
	}
	got := map[string]json.RawMessage{}
	var order []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return Row{}, fmt.Errorf("not JSON: %w", err)
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return Row{}, fmt.Errorf("field %q: not JSON: %w", name, err)
		}
		if _, dup := got[name]; dup {
			return Row{}, fmt.Errorf("field %q appears twice", name)
		}
		got[name] = v
		order = append(order, name)
	}
	if _, err := dec.Token(); err != nil {
		return Row{}, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Row{}, errors.New("more than one JSON value on the line")
	}

	var r Row
	if err := text(got, "chain", &r.Chain); err != nil {
		return Row{}, err
	}
	fs := fields[r.Chain]
	if fs == nil {
		return Row{}, fmt.Errorf("chain %q is neither %s nor %s", r.Chain, Events, Activity)
	}
	known := map[string]bool{"chain": true, "id": true, "prev_hash": true, "hash": true}
	for _, f := range fs {
		known[f.Name] = true
	}
	for _, name := range order {
		if !known[name] {
			return Row{}, fmt.Errorf("field %q is not a field of %s", name, r.Chain)
		}
	}
	raw, ok := got["id"]
	if !ok {
		return Row{}, errors.New(`field "id" is missing`)
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || id < 1 {
		return Row{}, fmt.Errorf("field \"id\" is %s, not a whole number from 1", raw)
	}
	r.ID = id
	r.Values = make([]Value, len(fs))
	for i, f := range fs {
		if f.Nullable && string(got[f.Name]) == "null" {
			r.Values[i] = Value{Null: true}
			continue
		}
		if err := text(got, f.Name, &r.Values[i].Text); err != nil {
			return Row{}, err
		}
	}
	if err := text(got, "prev_hash", &r.PrevHash); err != nil {
		return Row{}, err
	}
	if err := text(got, "hash", &r.Hash); err != nil {
		return Row{}, err
	}
	return r, nil
}

// text reads the string field name of an object into s.
func text(got map[string]json.RawMessage, name string, s *string) error {
	raw, ok := got[name]
	if !ok {
		return fmt.Errorf("field %q is missing", name)
	}
	if err := json.Unmarshal(raw, s); err != nil || string(raw) == "null" {
		return fmt.Errorf("field %q is %s, not a string", name, raw)
	}
	return nil
}
