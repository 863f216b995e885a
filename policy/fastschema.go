package policy

import (
	"math"
	"regexp"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
)

// fastSchema answers "valid" for the arguments a schema accepts, for the
// schemas most tools announce: type, properties, required,
// additionalProperties, items, string lengths and patterns, integer bounds,
// enums of strings. It never rejects anything itself: when it cannot say
// "valid" the arguments go to kaptinlin, which decides and explains.
//
// Why it exists: kaptinlin v0.9.8 formats every scalar it evaluates with
// fmt.Sprintf("%#v") twice (its recursion guard), which dominated a
// policy evaluation on the relay's hot path (integration/bench/BENCH.md
// has the figures). fastSchema is built only from a schema whose every keyword it
// knows, with the same semantics as kaptinlin (Go's regexp for pattern,
// code points for lengths, an integer as any number without a fractional
// part); FuzzFastSchema holds it to kaptinlin's verdict on generated
// schemas and arguments. A schema with any other keyword ($ref, anyOf,
// not, uniqueItems, a fractional bound, ...) gets no fastSchema at all.
type fastSchema struct {
	never bool     // the false schema
	types typeMask // 0: any type

	minLength, maxLength int // maxLength -1: none
	pattern              *regexp.Regexp

	// Each exact: an integer of at most 2^53.
	minimum, maximum, exclMinimum, exclMaximum bound

	enum    []any // strings, booleans and null only
	hasEnum bool

	properties                   map[string]*fastSchema
	required                     []string
	requiredBit                  map[string]uint64 // each distinct required name's bit, when at most 64
	requiredAll                  uint64
	additional                   *fastSchema // nil: any member
	minProperties, maxProperties int         // maxProperties -1: none

	items              *fastSchema // nil: any element
	minItems, maxItems int         // maxItems -1: none
}

// bound is a numeric limit, when the schema sets it.
type bound struct {
	v   float64
	set bool
}

type typeMask uint8

const (
	typeNull typeMask = 1 << iota
	typeBoolean
	typeObject
	typeArray
	typeNumber
	typeInteger
	typeString
)

var typeNames = map[string]typeMask{
	"null": typeNull, "boolean": typeBoolean, "object": typeObject, "array": typeArray,
	"number": typeNumber, "integer": typeInteger, "string": typeString,
}

// fastDialects are the $schema values whose keywords in the subset mean
// what they mean in 2020-12 (draft-04's boolean exclusiveMinimum does not).
var fastDialects = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2019-09/schema":  true,
	"http://json-schema.org/draft-07/schema#":       true,
	"http://json-schema.org/draft-07/schema":        true,
	"https://json-schema.org/draft/2020-12/schema#": true,
}

// maxExact is the largest integer that float64 holds exactly; comparing a
// decoded number with such a bound in float64 is exact, as kaptinlin's
// big.Rat comparison is.
const maxExact = 1 << 53

// compileFastSchema builds the fast acceptor for a schema's JSON text, or
// returns nil when the schema uses anything outside the subset.
func compileFastSchema(raw []byte) *fastSchema {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	f, ok := buildFast(v, true)
	if !ok {
		return nil
	}
	return f
}

func buildFast(v any, root bool) (*fastSchema, bool) {
	f := &fastSchema{maxLength: -1, maxProperties: -1, maxItems: -1}
	switch s := v.(type) {
	case bool:
		f.never = !s
		return f, true
	case map[string]any:
		for k, kv := range s {
			if !f.keyword(k, kv, root) {
				return nil, false
			}
		}
		return f, true
	}
	return nil, false
}

// keyword adds one keyword to f; false means it is outside the subset.
func (f *fastSchema) keyword(k string, v any, root bool) bool {
	switch k {
	case "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "format":
		return true // annotations (format asserts nothing unless the compiler is told to)
	case "$schema":
		s, ok := v.(string)
		return ok && root && fastDialects[s]
	case "type":
		return f.typeKeyword(v)
	case "pattern":
		s, ok := v.(string)
		if !ok {
			return false
		}
		re, err := regexp.Compile(s)
		f.pattern = re
		return err == nil
	case "enum":
		list, ok := v.([]any)
		if !ok || len(list) == 0 || f.hasEnum {
			return false
		}
		for _, e := range list {
			if !simpleScalar(e) {
				return false
			}
		}
		f.enum, f.hasEnum = list, true
		return true
	case "const":
		if !simpleScalar(v) || f.hasEnum {
			return false
		}
		f.enum, f.hasEnum = []any{v}, true
		return true
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		f.properties = make(map[string]*fastSchema, len(m))
		for name, sub := range m {
			fs, ok := buildFast(sub, false)
			if !ok {
				return false
			}
			f.properties[name] = fs
		}
		return true
	case "required":
		list, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				return false
			}
			f.required = append(f.required, s)
		}
		if len(f.required) <= 64 {
			f.requiredBit = map[string]uint64{}
			for _, name := range f.required {
				if _, dup := f.requiredBit[name]; !dup {
					f.requiredBit[name] = 1 << len(f.requiredBit)
				}
			}
			f.requiredAll = 1<<len(f.requiredBit) - 1
		}
		return true
	case "additionalProperties":
		fs, ok := buildFast(v, false)
		f.additional = fs
		return ok
	case "items":
		fs, ok := buildFast(v, false) // a schema, not draft-07's tuple form
		f.items = fs
		return ok
	}
	if p := f.countKeyword(k); p != nil {
		n, ok := count(v)
		*p = n
		return ok
	}
	if b := f.boundKeyword(k); b != nil {
		b.v, b.set = exactBound(v)
		return b.set
	}
	return false
}

// countKeyword returns the field of a keyword whose value is a count.
func (f *fastSchema) countKeyword(k string) *int {
	switch k {
	case "minLength":
		return &f.minLength
	case "maxLength":
		return &f.maxLength
	case "minProperties":
		return &f.minProperties
	case "maxProperties":
		return &f.maxProperties
	case "minItems":
		return &f.minItems
	case "maxItems":
		return &f.maxItems
	}
	return nil
}

// boundKeyword returns the field of a numeric limit keyword.
func (f *fastSchema) boundKeyword(k string) *bound {
	switch k {
	case "minimum":
		return &f.minimum
	case "maximum":
		return &f.maximum
	case "exclusiveMinimum":
		return &f.exclMinimum
	case "exclusiveMaximum":
		return &f.exclMaximum
	}
	return nil
}

func (f *fastSchema) typeKeyword(v any) bool {
	switch t := v.(type) {
	case string:
		f.types = typeNames[t]
		return f.types != 0
	case []any:
		if len(t) == 0 {
			return false
		}
		for _, e := range t {
			s, _ := e.(string)
			bit := typeNames[s]
			if bit == 0 {
				return false
			}
			f.types |= bit
		}
		return true
	}
	return false
}

// count reads a non-negative integer keyword value of a sane size.
func count(v any) (int, bool) {
	x, ok := v.(float64)
	if !ok || x < 0 || x > math.MaxInt32 || x != math.Trunc(x) {
		return -1, false
	}
	return int(x), true
}

func exactBound(v any) (float64, bool) {
	x, ok := v.(float64)
	return x, ok && x == math.Trunc(x) && math.Abs(x) <= maxExact
}

func simpleScalar(v any) bool {
	switch v.(type) {
	case string, bool, nil:
		return true
	}
	return false
}

// accepts reports whether the value at node i of the argument tree
// certainly satisfies the schema. false means "ask kaptinlin", not
// "invalid".
func (f *fastSchema) accepts(t *argTree, i int32) bool {
	if f.never {
		return false
	}
	n := &t.nodes[i]
	if f.types != 0 && f.types&typeOf(n) == 0 {
		return false
	}
	if f.hasEnum && !inEnum(f.enum, n) {
		return false
	}
	switch n.kind {
	case argString:
		return f.acceptsString(n.str)
	case argNumber:
		return f.acceptsNumber(n.number())
	case argObject:
		return f.acceptsObject(t, i)
	case argArray:
		return f.acceptsArray(t, i)
	}
	return true
}

// typeOf is the instance's type as kaptinlin classifies it: a number is
// also an integer when it has no fractional part.
func typeOf(n *argNode) typeMask {
	switch n.kind {
	case argNull:
		return typeNull
	case argTrue, argFalse:
		return typeBoolean
	case argString:
		return typeString
	case argNumber:
		if x := n.number(); x == math.Trunc(x) {
			return typeNumber | typeInteger
		}
		return typeNumber
	case argObject:
		return typeObject
	case argArray:
		return typeArray
	}
	return 0
}

// inEnum compares a scalar with an enum of strings, booleans and null.
func inEnum(enum []any, n *argNode) bool {
	for _, e := range enum {
		switch e := e.(type) {
		case string:
			if n.kind == argString && n.str == e {
				return true
			}
		case bool:
			if n.kind == argTrue && e || n.kind == argFalse && !e {
				return true
			}
		case nil:
			if n.kind == argNull {
				return true
			}
		}
	}
	return false
}

func (f *fastSchema) acceptsString(s string) bool {
	// A code point takes one to four bytes, so the byte length often
	// settles both bounds without counting.
	if f.minLength > len(s)/utf8.UTFMax || (f.maxLength >= 0 && len(s) > f.maxLength) {
		n := utf8.RuneCountInString(s)
		if n < f.minLength || (f.maxLength >= 0 && n > f.maxLength) {
			return false
		}
	}
	return f.pattern == nil || f.pattern.MatchString(s)
}

func (f *fastSchema) acceptsNumber(x float64) bool {
	return (!f.minimum.set || x >= f.minimum.v) && (!f.maximum.set || x <= f.maximum.v) &&
		(!f.exclMinimum.set || x > f.exclMinimum.v) && (!f.exclMaximum.set || x < f.exclMaximum.v)
}

func (f *fastSchema) acceptsObject(t *argTree, i int32) bool {
	size := int(t.nodes[i].len)
	if size < f.minProperties || (f.maxProperties >= 0 && size > f.maxProperties) {
		return false
	}
	if f.requiredBit == nil {
		// More than 64 required names: look each up.
		for _, name := range f.required {
			if _, ok := t.member(i, name); !ok {
				return false
			}
		}
	}
	var present uint64 // the required names seen, one bit each
	for c := i + 1; c < t.nodes[i].end; c = t.nodes[c].end {
		name := t.nodes[c].name
		present |= f.requiredBit[name]
		if sub, ok := f.properties[name]; ok {
			if !sub.accepts(t, c) {
				return false
			}
		} else if f.additional != nil && !f.additional.accepts(t, c) {
			return false
		}
	}
	return f.requiredBit == nil || present == f.requiredAll
}

func (f *fastSchema) acceptsArray(t *argTree, i int32) bool {
	size := int(t.nodes[i].len)
	if size < f.minItems || (f.maxItems >= 0 && size > f.maxItems) {
		return false
	}
	if f.items != nil {
		for c := i + 1; c < t.nodes[i].end; c = t.nodes[c].end {
			if !f.items.accepts(t, c) {
				return false
			}
		}
	}
	return true
}
