package integration

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// call is the params of an ordinary echo call, for building hostile lines.
const echoParams = `"params":{"name":"echo","arguments":{"text":"HOSTILE"}}`

func nested(depth int) string { // depth levels of arrays around a string
	return strings.Repeat("[", depth) + `"HOSTILE"` + strings.Repeat("]", depth)
}

// malformedLines are agent→server lines that strict parsing must refuse.
// ids lists the acceptable ids of the error reply: the id when it
// can be read unambiguously, null otherwise; where the contract leaves it open
// (the line is broken, but the id member itself is plain), both are listed.
var malformedLines = []struct {
	name string
	line string
	ids  []string
}{
	{"duplicate key in arguments", `{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"HOSTILE"}}}`, []string{"101"}},
	{"duplicate params", `{"jsonrpc":"2.0","id":102,"method":"tools/call","params":{"name":"echo"},` + echoParams + `}`, []string{"102"}},
	{"escaped duplicate id", `{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"tools/call",` + echoParams + `}`, []string{"null"}},
	{"escaped duplicate method", `{"jsonrpc":"2.0","id":103,"method":"ping","\u006dethod":"tools/call",` + echoParams + `}`, []string{"103", "null"}},
	{"Method", `{"jsonrpc":"2.0","id":104,"Method":"tools/call",` + echoParams + `}`, []string{"104"}},
	{"method and Method", `{"jsonrpc":"2.0","id":105,"method":"ping","Method":"tools/call",` + echoParams + `}`, []string{"105"}},
	{"method NUL", `{"jsonrpc":"2.0","id":106,"method":"ping","method\u0000":"tools/call",` + echoParams + `}`, []string{"106"}},
	{"ARGUMENTS", `{"jsonrpc":"2.0","id":107,"method":"tools/call","params":{"name":"echo","ARGUMENTS":{"text":"HOSTILE"}}}`, []string{"107"}},
	{"argumentſ (long s)", `{"jsonrpc":"2.0","id":108,"method":"tools/call","params":{"name":"echo","argumentſ":{"text":"HOSTILE"}}}`, []string{"108"}},
	{"progressToKen (Kelvin sign)", `{"jsonrpc":"2.0","id":109,"method":"tools/call","params":{"name":"echo","arguments":{"text":"HOSTILE"},"_meta":{"progressToKen":"t"}}}`, []string{"109"}},
	{"extra envelope member", `{"jsonrpc":"2.0","id":110,"method":"tools/call",` + echoParams + `,"extra":1}`, []string{"110"}},
	{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":111,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"HOSTILE\xff\xfe\"}}}", []string{"111", "null"}},
	{"lone surrogate", `{"jsonrpc":"2.0","id":112,"method":"tools/call","params":{"name":"echo","arguments":{"text":"HOSTILE\ud800"}}}`, []string{"112", "null"}},
	{"BOM", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":113,"method":"tools/call",` + echoParams + `}`, []string{"113", "null"}},
	{"trailing data", `{"jsonrpc":"2.0","id":114,"method":"tools/call",` + echoParams + `} {"jsonrpc":"2.0","id":115,"method":"ping"}`, []string{"114", "null"}},
	{"two values", `{"jsonrpc":"2.0","id":116,"method":"tools/call",` + echoParams + `}{}`, []string{"116", "null"}},
	{"not JSON", `HOSTILE not json`, []string{"null"}},
	// depth: the envelope object is level 1, params 2, arguments 3, the
	// array 4..: 62 arrays make 65 levels.
	{"depth 65", `{"jsonrpc":"2.0","id":117,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","deep":` + nested(62) + `}}}`, []string{"117", "null"}},
	{"depth 10000", `{"jsonrpc":"2.0","id":118,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","deep":` + nested(10000) + `}}}`, []string{"118", "null"}},
	{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call",` + echoParams + `}`, []string{"null"}},
	{"id float", `{"jsonrpc":"2.0","id":1.5,"method":"tools/call",` + echoParams + `}`, []string{"null"}},
	{"id bool", `{"jsonrpc":"2.0","id":true,"method":"tools/call",` + echoParams + `}`, []string{"null"}},
	{"id null in request", `{"jsonrpc":"2.0","id":null,"method":"tools/call",` + echoParams + `}`, []string{"null"}},
	{"id array", `{"jsonrpc":"2.0","id":[119],"method":"tools/call",` + echoParams + `}`, []string{"null"}},
	{"arguments array", `{"jsonrpc":"2.0","id":120,"method":"tools/call","params":{"name":"echo","arguments":["HOSTILE"]}}`, []string{"120"}},
	{"arguments string", `{"jsonrpc":"2.0","id":121,"method":"tools/call","params":{"name":"echo","arguments":"HOSTILE"}}`, []string{"121"}},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":122,"method":"tools/call",` + echoParams + `}`, []string{"122", "null"}},
	{"method not a string", `{"jsonrpc":"2.0","id":123,"method":["tools/call"],` + echoParams + `}`, []string{"123", "null"}},
	{"batch", `[{"jsonrpc":"2.0","id":124,"method":"tools/call",` + echoParams + `},{"jsonrpc":"2.0","id":125,"method":"ping"}]`, []string{"null"}},
}

// TestGuardedMalformedInput sends each hostile line through mcpguard: each
// gets a JSON-RPC error with error.data.error_code INPUT_REJECTED_MALFORMED
// and passed false, with the right id; the next valid request is answered;
// and testserver (-record) never sees a hostile line.
func TestGuardedMalformedInput(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	p := startGuardedRaw(t, nil, testserverBin, "-record", record)
	p.initialize()
	valid := 0
	for i, tc := range malformedLines {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			defer func() { p.t = t }()
			p.sendWait(tc.line)
			m := expectAny(t, p, tc.ids, 10*time.Second)
			checkMalformed(t, m)
			// The stream goes on: the next valid request is served.
			okID := 5000 + i
			if got := p.callOK(okID, "echo", map[string]any{"text": "valid"}); got != "valid" {
				t.Errorf("next request: %q", got)
			}
			valid++
		})
	}
	p.t = t
	// The server saw initialize, notifications/initialized and the valid
	// calls, nothing else.
	lines := readLines(t, record)
	want := 2 + valid
	if len(lines) != want {
		t.Errorf("the server received %d lines, want %d", len(lines), want)
	}
	for _, l := range lines {
		if strings.Contains(l, "HOSTILE") || strings.Contains(l, "\"deep\"") {
			t.Errorf("the server received a refused line: %q", truncate(l, 300))
		}
	}
}

// TestDirectRecord checks the -record mechanism the malformed test relies
// on: testserver records exactly what it was sent.
func TestDirectRecord(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	p := startRaw(t, testserverBin, "-record", record)
	p.initialize()
	p.callOK(1, "echo", map[string]any{"text": "HOSTILE"})
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, record)
	if len(lines) != 3 || !strings.Contains(lines[2], "HOSTILE") {
		t.Fatalf("record: %q", lines)
	}
}

// TestGuardedDepth64Accepted: the limit is "deeper than 64": a message of
// exactly 64 levels is relayed.
func TestGuardedDepth64Accepted(t *testing.T) {
	p := startGuardedRaw(t, nil, testserverBin)
	p.initialize()
	p.sendWait(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"deep ok","deep":` + nested(61) + `}}}`)
	m, _ := p.expect("1", 10*time.Second)
	if m.Error != nil || !strings.Contains(string(m.Result), "deep ok") {
		t.Errorf("64 levels: %s", truncate(string(m.raw), 400))
	}
}

// expectAny reads the next response and checks its id is one of ids.
func expectAny(t *testing.T, p *rawProc, ids []string, timeout time.Duration) *rawMsg {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		line, err := p.next(time.Until(deadline))
		if err != nil {
			t.Fatalf("no reply (want id %v): %v", ids, err)
		}
		var msg rawMsg
		if json.Unmarshal(line, &msg) != nil {
			// A batch refused element by element comes back as an array.
			var arr []rawMsg
			if json.Unmarshal(line, &arr) == nil && len(arr) > 0 {
				for i := range arr {
					arr[i].raw = line
					checkMalformed(t, &arr[i])
				}
				return &arr[0]
			}
			t.Fatalf("reply is not a JSON object: %q", truncate(string(line), 300))
		}
		msg.raw = line
		if !msg.isResponse() {
			continue
		}
		for _, id := range ids {
			if idEqual(msg.ID, id) {
				return &msg
			}
		}
		t.Fatalf("reply has id %s, want one of %v: %s", msg.ID, ids, truncate(string(line), 400))
	}
}

func checkMalformed(t *testing.T, m *rawMsg) {
	t.Helper()
	r := rejectionOf(t, m)
	if r.Passed == nil || *r.Passed {
		t.Errorf("error.data.passed: want false: %s", truncate(string(m.raw), 400))
	}
	if r.ErrorCode != "INPUT_REJECTED_MALFORMED" {
		t.Errorf("error.data.error_code %q, want INPUT_REJECTED_MALFORMED", r.ErrorCode)
	}
	if strings.Contains(string(m.raw), "HOSTILE") {
		t.Errorf("the rejection echoes the caller's value: %s", truncate(string(m.raw), 400))
	}
	switch m.Error.Code {
	case -32700, -32600, -32602:
	default:
		t.Errorf("error.code %d, want -32700, -32600 or -32602", m.Error.Code)
	}
}

func readLines(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
