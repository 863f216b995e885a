package rawjson

import (
	"bytes"
	"errors"

	"github.com/go-json-experiment/json/jsontext"
)

// errNotObject and errNotArray are what the walkers return for a value of
// another kind.
var (
	errNotObject = errors.New("not a JSON object")
	errNotArray  = errors.New("not a JSON array")
)

// decoder reads obj in place: the values it returns are slices of obj,
// valid as long as obj is.
func decoder(b []byte) *jsontext.Decoder { return jsontext.NewDecoder(bytes.NewBuffer(b)) }

// EachMember calls fn with the name, unescaped, and the raw value of each
// member of the JSON object obj, in order (duplicates included: the
// validator refuses them in messages). The values are slices of obj. It
// returns the first error fn returns, or an error when obj is not a JSON
// object. It is the one member walker of the policy layer's readers.
func EachMember(obj []byte, fn func(name string, v jsontext.Value) error) error {
	_, err := eachMember(obj, func(name string, v jsontext.Value, _ int) (bool, error) {
		return true, fn(name, v)
	})
	return err
}

// eachMember walks obj's members, giving fn each value's end offset in
// obj; fn returns false to stop. It returns whether fn stopped.
func eachMember(obj []byte, fn func(name string, v jsontext.Value, end int) (bool, error)) (bool, error) {
	d := decoder(obj)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return false, errNotObject
	}
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return false, err
		}
		name := tok.String()
		v, err := d.ReadValue()
		if err != nil {
			return false, err
		}
		if more, err := fn(name, v, int(d.InputOffset())); !more || err != nil {
			return !more, err
		}
	}
	_, err := d.ReadToken()
	return false, err
}

// EachElement calls fn with the index and the raw value of each element
// of the JSON array arr, in order; the values are slices of arr. It
// returns the first error fn returns, or an error when arr is not a JSON
// array.
func EachElement(arr []byte, fn func(i int, v jsontext.Value) error) error {
	d := decoder(arr)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '[' {
		return errNotArray
	}
	for i := 0; d.PeekKind() != ']'; i++ {
		v, err := d.ReadValue()
		if err != nil {
			return err
		}
		if err := fn(i, v); err != nil {
			return err
		}
	}
	_, err := d.ReadToken()
	return err
}

// Member returns the raw value of the first member of the JSON object obj
// named name, or nil when obj is not an object or has no such member.
func Member(obj []byte, name string) jsontext.Value {
	var found jsontext.Value
	eachMember(obj, func(n string, v jsontext.Value, _ int) (bool, error) {
		if n == name {
			found = v
			return false, nil
		}
		return true, nil
	})
	return found
}

// SetMember returns a copy of the JSON object obj in which the first
// member named name has the value v, or is removed when v is nil; without
// such a member, one is added at the end (unless v is nil). Every other
// byte is as it was, spacing and escapes included, so a rewrite changes
// only what it means to. It returns an error when obj is not a JSON
// object.
func SetMember(obj []byte, name string, v []byte) ([]byte, error) {
	d := decoder(obj)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errNotObject
	}
	first := true
	for d.PeekKind() != '}' {
		start := int(d.InputOffset()) // the end of the previous member, or of '{'
		tok, err := d.ReadToken()
		if err != nil {
			return nil, err
		}
		n := tok.String()
		old, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		end := int(d.InputOffset())
		if n != name {
			first = false
			continue
		}
		if v != nil {
			return splice(obj, end-len(old), end, v), nil
		}
		if !first || d.PeekKind() == '}' {
			return splice(obj, start, end, nil), nil // with the comma before it
		}
		// The first of several: the comma after it goes.
		comma := end + bytes.IndexByte(obj[end:], ',')
		return splice(obj, start, comma+1, nil), nil
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, err
	}
	if v == nil {
		return bytes.Clone(obj), nil
	}
	closing := int(d.InputOffset()) - 1
	add := make([]byte, 0, len(name)+len(v)+4)
	if !first {
		add = append(add, ',')
	}
	add, err := jsontext.AppendQuote(add, name)
	if err != nil {
		return nil, err
	}
	add = append(append(add, ':'), v...)
	return splice(obj, closing, closing, add), nil
}

// splice returns a copy of b with b[i:j] replaced by with.
func splice(b []byte, i, j int, with []byte) []byte {
	out := make([]byte, 0, len(b)-(j-i)+len(with))
	return append(append(append(out, b[:i]...), with...), b[j:]...)
}
