package policy

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// schemaGen builds JSON Schemas in (and at the edges of) fastSchema's
// subset, and arguments to test them with, from a stream of bytes: the
// fuzzer's input, or a seeded random source in TestFastSchemaAgrees.
type schemaGen struct {
	data []byte
}

func (g *schemaGen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *schemaGen) pick(n int) int { return int(g.byte()) % n }

func pickFrom[T any](g *schemaGen, list []T) T { return list[g.pick(len(list))] }

var (
	genNames      = []string{"a", "b", "c", "A", "é", ""}
	genStrings    = []string{"", "a", "b", "ab", "abc", "é", "éé", "x", "a\x00", "日本語", "A"}
	genNumbers    = []float64{0, 1, -1, 0.5, 1.5, 2, 3, -3, 4, 1e20, 9007199254740992, -9007199254740992, 1e-7}
	genPatterns   = []string{"^a", "b$", "^[a-z]*$", "x|y", "é", "^.{2}$", "", "^\\p{L}+$"}
	genTypes      = []string{"null", "boolean", "object", "array", "number", "integer", "string"}
	genBounds     = []float64{-3, -1, 0, 1, 2, 3, 9007199254740992, -9007199254740992, 1.5, 9007199254740994}
	genCounts     = []string{"minProperties", "maxProperties", "minItems", "maxItems"}
	genBoundNames = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
	genDialects   = []string{"https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-04/schema#"}
)

// schema returns a schema value: a boolean or an object of keywords.
func (g *schemaGen) schema(depth int) any {
	if g.pick(12) == 0 {
		return g.pick(3) != 0
	}
	s := map[string]any{}
	for range g.pick(5) {
		switch g.pick(20) {
		case 0:
			if g.pick(3) == 0 {
				var ts []any
				for range 1 + g.pick(3) {
					ts = append(ts, pickFrom(g, genTypes))
				}
				s["type"] = ts
			} else {
				s["type"] = pickFrom(g, genTypes)
			}
		case 1, 2:
			s[pickFrom(g, []string{"minLength", "maxLength"})] = float64(g.pick(4))
		case 3:
			s["pattern"] = pickFrom(g, genPatterns)
		case 4, 5, 6, 7:
			s[pickFrom(g, genBoundNames)] = pickFrom(g, genBounds)
		case 8:
			var e []any
			for range 1 + g.pick(3) {
				e = append(e, g.scalar())
			}
			s["enum"] = e
		case 9:
			s["const"] = g.scalar()
		case 10, 11:
			if depth > 0 {
				props := map[string]any{}
				for range 1 + g.pick(3) {
					props[pickFrom(g, genNames)] = g.schema(depth - 1)
				}
				s["properties"] = props
			}
		case 12:
			var req []any
			for range g.pick(3) {
				req = append(req, pickFrom(g, genNames))
			}
			s["required"] = req
		case 13:
			if depth > 0 {
				s["additionalProperties"] = g.schema(depth - 1)
			}
		case 14, 15:
			s[pickFrom(g, genCounts)] = float64(g.pick(3))
		case 16:
			if depth > 0 {
				s["items"] = g.schema(depth - 1)
			}
		case 17, 18:
			s[pickFrom(g, genBoundNames)] = pickFrom(g, genBounds)
		case 19:
			switch g.pick(3) {
			case 0:
				s["format"] = pickFrom(g, []string{"email", "uri", "date-time"})
			case 1:
				s["description"] = "d"
			default:
				s["$schema"] = pickFrom(g, genDialects)
			}
		}
	}
	return s
}

// scalar is an enum or const value: mostly strings, booleans and null, the
// subset; sometimes a number, which takes the schema out of it.
func (g *schemaGen) scalar() any {
	switch g.pick(8) {
	case 0:
		return nil
	case 1:
		return g.pick(2) == 0
	case 2:
		return pickFrom(g, genNumbers)
	}
	return pickFrom(g, genStrings)
}

// value returns an argument value of any JSON type.
func (g *schemaGen) value(depth int) any {
	switch g.pick(8) {
	case 0:
		return nil
	case 1:
		return g.pick(2) == 0
	case 2, 3:
		return pickFrom(g, genNumbers)
	case 4:
		if depth > 0 {
			m := map[string]any{}
			for range g.pick(4) {
				m[pickFrom(g, genNames)] = g.value(depth - 1)
			}
			return m
		}
	case 5:
		if depth > 0 {
			var a []any
			for range g.pick(4) {
				a = append(a, g.value(depth-1))
			}
			return a
		}
	}
	return pickFrom(g, genStrings)
}

// agree checks one generated schema against kaptinlin on a few generated
// arguments: where fastSchema answers, its answer is kaptinlin's. It
// reports whether the schema had a fast path.
func agree(t *testing.T, g *schemaGen) bool {
	t.Helper()
	raw, err := json.Marshal(g.schema(3), json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	a, err := compileArgSchema(raw)
	if err != nil || a.fast == nil {
		return false
	}
	for range 4 {
		// Through JSON text, as arguments arrive: numbers become float64.
		argText, err := json.Marshal(g.value(3), json.Deterministic(true))
		if err != nil {
			t.Fatal(err)
		}
		var tree argTree
		if tree.parse(argText) != nil {
			t.Fatalf("generated arguments %s do not decode", argText)
		}
		args, err := tree.any()
		if err != nil {
			t.Fatalf("generated arguments %s do not decode: %v", argText, err)
		}
		fast := a.fast.accepts(&tree, 0)
		a.mu.Lock()
		slow := a.s.Validate(args).IsValid()
		a.mu.Unlock()
		if fast != slow {
			t.Fatalf("schema %s, arguments %s: fast path says valid=%v, kaptinlin valid=%v", raw, argText, fast, slow)
		}
	}
	return true
}

// TestFastSchemaAgrees runs the differential check on 20,000 generated
// schemas, so CI holds fastSchema to kaptinlin without -fuzz. Under the
// race detector, which slows this one-goroutine check tenfold and adds
// nothing to it, it runs the first 10,000 (past the first schema that
// each known mutation of the fast path gets wrong); CI runs all 20,000
// without it.
func TestFastSchemaAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 256)
	fast := 0
	n := 20000
	if raceEnabled {
		n = 10000
	}
	for range n {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		if agree(t, &schemaGen{data: buf}) {
			fast++
		}
	}
	// Most generated schemas are in the subset; if the fast path stopped
	// being built, this test would otherwise pass without checking much.
	if fast < n/2 {
		t.Fatalf("only %d of %d generated schemas had a fast path", fast, n)
	}
}

func FuzzFastSchema(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x0a\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e"))
	f.Add([]byte("\x04\x0a\x02\x00\x03\x05\x00\x06\x01\x04\x04\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, &schemaGen{data: data})
	})
}

// TestFastSchemaSubset pins which schemas get a fast path: the ones tools
// announce every day do; anything with a keyword outside the subset, or a
// bound that float64 cannot compare exactly, does not.
func TestFastSchemaSubset(t *testing.T) {
	for _, c := range []struct {
		schema string
		fast   bool
	}{
		{`{"type":"object","properties":{"text":{"type":"string","maxLength":4096}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string","description":"a file"},"head":{"type":"number","description":"n"},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"mode":{"enum":["fast","slow"]},"n":{"type":"integer","minimum":1,"maximum":100}}}`, true},
		{`true`, true},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, false},
		{`{"anyOf":[{"type":"string"},{"type":"number"}]}`, false},
		{`{"type":"array","uniqueItems":true}`, false},
		{`{"type":"number","maximum":0.1}`, false},
		{`{"type":"number","maximum":9007199254740994}`, false},
		{`{"enum":[1,2]}`, false},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"number","minimum":1,"exclusiveMinimum":true}`, false},
		{`{"type":"array","items":[{"type":"string"}]}`, false},
		{`{"type":"string","pattern":"(?<=a)b"}`, false},
		{`{"type":"object","x-vendor":1}`, false},
		{`{"type":"strin"}`, false},
		{`{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`, false},
	} {
		got := compileFastSchema([]byte(c.schema)) != nil
		if got != c.fast {
			t.Errorf("%s: fast path built=%v, want %v", c.schema, got, c.fast)
		}
	}
}

// TestFastSchemaReferenceServers pins that every inputSchema the pinned
// reference servers announce (server-filesystem and server-everything
// 2026.8.31, captured from their tools/list into testdata) gets the fast
// path, so enforcing a real server's schemas stays cheap, and holds the
// fast verdict to kaptinlin's on valid and invalid arguments for them.
func TestFastSchemaReferenceServers(t *testing.T) {
	raw, err := os.ReadFile("testdata/reference-input-schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	var servers map[string]map[string]jsontext.Value
	if err := json.Unmarshal(raw, &servers); err != nil {
		t.Fatal(err)
	}
	args := []string{
		`{}`, `{"path":"a.txt"}`, `{"path":"a.txt","head":3}`, `{"path":"a.txt","head":"3"}`, `{"path":5}`,
		`{"paths":["a","b"]}`, `{"paths":"a"}`, `{"path":"a","content":"x"}`,
		`{"path":"a","edits":[{"oldText":"a","newText":"b"}],"dryRun":true}`, `{"path":"a","edits":[{"oldText":1}]}`,
		`{"source":"a","destination":"b"}`, `{"path":"a","pattern":"*.go","excludePatterns":[]}`,
		`{"message":"hi"}`, `{"a":1,"b":2}`, `{"a":"1","b":2}`, `{"duration":10,"steps":5}`, `{"messageType":"error","includeImage":true}`,
		`{"resourceId":3}`, `{"resourceId":0}`, `{"count":-1}`, `{"location":"x"}`, `{"name":"x","data":"y","outputType":"resource"}`,
	}
	tools := 0
	for server, schemas := range servers {
		for name, schema := range schemas {
			tools++
			a, err := compileArgSchema(schema)
			if err != nil {
				t.Fatalf("%s %s: %v", server, name, err)
			}
			if a.fast == nil {
				t.Errorf("%s %s: no fast path for %s", server, name, schema)
				continue
			}
			for _, text := range args {
				var tree argTree
				if tree.parse([]byte(text)) != nil {
					t.Fatal(text)
				}
				v, err := tree.any()
				if err != nil {
					t.Fatal(text)
				}
				if fast, slow := a.fast.accepts(&tree, 0), a.s.Validate(v).IsValid(); fast != slow {
					t.Errorf("%s %s %s: fast path says valid=%v, kaptinlin valid=%v", server, name, text, fast, slow)
				}
			}
		}
	}
	if tools < 25 {
		t.Fatalf("only %d reference tools read", tools)
	}
}
