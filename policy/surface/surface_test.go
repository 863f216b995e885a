package surface

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Revisions are the protocol revisions mcpguard relays; their official
// schemas are in testdata/schema (see testdata/schema/SOURCE).
var Revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// roots are the unions of what each side sends, by direction. A revision
// without one (2026-07-28 has no ServerRequest: the server's requests
// travel in inputRequests) reaches it through the others.
var roots = map[Direction][]string{
	ToServer: {"ClientRequest", "ClientNotification", "ClientResult"},
	ToClient: {"ServerRequest", "ServerNotification", "ServerResult"},
}

type schemaDoc struct {
	Definitions map[string]map[string]any `json:"definitions"`
	Defs        map[string]map[string]any `json:"$defs"`
}

// members walks one revision's schema from the roots of dir and returns
// every member that can carry text, as Def.path.
func members(t *testing.T, rev string, dir Direction) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "schema", rev+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc schemaDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	defs := doc.Definitions
	if defs == nil {
		defs = doc.Defs
	}
	found := map[string]bool{}
	seen := map[string]bool{}
	var queue []string
	enqueue := func(name string) {
		if _, ok := defs[name]; ok && !seen[name] {
			seen[name] = true
			queue = append(queue, name)
		}
	}
	for _, r := range roots[dir] {
		enqueue(r)
	}
	var visit func(s map[string]any, owner string, path []string)
	visit = func(s map[string]any, owner string, path []string) {
		if ref, ok := s["$ref"].(string); ok {
			enqueue(ref[strings.LastIndexByte(ref, '/')+1:])
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			for _, sub := range asList(s[k]) {
				visit(sub, owner, path)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			visit(items, owner, path)
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			visit(ap, owner, path)
		}
		props, _ := s["properties"].(map[string]any)
		for name, v := range props {
			ps, ok := v.(map[string]any)
			if !ok {
				continue
			}
			p := append(slices.Clip(path), name)
			if carriesText(ps, defs) {
				found[owner+"."+strings.Join(p, ".")] = true
			}
			visit(ps, owner, p)
		}
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		visit(defs[name], name, nil)
	}
	out := make([]string, 0, len(found))
	for m := range found {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func asList(v any) []map[string]any {
	var out []map[string]any
	for _, x := range asAny(v) {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func asAny(v any) []any { l, _ := v.([]any); return l }

// carriesText reports whether a member's schema admits a string other
// than a fixed set (const, enum): what carries text, a URL or a
// definition. Numbers, booleans and fixed values carry none.
func carriesText(s map[string]any, defs map[string]map[string]any) bool {
	if ref, ok := s["$ref"].(string); ok {
		if d, ok := defs[ref[strings.LastIndexByte(ref, '/')+1:]]; ok {
			s = d
		}
	}
	if _, ok := s["const"]; ok {
		return false
	}
	if _, ok := s["enum"]; ok {
		return false
	}
	switch t := s["type"].(type) {
	case string:
		return !nonText(t)
	case []any:
		for _, x := range t {
			if ts, _ := x.(string); !nonText(ts) {
				return true
			}
		}
		return false
	}
	return true
}

func nonText(t string) bool {
	return t == "number" || t == "integer" || t == "boolean" || t == "null"
}

// TestEverySurfaceClassified: every member of every relayed revision that
// can carry text is judged, cleaned, pinned or exempt with a reason.
func TestEverySurfaceClassified(t *testing.T) {
	used := map[int]bool{}
	for _, rev := range Revisions {
		for _, dir := range []Direction{ToServer, ToClient} {
			ms := members(t, rev, dir)
			if len(ms) < 50 {
				t.Fatalf("%s %s: only %d members walked", rev, dir, len(ms))
			}
			for _, m := range ms {
				e, ok := Lookup(dir, m)
				if !ok {
					t.Errorf("%s %s: %s is not classified", rev, dir, m)
					continue
				}
				used[slices.IndexFunc(Table, func(x Entry) bool { return x == e })] = true
			}
		}
	}
	for i, e := range Table {
		if !used[i] {
			t.Errorf("entry %s %s classifies no member of any revision", e.Dir, e.Member)
		}
		if e.Why == "" || e.Treatment == "" {
			t.Errorf("entry %s %s: no treatment or reason", e.Dir, e.Member)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the surface table in policies/README.md")

// TestReadmeTable: the policy reference shows this table as it is
// (go test ./policy/surface -update rewrites it).
func TestReadmeTable(t *testing.T) {
	const path = "../../policies/README.md"
	const begin, end = "<!-- surface table: generated from policy/surface; go test ./policy/surface -update -->\n", "<!-- end of surface table -->\n"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the surface table markers", path)
	}
	want := doc[:i+len(begin)] + Markdown() + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Error("policies/README.md's surface table is not the table in policy/surface; run go test ./policy/surface -update")
}
