package proxy

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

func TestCopyStderrCanonicalisesLines(t *testing.T) {
	in := "plain line\n\x1b]52;c;Y3VybA==\x07clip\n\x1b[31mred\x1b[0m \u202eevil\ttab\r\nno newline at end é"
	want := "plain line\nclip\nred evil\ttab\r\nno newline at end é"
	for _, r := range []func(string) *strings.Reader{strings.NewReader} {
		var out bytes.Buffer
		copyStderr(&out, iotest.OneByteReader(r(in)))
		if out.String() != want {
			t.Errorf("one byte at a time:\n got %q\nwant %q", out.String(), want)
		}
		out.Reset()
		copyStderr(&out, r(in))
		if out.String() != want {
			t.Errorf("whole:\n got %q\nwant %q", out.String(), want)
		}
	}
}

// A line longer than the buffer goes out in pieces cut at code point
// boundaries: no character is split into U+FFFD, and no escape survives.
func TestCopyStderrLongLine(t *testing.T) {
	line := strings.Repeat("é", stderrChunk) + "\x1b[2J" + strings.Repeat("日", stderrChunk) + "\n"
	var out bytes.Buffer
	copyStderr(&out, strings.NewReader(line))
	want := strings.Repeat("é", stderrChunk) + strings.Repeat("日", stderrChunk) + "\n"
	if out.String() != want {
		t.Errorf("long line: %d bytes out, want %d; U+FFFD: %v, ESC: %v", out.Len(), len(want), strings.Contains(out.String(), "\uFFFD"), strings.Contains(out.String(), "\x1b"))
	}
}

func TestCopyStderrRedacts(t *testing.T) {
	var out bytes.Buffer
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cret", "[REDACTED:known-secret]") }
	copyStderrWith(&out, strings.NewReader("token=s3cret\x1b[31m\nok\n"), redact)
	if got := out.String(); got != "token=[REDACTED:known-secret]\nok\n" {
		t.Fatalf("got %q", got)
	}
}
