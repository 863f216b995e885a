package rawjson

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

func TestEachMember(t *testing.T) {
	obj := []byte(` { "a" : 1 , "b\u0041":[ 1, 2 ], "c" : "x\u0041" } `)
	var got []string
	err := EachMember(obj, func(name string, v jsontext.Value) error {
		got = append(got, name+"="+string(v))
		return nil
	})
	if want := `a=1 bA=[ 1, 2 ] c="x\u0041"`; err != nil || strings.Join(got, " ") != want {
		t.Fatalf("EachMember = %q, %v; want %q", got, err, want)
	}
	stop := errors.New("stop")
	n := 0
	if err := EachMember(obj, func(string, jsontext.Value) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("EachMember did not stop at fn's error: %v after %d", err, n)
	}
	for _, bad := range []string{`[1]`, `"s"`, ``, `{"a":}`, `{"a":1`} {
		if err := EachMember([]byte(bad), func(string, jsontext.Value) error { return nil }); err == nil {
			t.Errorf("EachMember(%q) = nil, want an error", bad)
		}
	}
}

func TestEachElement(t *testing.T) {
	var got []string
	err := EachElement([]byte(`[ 1, {"a":[]} ,"x" ]`), func(i int, v jsontext.Value) error {
		got = append(got, string(v))
		return nil
	})
	if want := `1|{"a":[]}|"x"`; err != nil || strings.Join(got, "|") != want {
		t.Fatalf("EachElement = %q, %v; want %q", got, err, want)
	}
	if err := EachElement([]byte(`{}`), func(int, jsontext.Value) error { return nil }); err == nil {
		t.Error("EachElement of an object: no error")
	}
}

func TestMember(t *testing.T) {
	obj := []byte(`{"tools":[{"name":"a"}],"next\u0043ursor":"c","n":null}`)
	for name, want := range map[string]string{"tools": `[{"name":"a"}]`, "nextCursor": `"c"`, "n": "null", "absent": ""} {
		if got := string(Member(obj, name)); got != want {
			t.Errorf("Member(%q) = %q, want %q", name, got, want)
		}
	}
	if Member([]byte(`[1]`), "x") != nil || Member(nil, "x") != nil {
		t.Error("Member of a non-object is not nil")
	}
}

// SetMember keeps every other byte, spacing and escapes included.
func TestSetMember(t *testing.T) {
	obj := `{ "tools" : [1,2,3], "d":"\u003c\/x" , "e" : 5 }`
	for _, tc := range []struct {
		name, v, want string
		remove        bool
	}{
		{name: "tools", v: "[2]", want: `{ "tools" : [2], "d":"\u003c\/x" , "e" : 5 }`},
		{name: "d", v: `"y"`, want: `{ "tools" : [1,2,3], "d":"y" , "e" : 5 }`},
		{name: "new", v: `{"k":1}`, want: `{ "tools" : [1,2,3], "d":"\u003c\/x" , "e" : 5 ,"new":{"k":1}}`},
		{name: "tools", remove: true, want: `{ "d":"\u003c\/x" , "e" : 5 }`},
		{name: "d", remove: true, want: `{ "tools" : [1,2,3] , "e" : 5 }`},
		{name: "e", remove: true, want: `{ "tools" : [1,2,3], "d":"\u003c\/x" }`},
		{name: "absent", remove: true, want: obj},
		{name: "na\"me", v: "1", want: `{ "tools" : [1,2,3], "d":"\u003c\/x" , "e" : 5 ,"na\"me":1}`},
	} {
		var v []byte
		if !tc.remove {
			v = []byte(tc.v)
		}
		got, err := SetMember([]byte(obj), tc.name, v)
		if err != nil || string(got) != tc.want {
			t.Errorf("SetMember(%q, %q) = %s, %v; want %s", tc.name, tc.v, got, err, tc.want)
		}
		if err == nil && !jsontext.Value(got).IsValid() {
			t.Errorf("SetMember(%q, %q) = %s: not valid JSON", tc.name, tc.v, got)
		}
	}
	for in, want := range map[string]string{`{}`: `{"a":1}`, `{ }`: `{ "a":1}`, `{"a":0}`: `{"a":1}`} {
		if got, err := SetMember([]byte(in), "a", []byte("1")); err != nil || string(got) != want {
			t.Errorf("SetMember(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if got, err := SetMember([]byte(`{"a":0}`), "a", nil); err != nil || string(got) != `{}` {
		t.Errorf("removing the only member: %s, %v", got, err)
	}
	if _, err := SetMember([]byte(`[]`), "x", nil); err == nil {
		t.Error("SetMember of an array: no error")
	}
}

// FuzzSetMember: the result is valid JSON, and reads as obj with the one
// member set or removed.
func FuzzSetMember(f *testing.F) {
	f.Add(`{"a":1,"b":2}`, "a", "3", false)
	f.Add(`{ "a" : 1 }`, "a", "", true)
	f.Add(`{}`, "x", `"y"`, false)
	f.Add(`{"a":1 , "b":{"a":2}}`, "b", "", true)
	f.Fuzz(func(t *testing.T, obj, name, v string, remove bool) {
		if !jsontext.Value(obj).IsValid() || jsontext.Value(obj).Kind() != '{' || !jsontext.Value(v).IsValid() {
			return
		}
		var set []byte
		if !remove {
			set = []byte(v)
		}
		got, err := SetMember([]byte(obj), name, set)
		if !utf8.ValidString(name) && err != nil {
			return // a name JSON cannot spell
		}
		if err != nil {
			t.Fatalf("SetMember(%s, %q) = %v", obj, name, err)
		}
		if !jsontext.Value(got).IsValid() {
			t.Fatalf("SetMember(%s, %q, %s) = %s: not valid JSON", obj, name, set, got)
		}
		want := map[string]string{}
		EachMember([]byte(obj), func(n string, mv jsontext.Value) error {
			if _, dup := want[n]; !dup {
				want[n] = string(mv)
			}
			return nil
		})
		if remove {
			delete(want, name)
		} else {
			want[name] = v
		}
		seen := map[string]bool{}
		EachMember(got, func(n string, mv jsontext.Value) error {
			if seen[n] {
				return nil
			}
			seen[n] = true
			if w, ok := want[n]; !ok || strings.TrimSpace(w) != strings.TrimSpace(string(mv)) {
				t.Fatalf("SetMember(%s, %q, %s) = %s: member %q is %s, want %s (%v)", obj, name, set, got, n, mv, w, ok)
			}
			return nil
		})
		for n := range want {
			if !seen[n] {
				t.Fatalf("SetMember(%s, %q, %s) = %s: lost member %q", obj, name, set, got, n)
			}
		}
	})
}
