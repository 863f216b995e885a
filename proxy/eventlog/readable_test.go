package eventlog

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rs/zerolog"
)

// A verdict's message keeps the policy's own text as written (a pattern
// with a backtick), while peer text elsewhere is still canonicalised.
func TestPolicyTextKeepsBackticks(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, "srv", Budget{})
	msg := "rejected MCP input run: value matches the denied pattern [`;&]|\\$\\( (policy entry ingress[3])"
	l.Log(Event{Level: zerolog.WarnLevel, Event: EventRejected, Message: msg, PolicyText: true})
	l.Log(Event{Level: zerolog.WarnLevel, Event: EventMalformed, Message: "peer `rm -rf` \x1b[2J"})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var r Record
	var d Decoder
	if err := d.Decode([]byte(lines[0]), &r); err != nil || r.Message != msg {
		t.Errorf("policy text altered: %q (%v)", r.Message, err)
	}
	if err := d.Decode([]byte(lines[1]), &r); err != nil || strings.ContainsAny(r.Message, "`\x1b") {
		t.Errorf("peer text not canonicalised: %q (%v)", r.Message, err)
	}
	tail := &Tail{}
	r = Record{Event: EventRejected, Message: msg, ValueLen: -1, Status: -1}
	if got := string(tail.Format(nil, &r)); !strings.Contains(got, "[`;&]") {
		t.Errorf("tail alters the policy's pattern: %s", got)
	}
	if got := cleanKeepingBackticks("a`b\x1b[31m`c\u202e", 1024); got != "a`b [31m`c?" {
		t.Errorf("cleanKeepingBackticks = %q", got)
	}
}

// tail cuts long messages between words, not inside one.
func TestShortenBetweenWords(t *testing.T) {
	s := "rejected MCP input path: path is outside the allowed roots, which are listed in the policy entry ingress[2]"
	for n := 20; n < len(s); n++ {
		got := shorten(s, n)
		if !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) > n {
			t.Fatalf("shorten(%d) = %q", n, got)
		}
		kept := strings.TrimSuffix(strings.TrimSuffix(got, "…"), " ")
		if !strings.HasPrefix(s, kept) || !strings.ContainsRune(" ,:", rune(s[len(kept)])) {
			t.Errorf("shorten(%d) cuts inside a word: %q", n, got)
		}
	}
	// One long word is cut where it must be.
	long := strings.Repeat("x", 200)
	if got := shorten(long, 10); got != strings.Repeat("x", 9)+"…" {
		t.Errorf("shorten(long) = %q", got)
	}
	if got := shorten("short", 10); got != "short" {
		t.Errorf("shorten(short) = %q", got)
	}
}
