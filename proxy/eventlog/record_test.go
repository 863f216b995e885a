package eventlog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestDecodeReadsWhatLogWrites: every field Log writes comes back.
func TestDecodeReadsWhatLogWrites(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, "git", Budget{})
	l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress, Method: "tools/call", Tool: "git_log",
		ID: `"abc"`, ErrorCode: "INPUT_REJECTED_DANGEROUS_FLAG", Field: "args[0]", Rule: "ingress[1]", Action: ActionRejected,
		Message: "say \"no\" to --output\\", Value: []byte("--output=/tmp/x")})
	l.Log(Event{Level: zerolog.InfoLevel, Event: EventExit, Message: "MCP server exited",
		Extra: func(e *zerolog.Event) { e.Int("status", 2).Int64("duration_ms", 1500) }})
	l.Log(Event{Level: zerolog.InfoLevel, Event: EventRewritten, Field: "content[0].text", Action: ActionRewritten,
		Extra: func(e *zerolog.Event) { e.Str("canonicaliser", "text").Int("bytes_removed", 9) }})

	var d Decoder
	var recs []Record
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r Record
		if err := d.Decode([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		recs = append(recs, r)
	}
	r := recs[0]
	if time.Since(r.Time) > time.Minute || r.Level != "warn" || r.Server != "git" || r.PID == 0 ||
		r.Event != EventRejected || r.Direction != Ingress || r.Method != "tools/call" || r.Tool != "git_log" ||
		r.ID != `"abc"` || r.ErrorCode != "INPUT_REJECTED_DANGEROUS_FLAG" || r.Field != "args[0]" ||
		r.Rule != "ingress[1]" || r.Action != ActionRejected || r.Message != `say "no" to --output\` ||
		r.ValueLen != 15 || len(r.ValueSHA256) != 16 || r.Status != -1 || !r.IsRejection() {
		t.Errorf("rejection read back as %+v", r)
	}
	if r := recs[1]; r.Status != 2 || r.Duration != 1500*time.Millisecond || r.ValueLen != -1 || r.IsRejection() {
		t.Errorf("exit read back as %+v", r)
	}
	if r := recs[2]; r.Canonicaliser != "text" || r.BytesRemoved != 9 {
		t.Errorf("rewrite read back as %+v", r)
	}
}

func TestDecodeSkipsWhatIsNotAnEvent(t *testing.T) {
	ok := `{"time":"2026-07-01T10:00:00Z","event":"rejected","server":"s"}`
	var d Decoder
	var r Record
	if err := d.Decode([]byte(ok), &r); err != nil || r.Server != "s" {
		t.Fatalf("baseline: %v %+v", err, r)
	}
	for _, tc := range []struct {
		line string
		want error
	}{
		{``, ErrSyntax},
		{`not json`, ErrSyntax},
		{`[1,2]`, ErrSyntax},
		{`{"time":"2026-07-01T10:00:00Z","event":"rejected"`, ErrSyntax},   // torn
		{`{"time":"2026-07-01T10:00:00Z","event":"rejected"}x`, ErrSyntax}, // trailing data
		{`{"time":"2026-07-01T10:00:00Z","event":"rej` + "\n" + `ected"}`, ErrSyntax},
		{`{"time":"2026-07-01T10:00:00Z","event":"\q"}`, ErrSyntax},
		{`{"time":"2026-07-01T10:00:00Z","event":"\u12"}`, ErrSyntax},
		{`{"time":"2026-07-01T10:00:00Z","event":"x","pid":01}`, ErrSyntax},
		{`{"time":"2026-07-01T10:00:00Z","event":"x","pid":-}`, ErrSyntax},
		{`{"time":"2026-07-01T10:00:00Z","event":"x","a":[1,{"b":tru}]}`, ErrSyntax},
		{`{"time":"2026-07-01T10:00:00Z","event":"x",}`, ErrSyntax},
		{`{"time":"2026-07-01T10:00:00Z","event":"x","other":"\q"}`, ErrSyntax},   // checked though skipped
		{`{"time":"2026-07-01T10:00:00Z","event":"x","other":"\u00"}`, ErrSyntax}, // checked though skipped
		{`{"time":"2026-07-01T10:00:00Z","event":"x","other":{"\u0041":"\"\\\/\b\f\n\r\t\u00e9"}}`, nil},
		{`{"time":"2026-07-01T10:00:00Z","event":"x","a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, ErrSyntax},
		{`{"level":"info","time":"2026-07-01T10:00:00Z","message":"another program"}`, ErrForeign},
		{`{"time":"yesterday","event":"rejected"}`, ErrForeign},
		{`{"event":"rejected"}`, ErrForeign},
		{`{}`, ErrForeign},
	} {
		if err := d.Decode([]byte(tc.line), &r); err != tc.want {
			t.Errorf("Decode(%.60q) = %v, want %v", tc.line, err, tc.want)
		}
	}
}

func TestDecodeEscapesAndOddTypes(t *testing.T) {
	line := ` { "time" : "2026-07-01T10:00:00.5+02:00" , "ev\u0065nt":"rejected", "tool":"a\u00e9\ud83d\ude00\ud800z\/",` +
		`"server":null, "pid":1.5e3, "status":"2", "extra":{"a":[true,false,null,-0.5E-3,"x"]}, "message":"\t\u001b"} `
	var d Decoder
	var r Record
	if err := d.Decode([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 7, 1, 8, 0, 0, 5e8, time.UTC); !r.Time.Equal(want) {
		t.Errorf("time %v, want %v", r.Time, want)
	}
	if r.Event != "rejected" || r.Tool != "aé😀\ufffdz/" || r.Server != "" || r.PID != 0 || r.Status != -1 || r.Message != "\t\x1b" {
		t.Errorf("got %+v", r)
	}
}

func TestDecodeSummarySkipsText(t *testing.T) {
	line := `{"time":"2026-07-01T10:00:00Z","event":"rejected","server":"s","tool":"t","error_code":"C","id":"9","field":"f","message":"m"}`
	d := Decoder{Summary: true}
	var r Record
	if err := d.Decode([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	if r.Server != "s" || r.Tool != "t" || r.ErrorCode != "C" || r.ID != "" || r.Field != "" || r.Message != "" {
		t.Errorf("got %+v", r)
	}
}

func TestDecoderInternsBoundedly(t *testing.T) {
	var d Decoder
	var r Record
	for i := range maxInterned + 100 {
		line := `{"time":"2026-07-01T10:00:00Z","event":"rejected","tool":"t` + strings.Repeat("x", i%7) + strconv.Itoa(i) + `"}`
		if err := d.Decode([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.interned) > maxInterned {
		t.Errorf("%d interned strings, cap %d", len(d.interned), maxInterned)
	}
}

// FuzzDecode: Decode's verdict on syntax agrees with encoding/json's, so
// a line is never skipped as malformed when it is valid JSON, nor read
// when it is not.
func FuzzDecode(f *testing.F) {
	f.Add(`{"time":"2026-07-01T10:00:00Z","event":"rejected","tool":"a\u00e9","x":[1,{"y":null}]}`)
	f.Add(`{"level":"info","time":"2026-07-01T10:00:03Z","message":"foreign"}`)
	f.Add(`{"time":"2026-07-01T10:00:00Z","event":"x","pid":-0.5e+3,"s":"\ud800"}`)
	f.Add(`{"time":"2026-07-01T10:00:00Z","event":"x"`)
	f.Add(` {} `)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.Count(line, "[")+strings.Count(line, "{") > maxDepth {
			return // Decode refuses deep nesting; encoding/json does not
		}
		var d Decoder
		var r Record
		err := d.Decode([]byte(line), &r)
		trimmed := strings.TrimLeft(line, " \t\r\n")
		valid := json.Valid([]byte(line)) && strings.HasPrefix(trimmed, "{")
		if (err != ErrSyntax) != valid {
			t.Fatalf("Decode(%q) = %v, json.Valid = %v", line, err, valid)
		}
	})
}
