package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// attackStats counts testdata/attack.log: three servers, a burst of
// rejections on one, a slow trickle on another, hostile strings, and
// malformed and foreign lines.
func attackStats(t *testing.T, since time.Time) *Stats {
	t.Helper()
	f, err := os.Open("testdata/attack.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewStats(since)
	if _, err := s.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStatsGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		by    []string
		json  bool
		since time.Time
	}{
		{name: "stats.golden"},
		{name: "stats_by_tool.golden", by: []string{ByTool}},
		{name: "stats_since.golden", since: time.Date(2026, 7, 1, 10, 2, 0, 0, time.UTC)},
		{name: "stats.json.golden", json: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := attackStats(t, tc.since)
			var buf bytes.Buffer
			var err error
			if tc.json {
				err = s.WriteJSON(&buf, tc.by, time.UTC)
			} else {
				err = s.WriteText(&buf, tc.by, time.UTC)
			}
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestStatsCountsSkippedLines(t *testing.T) {
	s := attackStats(t, time.Time{})
	// A foreign zerolog line, a line that is not JSON, a torn line, an
	// empty line.
	if s.Skipped != 4 || s.Lines != 28 || s.Events != 24 {
		t.Errorf("lines %d, skipped %d, events %d", s.Lines, s.Skipped, s.Events)
	}
	var out struct {
		Skipped    int `json:"skipped"`
		Rejections int `json:"rejections"`
	}
	var buf bytes.Buffer
	s.WriteJSON(&buf, nil, time.UTC)
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil || out.Skipped != 4 || out.Rejections != 15 {
		t.Errorf("json %+v, %v", out, err)
	}
}

func TestStatsTimelineBuckets(t *testing.T) {
	for _, tc := range []struct {
		span    time.Duration
		step    time.Duration
		buckets int
	}{
		{0, time.Minute, 1},
		{59 * time.Second, time.Minute, 1},
		{3 * time.Hour, time.Minute, 181},
		{3*time.Hour + time.Minute, time.Hour, 4},
		{7 * 24 * time.Hour, time.Hour, 7*24 + 1},
		{8 * 24 * time.Hour, 24 * time.Hour, 9},
		{100 * 365 * 24 * time.Hour, 24 * time.Hour, maxBuckets},
	} {
		s := NewStats(time.Time{})
		s.Add(rejection("fs", 0, "C", "t"))
		s.Add(rejection("fs", tc.span, "C", "t"))
		step, tl := s.Timeline(time.UTC)
		total := 0
		for _, b := range tl {
			total += b.Rejections
		}
		wantTotal := 2
		if tc.buckets == maxBuckets {
			wantTotal = 1 // the first is older than the chart
		}
		if step != tc.step || len(tl) != tc.buckets || total != wantTotal {
			t.Errorf("span %v: step %v, %d buckets, %d rejections; want %v, %d, %d", tc.span, step, len(tl), total, tc.step, tc.buckets, wantTotal)
		}
	}
}

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		n, most int
		want    string
	}{
		{0, 10, ""}, {10, 10, "████████████████████████████████████████"}, {1, 1000, "▏"}, {5, 10, "████████████████████"}, {1, 64, "▋"},
	} {
		if got := bar(tc.n, tc.most); got != tc.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tc.n, tc.most, got, tc.want)
		}
	}
}

func TestTailGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/attack.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tail Tail
	}{
		{"tail.golden", Tail{}},
		{"tail_spike.golden", Tail{Spikes: NewSpikeDetector(SpikeRule{N: 5, Window: time.Minute})}},
		{"tail_all_color.golden", Tail{All: true, Color: true, Spikes: NewSpikeDetector(SpikeRule{N: 5, Window: time.Minute})}},
		{"tail_server_since.golden", Tail{Server: "filesystem", Since: time.Date(2026, 7, 1, 10, 2, 30, 0, time.UTC)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tl := tc.tail
			tl.W, tl.Location = &buf, time.UTC
			for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				if err := tl.Line(line); err != nil {
					t.Fatal(err)
				}
			}
			fmt.Fprintf(&buf, "(skipped %d, alerts %d)\n", tl.Skipped, tl.Alerts)
			if r, bad := forbidden(string(bytes.ReplaceAll(stripSGR(buf.Bytes()), []byte("\n"), nil))); bad {
				t.Errorf("tail wrote %U", r)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

// stripSGR removes the colours Tail writes itself.
func stripSGR(b []byte) []byte {
	for _, sgr := range []string{sgrReset, sgrDim, sgrBold, sgrRed, sgrGreen, sgrYellow, sgrMagenta, sgrCyan, sgrAlert} {
		b = bytes.ReplaceAll(b, []byte(sgr), nil)
	}
	return b
}

func TestTailExitOnSpike(t *testing.T) {
	data, _ := os.ReadFile("testdata/attack.log")
	var buf bytes.Buffer
	tl := Tail{W: &buf, Location: time.UTC, ExitOnSpike: true, Spikes: NewSpikeDetector(SpikeRule{N: 5, Window: time.Minute})}
	var err error
	for _, line := range bytes.Split(data, []byte("\n")) {
		if err = tl.Line(line); err != nil {
			break
		}
	}
	if err != ErrSpike || tl.Alerts != 1 || !bytes.Contains(buf.Bytes(), []byte("ALERT 2026-07-01 10:02:37.250 filesystem: 5 rejections")) {
		t.Errorf("err %v, alerts %d:\n%s", err, tl.Alerts, buf.Bytes())
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"15m":                  now.Add(-15 * time.Minute),
		"2h":                   now.Add(-2 * time.Hour),
		"3d":                   now.Add(-72 * time.Hour),
		"2026-07-01T10:00:00Z": time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC),
		"2026-07-01 10:30":     time.Date(2026, 7, 1, 10, 30, 0, 0, time.UTC),
		"2026-06-30":           time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC),
	} {
		if got, err := ParseSince(in, now, time.UTC); err != nil || !got.Equal(want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-5m", "5x"} {
		if _, err := ParseSince(bad, now, time.UTC); err == nil {
			t.Errorf("ParseSince(%q) accepted", bad)
		}
	}
}

// benchLines is the size of the benchmark log.
const benchLines = 1_000_000

var (
	benchOnce sync.Once
	benchDir  string
	benchLog  string
	benchErr  error
)

// writeBenchLog writes a 1,000,000-line log through Logger, as mcpguard
// would, over 10 simulated hours from 8 servers: mostly rejections, with
// rewrites, audits, starts and exits, and a few garbage lines.
func writeBenchLog() (string, error) {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "eventlog-bench")
		if benchErr != nil {
			return
		}
		benchLog = filepath.Join(benchDir, "mcpguard.log")
		f, err := os.Create(benchLog)
		if err != nil {
			benchErr = err
			return
		}
		defer f.Close()
		w := bufio.NewWriterSize(f, 1<<20)
		clock := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
		saved := zerolog.TimestampFunc
		zerolog.TimestampFunc = func() time.Time { return clock }
		defer func() { zerolog.TimestampFunc = saved }()
		var loggers []*Logger
		for i := range 8 {
			loggers = append(loggers, New(w, "server-"+strconv.Itoa(i), Budget{}))
		}
		codes := []string{"INPUT_REJECTED_PATH_SCOPE", "INPUT_REJECTED_DANGEROUS_FLAG", "INPUT_REJECTED_SHELL_METACHAR", "INPUT_REJECTED_SCHEMA"}
		tools := []string{"read_file", "write_file", "run_tests", "git_log", "fetch", "search_files"}
		for i := range benchLines {
			clock = clock.Add(36 * time.Millisecond)
			l := loggers[i%8]
			switch {
			case i%1000 == 999:
				w.WriteString("garbage that is not an event\n")
			case i%10 == 7:
				l.Log(Event{Level: zerolog.InfoLevel, Event: EventRewritten, Direction: Egress, Method: "tools/call",
					Tool: tools[i%6], ID: strconv.Itoa(i), Field: "content[0].text", Action: ActionRewritten,
					Message: "egress text canonicaliser rewrote the field",
					Extra:   func(e *zerolog.Event) { e.Str("canonicaliser", "text").Int("bytes_removed", 3) }})
			case i%10 == 8:
				l.Log(Event{Level: zerolog.WarnLevel, Event: EventAudited, Direction: Ingress, Method: "tools/call",
					Tool: tools[i%6], ID: strconv.Itoa(i), ErrorCode: codes[i%4], Field: "path", Rule: "ingress[3]",
					Action: ActionAudited, Message: "would reject path: outside every root", Value: []byte("/etc/shadow")})
			default:
				l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress, Method: "tools/call",
					Tool: tools[i%6], ID: strconv.Itoa(i), ErrorCode: codes[i%4], Field: "arguments.path", Rule: "ingress[2]",
					Action: ActionRejected, Message: "rejected MCP input arguments.path: outside every root \"/home/me/src\"",
					Value: []byte("../../.ssh/id_rsa")})
			}
		}
		benchErr = w.Flush()
	})
	return benchLog, benchErr
}

// BenchmarkStats: `mcpguard stats` over a 1,000,000-line log.
func BenchmarkStats(b *testing.B) {
	path, err := writeBenchLog()
	if err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	var s *Stats
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		s = NewStats(time.Time{})
		if _, err := s.ReadFrom(f); err != nil {
			b.Fatal(err)
		}
		s.WriteText(&bytes.Buffer{}, nil, time.UTC)
		f.Close()
	}
	if s.Lines != benchLines || s.Skipped != benchLines/1000 {
		b.Fatalf("lines %d skipped %d", s.Lines, s.Skipped)
	}
	b.ReportMetric(float64(s.Lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

func TestTailReadFile(t *testing.T) {
	data, err := os.ReadFile("testdata/attack.log")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	ref := Tail{W: &want, Location: time.UTC}
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		ref.Line(line)
	}
	// The last line unfinished (a writer mid-line) is still read.
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, bytes.TrimSuffix(data, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	tl := Tail{W: &got, Location: time.UTC}
	if err := tl.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || tl.Skipped != ref.Skipped || tl.Skipped == 0 {
		t.Errorf("ReadFile: skipped %d (want %d):\n%s\nwant:\n%s", tl.Skipped, ref.Skipped, got.String(), want.String())
	}
	if err := tl.ReadFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing log: %v", err)
	}
}
