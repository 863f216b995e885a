package policy

import (
	"crypto/sha256"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/kaptinlin/jsonschema"

	"github.com/mcpguard/mcpguard/policy/message"
)

// argSchema is a compiled JSON Schema for a tool's arguments.
//
// Schemas are compiled with a fresh compiler each (kaptinlin caches by $id,
// so a server could otherwise swap one tool's schema for another's), with
// no network loaders (a $ref must not make mcpguard fetch anything), and a
// schema with an unresolvable $ref is refused: kaptinlin would otherwise
// treat the reference as always valid, i.e. fail open.
type argSchema struct {
	// kaptinlin compiles `pattern` regexps lazily without locking; one
	// validation at a time per schema.
	mu sync.Mutex
	s  *jsonschema.Schema

	fast *fastSchema // nil when the schema is outside its subset
}

func compileArgSchema(raw []byte) (*argSchema, error) {
	c := jsonschema.NewCompiler()
	delete(c.Loaders, "http")
	delete(c.Loaders, "https")
	s, err := c.Compile(raw)
	if err != nil {
		return nil, err
	}
	if refs := s.UnresolvedReferenceURIs(); len(refs) > 0 {
		return nil, errors.New("unresolvable $ref " + strings.Join(refs, ", "))
	}
	return &argSchema{s: s, fast: compileFastSchema(raw)}, nil
}

// schemaCache remembers compiled input schemas by the SHA-256 of their
// exact bytes, for every session of one policy: a server that announces
// the same tools to each session (and `eval`, which starts a session per
// message) has each schema compiled once. Equal bytes compile to equal
// schemas, each still by a compiler of its own, and an argSchema locks its
// own validation, so sessions and tools may share one. It holds schemas
// whose texts total at most maxCachedSchemaBytes (bounded memory against a
// server that invents new schemas); past that, schemas are compiled
// uncached. A schema that does not compile is remembered too. Safe for
// concurrent use; a nil cache compiles every schema.
type schemaCache struct {
	mu    sync.Mutex
	m     map[[sha256.Size]byte]compiledSchema
	bytes int
}

type compiledSchema struct {
	s   *argSchema
	err error
}

const maxCachedSchemaBytes = 1 << 20

func newSchemaCache() *schemaCache {
	return &schemaCache{m: map[[sha256.Size]byte]compiledSchema{}}
}

// compile is compileArgSchema(raw), from the cache when raw was compiled
// before.
func (c *schemaCache) compile(raw []byte) (*argSchema, error) {
	if c == nil {
		return compileArgSchema(raw)
	}
	key := sha256.Sum256(raw)
	c.mu.Lock()
	got, done := c.m[key]
	c.mu.Unlock()
	if done {
		return got.s, got.err
	}
	got.s, got.err = compileArgSchema(raw)
	c.mu.Lock()
	if _, dup := c.m[key]; !dup && c.bytes+len(raw) <= maxCachedSchemaBytes {
		c.m[key] = got
		c.bytes += len(raw)
	}
	c.mu.Unlock()
	return got.s, got.err
}

// validate checks a call's arguments. Failures carry the keyword, the
// instance path and a message made from the validator's stable code, never
// its prose: that prose can quote the caller's value.
func (a *argSchema) validate(t *argTree) []message.ValidationError {
	if a.fast != nil && a.fast.accepts(t, 0) {
		return nil
	}
	args, err := t.any()
	if err != nil {
		return []message.ValidationError{{Keyword: "schema", Message: "arguments cannot be decoded"}}
	}
	a.mu.Lock()
	res := a.s.Validate(args)
	a.mu.Unlock()
	if res.IsValid() {
		return nil
	}
	var out []message.ValidationError
	for _, f := range schemaFailures(res) {
		msg := strings.ReplaceAll(f.Code, "_", " ")
		if msg == "" {
			msg = "fails " + f.Keyword
		}
		out = append(out, message.ValidationError{Keyword: f.Keyword, InstancePath: f.InstancePath, Message: msg})
	}
	if len(out) == 0 {
		out = append(out, message.ValidationError{Keyword: "schema", Message: "arguments do not match the schema"})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].InstancePath < out[j].InstancePath })
	return out
}
