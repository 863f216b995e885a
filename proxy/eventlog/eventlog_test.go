package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/rs/zerolog"
)

// writerEnv switches the test binary into a log writer for
// TestConcurrentProcessesDoNotTearLines: "PATH:PROC:LINES:MAXBYTES".
const writerEnv = "EVENTLOG_TEST_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(writerEnv); spec != "" {
		os.Exit(writeLines(spec))
	}
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// writeLines is a child process: it appends LINES events through Open from
// 4 goroutines sharing one Logger, as the relay's two directions do, and
// rotates the log past MAXBYTES (the default when 0), keeping 1000 files.
func writeLines(spec string) int {
	parts := strings.Split(spec, ":")
	path := parts[0]
	n, _ := strconv.Atoi(parts[2])
	rot := DefaultRotation
	if max, _ := strconv.Atoi(parts[3]); max > 0 {
		rot = Rotation{MaxBytes: int64(max), Backups: 1000}
	}
	w, closeLog, err := Open(path, rot, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer closeLog()
	l := New(w, "proc"+parts[1], Budget{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 4 {
				l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress, Method: "tools/call",
					Tool: "read_file", ID: strconv.Itoa(i), ErrorCode: "INPUT_REJECTED_PATH_SCOPE", Field: "path",
					Rule: "ingress[0]", Action: ActionRejected,
					// Long lines make a torn write likelier to show.
					Message: strings.Repeat("m", 200+i%800), Value: []byte("/etc/passwd")})
			}
		}()
	}
	wg.Wait()
	return 0
}

// TestLineShape: the documented fields are on a line when they apply and
// omitted when they do not (never written as ""), and the caller's value
// is never written, only its length and a short hash.
func TestLineShape(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, "filesystem", Budget{})
	secret := "/home/me/.ssh/id_rsa"
	l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress, Method: "tools/call", Tool: "read_file",
		ID: "7", ErrorCode: "INPUT_REJECTED_PATH_SCOPE", Field: "path", Rule: "ingress[2]", Action: ActionRejected,
		Message: "rejected MCP input path", Value: []byte(secret)})
	l.Log(Event{Level: zerolog.InfoLevel, Event: EventStart, Message: "MCP server started",
		Extra: func(e *zerolog.Event) { e.Int("child_pid", 42).Str("mode", "enforce") }})

	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", buf.String())
	}
	fields := [][]string{
		{"time", "level", "server", "pid", "event", "direction", "method", "tool", "id",
			"error_code", "field", "rule", "action", "message"},
		{"time", "level", "server", "pid", "event", "message", "child_pid", "mode"},
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, line)
		}
		for _, f := range fields[i] {
			if _, ok := m[f]; !ok {
				t.Errorf("line %d has no %q: %s", i, f, line)
			}
		}
		for k, v := range m {
			if v == "" {
				t.Errorf("line %d writes an empty %q: %s", i, k, line)
			}
		}
		if i == 1 && len(m) != len(fields[1]) {
			t.Errorf("the start line has fields that do not apply: %s", line)
		}
		if m["server"] != "filesystem" || m["pid"] != float64(os.Getpid()) {
			t.Errorf("line %d: server/pid %v %v", i, m["server"], m["pid"])
		}
		var rec Record
		var d Decoder
		if err := d.Decode([]byte(line), &rec); err != nil {
			t.Errorf("line %d does not read back: %v", i, err)
		}
	}
	if strings.Contains(buf.String(), secret) || strings.Contains(buf.String(), "id_rsa") {
		t.Errorf("the value was written: %s", lines[0])
	}
	var m map[string]any
	json.Unmarshal([]byte(lines[0]), &m)
	if m["value_len"] != float64(len(secret)) || len(m["value_sha256"].(string)) != 16 {
		t.Errorf("value_len %v value_sha256 %v", m["value_len"], m["value_sha256"])
	}
	if strings.Contains(lines[1], "value_") {
		t.Errorf("a line without a value has value fields: %s", lines[1])
	}
}

// hostile holds what an injected agent or a hostile server would like to
// get into an operator's terminal through the log.
var hostile = []string{
	"\x1b[2J\x1b[31mred",                        // clear screen, colour
	"\x1b]8;;https://evil\x07click\x1b]8;;\x07", // OSC 8 hyperlink
	"\x1b]52;c;Y3VybCBldmls\x07",                // OSC 52 clipboard write
	"\u009b31m",                                 // 8-bit CSI
	"abc\u202egnp.exe",                          // bidi override
	"\u2066isolate\u2069",                       // bidi isolate
	"tag\U000E0041\U000E0042\U000E007F",         // Unicode tags
	"zero\u200bwidth\ufeff",                     // invisible
	"line\nbreak\r\u2028\u2029",                 // line breaks
	"nul\x00del\x7f",                            // NUL, DEL
	"`rm -rf ~`",                                // backticks
	"bad\xff\xfeutf8\xc0",                       // invalid UTF-8
	strings.Repeat("é", 2000),                   // long, multi-byte at the cap
}

// forbidden reports the first rune that must not reach a log line.
func forbidden(s string) (rune, bool) {
	if !utf8.ValidString(s) {
		return utf8.RuneError, true
	}
	for _, r := range s {
		switch {
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == '`',
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
			r >= 0xe0000 && r <= 0xe007f, r == 0x200b, r == 0xfeff, r == 0x2028, r == 0x2029:
			return r, true
		}
	}
	return 0, false
}

func TestLogCanonicalisesPeerStrings(t *testing.T) {
	for _, h := range hostile {
		var buf bytes.Buffer
		New(&buf, "srv"+h, Budget{}).Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress,
			Method: h, Tool: h, ID: h, ErrorCode: h, Field: h, Rule: h, Action: ActionRejected, Message: h})
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v: %s", h, err, buf.Bytes())
		}
		for _, f := range []string{"server", "method", "tool", "id", "error_code", "field", "rule", "message"} {
			v := m[f].(string)
			if r, bad := forbidden(v); bad {
				t.Errorf("%q: %s = %q has %U", h, f, v, r)
			}
			limit := MaxFieldBytes
			if f == "message" {
				limit = MaxMessageBytes
			}
			if len(v) > limit {
				t.Errorf("%q: %s is %d bytes, over %d", h, f, len(v), limit)
			}
		}
	}
}

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"tools/call", "tools/call"},
		{"\x1b[31mred", " [31mred"},
		{"a\u202eb", "a?b"},
		{"tag\U000E0041", "tag?"},
		{"nul\x00", "nul "},
		{"`x`", "'x'"},
		{"\xff", "?"},
		{"\u009b", " "},
		{"日本語 ok", "日本語 ok"},
		{strings.Repeat("a", 300), strings.Repeat("a", 256)},
		{strings.Repeat("a", 255) + "é", strings.Repeat("a", 255)}, // cut on a rune boundary
	} {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Clean(s)
		if r, bad := forbidden(c); bad {
			t.Fatalf("Clean(%q) = %q has %U", s, c, r)
		}
		if len(c) > MaxFieldBytes {
			t.Fatalf("Clean(%q) is %d bytes", s, len(c))
		}
		if cc := Clean(c); cc != c {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, c, cc)
		}
	})
}

func TestOpenIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mcpguard")
	path := filepath.Join(dir, "mcpguard.log")
	_, closeLog, err := Open(path, DefaultRotation, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got&^want != 0 {
			t.Errorf("%s: mode %v, want at most %v", p, got, want)
		}
	}
}

// TestUnwritableLogKeepsServing: when the log breaks (here: its directory
// is removed, so it cannot be opened again), writes still succeed for the
// proxy, and stderr hears about it once.
func TestUnwritableLogKeepsServing(t *testing.T) {
	var stderr bytes.Buffer
	dir := filepath.Join(t.TempDir(), "state")
	w, closeLog, err := Open(filepath.Join(dir, "mcpguard.log"), DefaultRotation, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	l := New(w, "srv", Budget{})
	for range 3 {
		l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected})
	}
	if n, err := w.Write([]byte("x\n")); n != 2 || err != nil {
		t.Errorf("Write = %d, %v; want 2, nil", n, err)
	}
	if got := strings.Count(stderr.String(), "\n"); got != 1 || !strings.Contains(stderr.String(), "cannot write log") {
		t.Errorf("stderr = %q, want one warning", stderr.String())
	}
}

// TestConcurrentProcessesDoNotTearLines: several mcpguard processes append
// to one log, each from several goroutines; every line must come back
// whole, also when the processes rotate the file under each other: then no
// line is lost or written twice, and no file grows past its cap by more
// than one line per process.
func TestConcurrentProcessesDoNotTearLines(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, maxBytes := range []int{0, 64 << 10} {
		t.Run(fmt.Sprintf("rotate at %d", maxBytes), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "shared", "mcpguard.log")
			const procs, perProc = 4, 2000
			var cmds []*exec.Cmd
			for p := range procs {
				cmd := exec.Command(exe, "-test.run=^$")
				// GORACE: without the second a -race binary waits at exit
				// for late race reports (a race still fails the writer).
				cmd.Env = append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0",
					fmt.Sprintf("%s=%s:%d:%d:%d", writerEnv, path, p, perProc, maxBytes))
				cmd.Stderr = &bytes.Buffer{}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds = append(cmds, cmd)
			}
			for _, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Fatalf("writer: %v: %s", err, cmd.Stderr)
				}
			}
			files, err := Files(path)
			if err != nil {
				t.Fatal(err)
			}
			const maxLine = 1500
			for _, f := range files {
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if maxBytes > 0 && fi.Size() > int64(maxBytes+procs*maxLine) {
					t.Errorf("%s: %d bytes, over the cap %d by more than a line a process", f, fi.Size(), maxBytes)
				}
			}
			if maxBytes > 0 && len(files) < 20 {
				t.Errorf("%d files: the log did not rotate as often as its size says", len(files))
			}
			seen := make(map[string]bool)
			var d Decoder
			var rec Record
			n := 0
			if _, err := ReadLog(path, func(line []byte) error {
				n++
				if len(line) > maxLine {
					t.Fatalf("line %d is %d bytes", n, len(line))
				}
				if err := d.Decode(line, &rec); err != nil {
					t.Fatalf("line %d torn (%v): %.120q", n, err, line)
				}
				key := rec.Server + "/" + rec.ID
				if seen[key] {
					t.Fatalf("line %d repeats %s", n, key)
				}
				seen[key] = true
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(seen) != procs*perProc {
				t.Errorf("%d lines, want %d", len(seen), procs*perProc)
			}
		})
	}
}
