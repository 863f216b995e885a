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
	_, err := eachMember(obj, func(name string, v jsontext.Value, _, _ int) (bool, error) {
		return true, fn(name, v)
	})
	return err
}

// eachMember walks obj's members, giving fn the offsets in obj where each
// member's text starts (the end of the previous value, or of '{': the
// comma and spacing before it included) and where its value ends; fn
// returns false to stop. closing is the offset of the final '}', or -1
// when fn stopped.
func eachMember(obj []byte, fn func(name string, v jsontext.Value, start, end int) (bool, error)) (closing int, err error) {
	d := decoder(obj)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return -1, errNotObject
	}
	for d.PeekKind() != '}' {
		start := int(d.InputOffset())
		tok, err := d.ReadToken()
		if err != nil {
			return -1, err
		}
		name := tok.String()
		v, err := d.ReadValue()
		if err != nil {
			return -1, err
		}
		if more, err := fn(name, v, start, int(d.InputOffset())); !more || err != nil {
			return -1, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return -1, err
	}
	return int(d.InputOffset()) - 1, nil
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
	eachMember(obj, func(n string, v jsontext.Value, _, _ int) (bool, error) {
		if n == name {
			found = v
		}
		return found == nil, nil
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
	var out []byte
	first := true
	closing, err := eachMember(obj, func(n string, old jsontext.Value, start, end int) (bool, error) {
		if n != name {
			first = false
			return true, nil
		}
		switch comma := bytes.IndexByte(obj[end:], ','); {
		case v != nil:
			out = splice(obj, end-len(old), end, v)
		case !first || comma < 0:
			out = splice(obj, start, end, nil) // with the comma before it
		default:
			out = splice(obj, start, end+comma+1, nil) // the first of several: the comma after it
		}
		return false, nil
	})
	switch {
	case err != nil:
		return nil, err
	case out != nil:
		return out, nil
	case v == nil:
		return bytes.Clone(obj), nil
	}
	add := make([]byte, 0, len(name)+len(v)+4)
	if !first {
		add = append(add, ',')
	}
	if add, err = jsontext.AppendQuote(add, name); err != nil {
		return nil, err
	}
	return splice(obj, closing, closing, append(append(add, ':'), v...)), nil
}

// splice returns a copy of b with b[i:j] replaced by with.
func splice(b []byte, i, j int, with []byte) []byte {
	out := make([]byte, 0, len(b)-(j-i)+len(with))
	return append(append(append(out, b[:i]...), with...), b[j:]...)
}
