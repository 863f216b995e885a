package policy

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/kaptinlin/jsonschema"

	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// SchemaJSON is the JSON Schema every policy file is validated against. It
// ships in the repo (policy/policy.schema.json) so editors can use it too.
//
//go:embed policy.schema.json
var SchemaJSON []byte

// maxPolicyBytes bounds a policy file; real ones are a few KiB.
const maxPolicyBytes = 1 << 20

// Error is a problem in a policy file, located for the person fixing it.
type Error struct {
	File    string
	Line    int // 0 when unknown
	Column  int
	Message string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Message)
	}
	return e.File + ": " + e.Message
}

// Errors is every problem found in one file, in file order.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// LoadFile reads, validates and compiles a policy file. The error, if any,
// is an Errors value whose entries say file:line:col: what is wrong.
//
// A policy with pins: also reads its lock file, resolved against the
// policy file's directory; a lock file that is missing or does not check
// is an error (the server is not started without the pins it asks for).
func LoadFile(path string) (*Policy, error) {
	p, err := LoadFileWithoutLock(path)
	if err != nil || p.Pins == "" {
		return p, err
	}
	if p.lock, err = pins.ReadLock(p.Pins); err != nil {
		return nil, Errors{{File: path, Message: "pins: " + err.Error()}}
	}
	return p, nil
}

// LoadFileWithoutLock is LoadFile without reading the lock file (Pins is
// still resolved): for `mcpguard pin`, which writes it.
func LoadFileWithoutLock(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Errors{{File: path, Message: err.Error()}}
	}
	p, err := Load(path, data, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if p.Pins != "" && !filepath.IsAbs(p.Pins) {
		p.Pins = filepath.Join(filepath.Dir(path), p.Pins)
	}
	p.protect(path, p.Pins)
	return p, nil
}

// protect makes every path_scope check of p refuse the policy's own
// files (rules.PathScope.Protect), and remembers them for the checks a
// session builds from the client's roots.
func (p *Policy) protect(files ...string) {
	p.ownFiles = files
	for _, r := range p.ingress {
		if ps, ok := r.check.(*rules.PathScope); ok {
			ps.Protect(files...)
		}
	}
}

// Lock returns the lock file the policy enforces, nil when it has none.
func (p *Policy) Lock() *pins.Lock { return p.lock }

// WithLock returns a copy of p that enforces lock (nil: pin on first sight).
func (p *Policy) WithLock(lock *pins.Lock) *Policy {
	q := p.WithMode(p.Mode)
	q.lock = lock
	return q
}

// Load validates and compiles a policy from YAML. lookup expands ${VAR}.
func Load(name string, data []byte, lookup func(string) (string, bool)) (*Policy, error) {
	if len(data) > maxPolicyBytes {
		return nil, Errors{{File: name, Message: "policy file is larger than 1 MiB"}}
	}
	doc, positions, err := parseYAML(name, data)
	if err != nil {
		return nil, err
	}
	at := func(pointer, msg string) *Error {
		p := positions.nearest(pointer)
		return &Error{File: name, Line: p.line, Column: p.column, Message: msg}
	}
	if errs := validateAgainstSchema(doc, at); len(errs) > 0 {
		return nil, errs
	}
	var file fileV1
	if err := json.Unmarshal(doc, &file, json.RejectUnknownMembers(true)); err != nil {
		return nil, Errors{{File: name, Message: "policy does not fit the format: " + err.Error()}}
	}
	p, errs := compile(&file, at, lookup)
	if len(errs) > 0 {
		return nil, errs
	}
	// The server is started with mcpguard's environment: its credentials
	// are the known secrets.
	if err := p.learnSecrets(os.Environ(), lookup); err != nil {
		return nil, Errors{at("/secrets", err.Error())}
	}
	p.planCalls()
	p.Source = name
	return p, nil
}

type position struct{ line, column int }

// positionIndex maps JSON pointers into the document to where they start in the YAML.
type positionIndex map[string]position

// nearest finds the position of pointer or of its closest ancestor.
func (ix positionIndex) nearest(pointer string) position {
	for {
		if p, ok := ix[pointer]; ok {
			return p
		}
		i := strings.LastIndexByte(pointer, '/')
		if i < 0 {
			return ix[""]
		}
		pointer = pointer[:i]
	}
}

// parseYAML parses one YAML document into JSON and indexes the position of
// every node. Aliases are refused: they buy nothing in a policy and are the
// way to make a small file expand without bound.
func parseYAML(name string, data []byte) ([]byte, positionIndex, error) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, nil, yamlError(name, err)
	}
	var docs []*ast.DocumentNode
	for _, d := range file.Docs {
		if d.Body != nil {
			docs = append(docs, d)
		}
	}
	if len(docs) != 1 {
		return nil, nil, Errors{{File: name, Line: 1, Column: 1, Message: "a policy file holds exactly one YAML document"}}
	}
	ix := positionIndex{}
	if err := indexNode(name, docs[0].Body, "", ix); err != nil {
		return nil, nil, err
	}
	var v any
	if err := yaml.NodeToValue(docs[0].Body, &v); err != nil {
		return nil, nil, yamlError(name, err)
	}
	out, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return nil, nil, Errors{{File: name, Message: "policy is not representable as JSON: " + err.Error()}}
	}
	return out, ix, nil
}

func yamlError(name string, err error) error {
	if ye, ok := err.(yaml.Error); ok {
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			return Errors{{File: name, Line: tok.Position.Line, Column: tok.Position.Column, Message: ye.GetMessage()}}
		}
		return Errors{{File: name, Message: ye.GetMessage()}}
	}
	return Errors{{File: name, Message: err.Error()}}
}

// indexNode records where the node for each JSON pointer starts: the value
// for scalars (so `mode: lenient` points at lenient), the key for mappings
// and sequences (the line a person looks for).
func indexNode(name string, n ast.Node, pointer string, ix positionIndex) error {
	switch n := n.(type) {
	case *ast.AliasNode:
		p := n.GetToken().Position
		return Errors{{File: name, Line: p.Line, Column: p.Column, Message: "YAML aliases are not allowed in a policy"}}
	case *ast.AnchorNode:
		return indexNode(name, n.Value, pointer, ix)
	case *ast.TagNode:
		return indexNode(name, n.Value, pointer, ix)
	case *ast.MappingNode:
		if _, seen := ix[pointer]; !seen && len(n.Values) > 0 {
			ix[pointer] = tokenPosition(n.Values[0].Key)
		}
		for _, mv := range n.Values {
			if err := indexMappingValue(name, mv, pointer, ix); err != nil {
				return err
			}
		}
	case *ast.MappingValueNode:
		return indexMappingValue(name, n, pointer, ix)
	case *ast.SequenceNode:
		if _, seen := ix[pointer]; !seen {
			ix[pointer] = tokenPosition(n)
		}
		for i, v := range n.Values {
			if err := indexNode(name, v, pointer+"/"+strconv.Itoa(i), ix); err != nil {
				return err
			}
		}
	default:
		ix[pointer] = tokenPosition(n)
	}
	return nil
}

func indexMappingValue(name string, mv *ast.MappingValueNode, pointer string, ix positionIndex) error {
	if _, seen := ix[pointer]; !seen {
		ix[pointer] = tokenPosition(mv.Key)
	}
	key := mv.Key.GetToken().Value
	child := pointer + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
	ix[child] = tokenPosition(mv.Key)
	return indexNode(name, mv.Value, child, ix)
}

func tokenPosition(n ast.Node) position {
	if tok := n.GetToken(); tok != nil && tok.Position != nil {
		return position{tok.Position.Line, tok.Position.Column}
	}
	return position{1, 1}
}

// policySchema is policy.schema.json compiled, on the first policy file
// validated: the embedded baseline needs no validation, and compiling
// the schema was a seventh of every start.
var policySchema = sync.OnceValue(func() *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	delete(c.Loaders, "http")
	delete(c.Loaders, "https")
	s, err := c.Compile(SchemaJSON)
	if err != nil {
		panic("policy.schema.json does not compile: " + err.Error())
	}
	return s
})

// validateAgainstSchema checks the document against policy.schema.json and
// locates each failure in the YAML.
func validateAgainstSchema(doc []byte, at func(pointer, msg string) *Error) Errors {
	res := policySchema().ValidateJSON(doc)
	if res.IsValid() {
		return nil
	}
	var errs Errors
	seen := map[string]bool{}
	for _, e := range explainFailures(doc, schemaFailures(res)) {
		if seen[e.message] {
			continue
		}
		seen[e.message] = true
		errs = append(errs, at(e.pointer, e.message))
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Column < errs[j].Column
	})
	return errs
}

type schemaFailure struct {
	Keyword, Code, InstancePath, Message string
}

// schemaFailures flattens a validation result into its leaf failures, each
// with its own instance location. Failures of oneOf/anyOf/allOf/if-then
// branches are reported by their leaves, not by the combinator.
func schemaFailures(r *jsonschema.EvaluationResult) []schemaFailure {
	var out []schemaFailure
	// kaptinlin gives each detail's instance location relative to its parent's.
	var walk func(r *jsonschema.EvaluationResult, base string)
	walk = func(r *jsonschema.EvaluationResult, base string) {
		if r == nil || r.Valid {
			return
		}
		here := base + r.InstanceLocation
		leaf := true
		for _, d := range r.Details {
			if d != nil && !d.Valid {
				leaf = false
				walk(d, here)
			}
		}
		if !leaf {
			return
		}
		keys := make([]string, 0, len(r.Errors))
		for k := range r.Errors {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := r.Errors[k]
			out = append(out, schemaFailure{Keyword: k, Code: e.Code, InstancePath: here, Message: e.Error()})
		}
	}
	walk(r, "")
	return out
}

var varPattern = lazyregexp.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandVars replaces ${VAR} from the environment. An unset or empty
// variable is an error: a root of "" or "/" by accident would widen scope.
func expandVars(s string, lookup func(string) (string, bool)) (string, error) {
	var missing string
	out := varPattern().ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := lookup(name)
		if (!ok || v == "") && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("${%s} is not set in mcpguard's environment", missing)
	}
	if strings.Contains(out, "${") {
		return "", fmt.Errorf("malformed ${...} reference")
	}
	return out, nil
}
