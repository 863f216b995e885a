package policy

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// children calls fn with the index of each member or element of node i,
// in document order.
func (t *argTree) children(i int32, fn func(c int32) bool) {
	for c := i + 1; c < t.nodes[i].end; c = t.nodes[c].end {
		if !fn(c) {
			return
		}
	}
}

// treeValue rebuilds the value at node i as json.Unmarshal would decode it
// into any.
func treeValue(t *argTree, i int32) any {
	n := t.nodes[i]
	switch n.kind {
	case argNull:
		return nil
	case argFalse:
		return false
	case argTrue:
		return true
	case argNumber:
		return n.number()
	case argString:
		return n.str
	case argObject:
		m := map[string]any{}
		t.children(i, func(c int32) bool {
			m[t.nodes[c].name] = treeValue(t, c)
			return true
		})
		if int32(len(m)) != n.len {
			return "member count differs"
		}
		return m
	}
	var a []any = []any{}
	t.children(i, func(c int32) bool {
		if t.nodes[c].name != "" {
			a = append(a, "element with a name")
		}
		a = append(a, treeValue(t, c))
		return true
	})
	if int32(len(a)) != n.len {
		return "element count differs"
	}
	return a
}

var argTreeSeeds = []string{
	`{}`, `{"a":1}`, ` { "a" : [ 1 , -2.5e3 , "x\"y" , true , false , null , { } , [ ] ] } `,
	`{"text":"0000000001 --format=json --run=TestRelay/pipelined ./proxy/..."}`,
	`{"\u0061":"\ud83d\ude00","b":"\u00e9\n\t\\\/"}`, `{"n":1e400}`, `{"n":-1e400}`, `{"n":1e-400}`,
	`{"n":123456789012345678901234567890}`, `{"n":-0}`, `{"n":0.1e-2}`, `[1,[2,[3,[4]]]]`, `"s"`, `5`, `null`,
	`{"a":{"b":{"c":["d",{"e":"f"}]}},"g":[]}`, `{"":""}`, `{"a":"é","é":"a"}`,
}

// FuzzArgTree: on every valid JSON text, the tree decodes to what
// json.Unmarshal decodes, and fails exactly when it fails.
func FuzzArgTree(f *testing.F) {
	for _, s := range argTreeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !jsontext.Value(text).IsValid() {
			return
		}
		var want any
		werr := json.Unmarshal([]byte(text), &want)
		var tr argTree
		err := tr.parse([]byte(text))
		if (err != nil) != (werr != nil) {
			t.Fatalf("%q: tree error %v, json.Unmarshal error %v", text, err, werr)
		}
		if err != nil {
			return
		}
		if got := treeValue(&tr, 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: tree %#v, json.Unmarshal %#v", text, got, want)
		}
		if tr.nodes[0].end != int32(len(tr.nodes)) {
			t.Fatalf("%q: root ends at %d of %d nodes", text, tr.nodes[0].end, len(tr.nodes))
		}
	})
}

// TestArgTreeBadInput: text that did not come through message.Parse is
// refused with an error, not misread and not a panic.
func TestArgTreeBadInput(t *testing.T) {
	for _, text := range []string{``, `{`, `{"a"`, `{"a":}`, `{"a":1,}`, `[1 2]`, `{"a":1}x`, `tru`, `"abc`, `"a\`,
		`{"a":1.2.3}`, `{1:2}`, strings.Repeat("[", 2000) + strings.Repeat("]", 2000)} {
		var tr argTree
		if err := tr.parse([]byte(text)); err == nil {
			t.Errorf("%q: parsed", text)
		}
	}
	var tr argTree
	if err := tr.parse(nil); err != nil || tr.nodes[0].kind != argObject || tr.nodes[0].end != 1 {
		t.Errorf("absent arguments: %v %+v", err, tr.nodes)
	}
}

// TestArgTreeSizedOnce: a hostile array of zeros (64 Ki of them; the count
// does not depend on the size, up to the two million of the 4 MiB request
// limit) costs two allocations, the nodes and the text, not the five-fold
// growth of appending; the nodes take 48 bytes each, less than
// decoding into []any takes.
func TestArgTreeSizedOnce(t *testing.T) {
	text := []byte("[" + strings.Repeat("0,", 1<<16-1) + "0]")
	var tr argTree
	allocs := testing.AllocsPerRun(2, func() {
		tr = argTree{}
		if err := tr.parse(text); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Errorf("%v allocations", allocs)
	}
	if len(tr.nodes) != 1<<16+1 || cap(tr.nodes) > len(tr.nodes)+1 {
		t.Errorf("%d nodes in a capacity of %d", len(tr.nodes), cap(tr.nodes))
	}
	if size := unsafe.Sizeof(argNode{}); size > 48 {
		t.Errorf("a node takes %d bytes", size)
	}
}
