package message

import (
	"bytes"
	stdjson "encoding/json"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

func TestParseRefuses(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat(`}`, 64)
	cases := []struct {
		name, line string
		code       int64
		id         string // echoed id; "" means null
	}{
		{"not json", `hello`, jsonrpc2.CodeParseError, ""},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, jsonrpc2.CodeParseError, ""},
		{"invalid utf8 in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}", jsonrpc2.CodeParseError, "1"},
		{"invalid utf8 in name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"a\xff\":1}}}", jsonrpc2.CodeParseError, "1"},
		{"lone surrogate", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"\ud800"}}}`, jsonrpc2.CodeParseError, "1"},
		{"bom", "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", jsonrpc2.CodeParseError, ""},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} {"x":1}`, jsonrpc2.CodeParseError, "1"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"}x`, jsonrpc2.CodeParseError, "1"},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, jsonrpc2.CodeParseError, "1"},
		{"escaped duplicate id", `{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"ping"}`, jsonrpc2.CodeParseError, ""},
		{"duplicate deep in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":{"p":"/ok","p":"/etc"}}}}`, jsonrpc2.CodeParseError, "1"},
		{"escaped duplicate in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"path":"/ok","\u0070ath":"/etc"}}}`, jsonrpc2.CodeParseError, "1"},
		{"Method", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"method NUL", `{"jsonrpc":"2.0","id":1,"method":"ping","method\u0000":"tools/call"}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"PARAMS", `{"jsonrpc":"2.0","id":1,"method":"tools/call","PARAMS":{}}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"ID", `{"jsonrpc":"2.0","ID":1,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"id and ID", `{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"ARGUMENTS", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","ARGUMENTS":{}}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"long s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","argumentſ":{"path":"/etc"}}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"Name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","Name":"rm"}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"kelvin progressToken", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToKen":1}}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"_META", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_META":{}}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"depth 65", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + deep + `}`, jsonrpc2.CodeInvalidRequest, ""},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"id float", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"id exponent", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"id null in request", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"id beyond 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"id minus zero", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"arguments array", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":["a"]}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"arguments string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"{}"}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"name not string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["x"]}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"name missing", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`, jsonrpc2.CodeInvalidParams, "1"},
		{"params array", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["x"]}`, jsonrpc2.CodeInvalidParams, "1"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, jsonrpc2.CodeInvalidRequest, ""},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"jsonrpc missing", `{"id":1,"method":"ping"}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":7}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"error bad shape", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"x"}}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"empty", `  `, jsonrpc2.CodeParseError, ""},
		{"string top", `"ping"`, jsonrpc2.CodeParseError, ""},
		{"no method no result", `{"jsonrpc":"2.0","id":1}`, jsonrpc2.CodeInvalidRequest, "1"},
		{"string id echoed", `{"jsonrpc":"2.0","id":"a-1","Method":"ping"}`, jsonrpc2.CodeInvalidRequest, `"a-1"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse([]byte(c.line))
			if err == nil {
				t.Fatalf("accepted: %+v", m)
			}
			e := err.(*Error)
			if e.Code != c.code {
				t.Errorf("code %d, want %d (%s)", e.Code, c.code, e.Reason)
			}
			if got := string(e.ID); got != c.id {
				t.Errorf("echoed id %q, want %q", got, c.id)
			}
			if strings.Contains(e.Reason, "tools/call") || strings.Contains(e.Reason, "/etc") {
				t.Errorf("reason quotes the input: %q", e.Reason)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	cases := []struct {
		name, line string
		kind       Kind
		method     string
		raw        string // expected forwarded bytes; "" means the line itself
	}{
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, Request, "ping", ""},
		{"string id", `{"jsonrpc":"2.0","id":"abc","method":"ping"}`, Request, "ping", ""},
		{"negative id", `{"jsonrpc":"2.0","id":-5,"method":"ping"}`, Request, "ping", ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Notification, "notifications/initialized", ""},
		{"result", `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`, Response, "", ""},
		{"error null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, Response, "", ""},
		{"whitespace compacted", "{ \"jsonrpc\" : \"2.0\",\r\"id\":1,\t\"method\":\"ping\" }\r", Request, "ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"strings and numbers kept", `{"jsonrpc":"2.0", "id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":9007199254740993,"f":1.50,"s":"a\u0062 \/ c"}}}`, Request, "tools/call",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":9007199254740993,"f":1.50,"s":"a\u0062 \/ c"}}}`},
		{"unknown params member kept", `{"jsonrpc":"2.0","id":1,"method":"x/y","params":{"custom":1,"Custom":2}}`, Request, "x/y", ""},
		{"namespaced meta", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"t","com.example/x":1}}}`, Request, "tools/call", ""},
		{"depth 64", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat(`[`, 62) + strings.Repeat(`]`, 62) + `}}`, Request, "x", ""},
		{"null arguments mean none", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}`, Request, "tools/call", ""},
		{"unicode in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"t":"日本語 ✓ \u2028"}}}`, Request, "tools/call", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse([]byte(c.line))
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != c.kind || m.Method != c.method {
				t.Errorf("kind %v method %q", m.Kind, m.Method)
			}
			want := c.raw
			if want == "" {
				want = c.line
			}
			if string(m.Raw) != want {
				t.Errorf("raw\n got %s\nwant %s", m.Raw, want)
			}
		})
	}
}

func TestParseToolCall(t *testing.T) {
	m, err := Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_tests","arguments":{"testArgs":["-v"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Params) != `{"name":"run_tests","arguments":{"testArgs":["-v"]}}` {
		t.Errorf("params %s", m.Params)
	}
	if m.Name != "run_tests" || string(m.Arguments) != `{"testArgs":["-v"]}` || m.IDKey() != KeyOf([]byte("7")) {
		t.Errorf("name %q arguments %s key %v", m.Name, m.Arguments, m.IDKey())
	}
	// params before method: the two-pass path.
	m, err = Parse([]byte(`{"jsonrpc":"2.0","params":{"name":"x","arguments":{"a":1}},"id":7,"method":"tools/call"}`))
	if err != nil || m.Name != "x" || string(m.Arguments) != `{"a":1}` || string(m.Params) != `{"name":"x","arguments":{"a":1}}` {
		t.Errorf("params first: %v %+v", err, m)
	}
	m, err = Parse([]byte(`{"jsonrpc":"2.0","id":"\u0061","method":"resources/read","params":{"uri":"file:///x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.URI != "file:///x" || m.IDKey() != KeyOf([]byte(`"a"`)) {
		t.Errorf("uri %q key %v", m.URI, m.IDKey())
	}
}

// lenientView is how a downstream decoding with encoding/json v1 (case
// folding, last duplicate wins) reads a message.
type lenientView struct {
	Method string `json:"method"`
	Params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		URI       string         `json:"uri"`
	} `json:"params"`
}

// FuzzParse: Parse never panics, and whatever it accepts a lenient decoder
// reads as the same method, tool and arguments, and the forwarded bytes
// parse to the same message again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"p":"/a"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","argumentſ":{"p":"/etc"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","ARGUMENTS":{"p":"/etc"}}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method\u0000":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"p":"/ok","p":"/etc"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToKen":1}}}`,
		"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"\ud800"}}}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {}`,
		"{\"jsonrpc\":\"2.0\",\r\"id\":1,\"method\":\"ping\"}",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Parse(line)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if bytes.ContainsAny(m.Raw, "\r\n") {
			t.Fatalf("forwarded bytes contain a line break: %q", m.Raw)
		}
		again, err := Parse(m.Raw)
		if err != nil {
			t.Fatalf("forwarded bytes do not parse: %v", err)
		}
		if want := membersOf(t, m.Raw); m.Members()&want != want {
			t.Fatalf("Members() = %b leaves out a name of %b", m.Members(), want)
		}
		if m.Params != nil && !bytes.Equal(m.InputResponses, rawjson.Member(m.Params, "inputResponses")) {
			t.Fatalf("InputResponses = %s, params.inputResponses %s", m.InputResponses, rawjson.Member(m.Params, "inputResponses"))
		}
		if !bytes.Equal(again.Raw, m.Raw) || again.Method != m.Method || again.Name != m.Name || !bytes.Equal(again.Arguments, m.Arguments) {
			t.Fatalf("forwarded bytes parse to another message")
		}
		var lv lenientView
		if stdjson.Unmarshal(m.Raw, &lv) != nil {
			return // the lenient decoder refuses what we forward: no differential
		}
		if lv.Method != m.Method {
			t.Fatalf("lenient decoder reads method %q, we judged %q", lv.Method, m.Method)
		}
		if m.Method == "tools/call" || m.Method == "prompts/get" {
			if lv.Params.Name != m.Name {
				t.Fatalf("lenient decoder reads name %q, we judged %q", lv.Params.Name, m.Name)
			}
			var ours map[string]any
			if m.Arguments != nil {
				if err := stdjson.Unmarshal(m.Arguments, &ours); err != nil {
					t.Fatal(err)
				}
			}
			a, _ := stdjson.Marshal(lv.Params.Arguments)
			b, _ := stdjson.Marshal(ours)
			if !bytes.Equal(a, b) {
				t.Fatalf("lenient decoder reads arguments %s, we judged %s", a, b)
			}
		}
	})
}

// TestMembers: the parser notes the names of MemberSet that member names
// have, escaped or not, at any depth, and no name that only a value or a
// longer name spells; a message the slow path read is searched instead,
// which may say more, never less.
func TestMembers(t *testing.T) {
	for line, want := range map[string]MemberSet{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"uri icons inputRequests"}]}}`:    0,
		`{"jsonrpc":"2.0","id":1,"result":{"uris":1,"icon":2,"inputRequest":3,"Uri":4,"URI":5}}`:              0,
		`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{},"resultType":"input_required"}}`:                MemberInputRequests,
		`{"jsonrpc":"2.0","id":1,"result":{"inputRequest\u0073":{}}}`:                                         MemberInputRequests,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","icons":[{"src":"https://x/i.png"}]}]}}`:      MemberIcons,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","\u0075ri":"https://x/"}]}}`:    MemberURI,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x","_meta":{"icons":1}}}`: MemberURI | MemberIcons,
	} {
		m := new(Message)
		if !parseFast(m, []byte(line), new(validator)) {
			t.Errorf("%s: not on the fast path", line)
			continue
		}
		if got := m.Members(); got != want {
			t.Errorf("%s: Members() = %b, want %b", line, got, want)
		}
		if got := MembersIn(m.Raw, m.Escapes()); got&want != want {
			t.Errorf("%s: MembersIn = %b leaves out a name of %b", line, got, want)
		}
	}
}

func TestSafeInteger(t *testing.T) {
	for _, c := range []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"-7", -7, true}, {"9007199254740991", 1<<53 - 1, true},
		{"-9007199254740991", -(1<<53 - 1), true}, {"9007199254740992", 0, false}, {"-9007199254740992", 0, false},
		{"99999999999999999", 0, false}, {"-0", 0, false}, {"01", 0, false}, {"-", 0, false}, {"", 0, false}, {"1.0", 0, false},
	} {
		n, ok := safeInteger([]byte(c.in))
		if n != c.n || ok != c.ok {
			t.Errorf("safeInteger(%s) = %d, %v; want %d, %v", c.in, n, ok, c.n, c.ok)
		}
	}
}
