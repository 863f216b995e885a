package eventlog

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// clock is a settable time for a limiter.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func budgetLogger(buf *bytes.Buffer, b Budget, c *clock) *Logger {
	l := New(buf, "srv", b)
	l.lim.now = c.now
	return l
}

func junk(i int) Event {
	return Event{Level: zerolog.WarnLevel, Event: EventMalformed, Direction: Egress, ErrorCode: "OUTPUT_MALFORMED",
		ID: strconv.Itoa(i), Field: "f" + strconv.Itoa(i), Message: "not JSON", Value: []byte("xx")}
}

// statsOf reads a log back as stats does.
func statsOf(t *testing.T, log []byte) *Stats {
	t.Helper()
	s := NewStats(time.Time{})
	if _, err := s.ReadFrom(bytes.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	if s.Skipped > 0 {
		t.Fatalf("%d lines skipped", s.Skipped)
	}
	return s
}

// TestBudgetCollapsesAFlood: a flood of one kind writes PerKind lines and
// one summary line per window, whatever its ids and fields; another kind
// keeps its own lines; and stats reads back every event.
func TestBudgetCollapsesAFlood(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	b := Budget{Window: time.Minute, PerKind: 20, Lines: 200, Kinds: 256}
	l := budgetLogger(&buf, b, c)
	for i := range 100_000 {
		l.Log(junk(i))
		if i%10_000 == 0 {
			l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress, Method: "tools/call", Tool: "rm", ErrorCode: "INPUT_REJECTED_DENY"})
		}
	}
	c.add(time.Minute) // a line in the next window writes the last one's summary
	l.Log(junk(-1))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 20+10+1+1 {
		t.Fatalf("%d lines, want 32:\n%s", len(lines), buf.String())
	}
	summary := lines[len(lines)-2]
	for _, want := range []string{`"event":"malformed"`, `"direction":"egress"`, `"error_code":"OUTPUT_MALFORMED"`, `"suppressed":99980`, `"since":"2026-11-25T00:00:00Z"`} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary %s lacks %s", summary, want)
		}
	}
	for _, leak := range []string{`"id"`, `"field"`, `"value_len"`} {
		if strings.Contains(summary, leak) {
			t.Errorf("summary %s has %s: it stands for lines that differ there", summary, leak)
		}
	}
	s := statsOf(t, buf.Bytes())
	if s.ByEvent["malformed"] != 100_001 || s.ByEvent["rejected"] != 10 || s.Rejections != 100_011 {
		t.Errorf("stats read back %v, %d rejections; want 100001 malformed, 10 rejected", s.ByEvent, s.Rejections)
	}
}

// TestBudgetBoundsVaryingKinds: a server that makes every line a new kind
// (a method name of its choosing) still gets at most Lines lines and Kinds
// summaries, plus one for the kinds past them, per window.
func TestBudgetBoundsVaryingKinds(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	b := Budget{Window: time.Minute, PerKind: 20, Lines: 200, Kinds: 256}
	l := budgetLogger(&buf, b, c)
	const n = 50_000
	for i := range n {
		l.Log(Event{Level: zerolog.InfoLevel, Event: EventRewritten, Direction: Egress, Method: "notifications/x" + strconv.Itoa(i), Action: ActionRewritten})
	}
	l.Flush()
	lines := strings.Count(buf.String(), "\n")
	if max := b.Lines + b.Kinds + 1; lines > max {
		t.Errorf("%d lines, want at most %d", lines, max)
	}
	if s := statsOf(t, buf.Bytes()); s.ByEvent["rewritten"] != n {
		t.Errorf("stats read back %d rewrites, want %d", s.ByEvent["rewritten"], n)
	}
}

// TestBudgetSummaryWithoutMoreLines: when a flood stops, its summary is
// written when the window ends, with no later line or Flush to trigger it.
func TestBudgetSummaryWithoutMoreLines(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	l := New(w, "srv", Budget{Window: 50 * time.Millisecond, PerKind: 2, Lines: 10, Kinds: 4})
	for i := range 10 {
		l.Log(junk(i))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := buf.String()
		mu.Unlock()
		if strings.Contains(got, `"suppressed":8`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no summary after the window:\n%s", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestSpikeCountsSummaries: a summary line of 30 rejections is 30
// rejections to a spike rule, and tail shows its count.
func TestSpikeCountsSummaries(t *testing.T) {
	var out bytes.Buffer
	tl := &Tail{W: &out, Spikes: NewSpikeDetector(SpikeRule{N: 25, Window: time.Minute})}
	line := `{"level":"warn","event":"rejected","server":"s","direction":"ingress","method":"tools/call","error_code":"INPUT_REJECTED_DENY","suppressed":30,"time":"2026-11-25T00:00:00Z","message":"30 more lines"}`
	if err := tl.Line([]byte(line)); err != nil {
		t.Fatal(err)
	}
	if tl.Alerts != 1 || !strings.Contains(out.String(), "suppressed=30") || !strings.Contains(out.String(), "30 rejections") {
		t.Errorf("tail wrote %q, %d alerts", out.String(), tl.Alerts)
	}
}

// TestBudgetServerFloodCannotHideAgentRejections: a hostile server that
// spends the whole window's lines and kinds (junk lines, notifications
// under thousands of method names, roots/list answers it provokes) must
// not turn the agent's refused tools/call into a count: the refusal is
// written in full, with its tool, rule and id.
func TestBudgetServerFloodCannotHideAgentRejections(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	l := budgetLogger(&buf, DefaultBudget, c)
	for i := range 5_000 {
		l.Log(junk(i))
		l.Log(Event{Level: zerolog.InfoLevel, Event: EventRewritten, Direction: Egress, Method: "notifications/x" + strconv.Itoa(i), Action: ActionRewritten})
		l.Log(Event{Level: zerolog.WarnLevel, Event: EventRewritten, Direction: Ingress, Method: "roots/list", Field: "roots[" + strconv.Itoa(i) + "]", Action: ActionRewritten})
	}
	l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress, Method: "tools/call", Tool: "send_email",
		ID: "42", ErrorCode: "INPUT_REJECTED_FLOW", Rule: "no_exfiltration", Action: ActionRejected})
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, `"tool":"send_email"`) && strings.Contains(line, `"id":"42"`) && strings.Contains(line, `"rule":"no_exfiltration"`) {
			return
		}
	}
	t.Fatalf("the agent's refused call was not written after a server flood:\n%s", tailLines(buf.String(), 5))
}

// TestBudgetAgentFloodKeepsTheCode: an agent (a prompt injection) that
// spends every kind on made-up tool names still leaves its later refusals
// counted under their error code and action, not under their event alone.
func TestBudgetAgentFloodKeepsTheCode(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	l := budgetLogger(&buf, DefaultBudget, c)
	for i := range 1_000 {
		l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress, Method: "tools/call", Tool: "t" + strconv.Itoa(i),
			ErrorCode: "INPUT_REJECTED_DENY", Action: ActionRejected})
	}
	l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Direction: Ingress, Method: "tools/call", Tool: "send_email",
		ErrorCode: "INPUT_REJECTED_FLOW", Rule: "no_exfiltration", Action: ActionRejected})
	l.Flush()
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, `"error_code":"INPUT_REJECTED_FLOW"`) && strings.Contains(line, `"suppressed":1`) && strings.Contains(line, `"direction":"ingress"`) {
			return
		}
	}
	t.Fatalf("the flow refusal lost its code in the summaries:\n%s", tailLines(buf.String(), 5))
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestBudgetServerFloodCannotHideOwnEvents: mcpguard's own lines (a
// failed reload with its reason, a warning) are not the server's to
// spend either.
func TestBudgetServerFloodCannotHideOwnEvents(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	l := budgetLogger(&buf, DefaultBudget, c)
	for i := range 5_000 {
		l.Log(Event{Level: zerolog.ErrorLevel, Event: EventMalformed, Method: "x" + strconv.Itoa(i), Message: "junk"})
		l.Log(junk(i))
	}
	l.Log(Event{Level: zerolog.ErrorLevel, Event: EventReload, Message: "policy reload failed; the policy in force stays: fs.yaml:3:1"})
	if !strings.Contains(buf.String(), "fs.yaml:3:1") {
		t.Fatalf("the failed reload was not written after a server flood:\n%s", tailLines(buf.String(), 3))
	}
}
