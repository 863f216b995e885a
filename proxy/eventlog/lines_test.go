package eventlog

import (
	"io"
	"strings"
	"testing"
)

func readLines(t *testing.T, l *Lines) []string {
	t.Helper()
	var out []string
	for range 1000 {
		line, err := l.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(line))
	}
	t.Fatal("no EOF")
	return nil
}

func TestLinesSkipsOverLongLines(t *testing.T) {
	in := "a\n" + strings.Repeat("x", 5<<20) + "\n" + strings.Repeat("y", 100) + "\n" + strings.Repeat("z", 101) + "\nb\nrest"
	l := NewLines(strings.NewReader(in), 100)
	got := readLines(t, l)
	if want := []string{"a", strings.Repeat("y", 100), "b"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %.80q, want %.80q", got, want)
	}
	if l.TooLong() != 2 {
		t.Errorf("TooLong = %d, want 2", l.TooLong())
	}
	if rest := l.Rest(); string(rest) != "rest" {
		t.Errorf("Rest = %q", rest)
	}
	if rest := l.Rest(); rest != nil {
		t.Errorf("second Rest = %q", rest)
	}
}

// growing is a file being appended to: reads past its end get io.EOF.
type growing struct {
	data []byte
	pos  int
}

func (g *growing) Read(p []byte) (int, error) {
	if g.pos == len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.pos:])
	g.pos += n
	return n, nil
}

// TestLinesKeepsUnfinishedLine: a line still being written is not
// returned until its newline arrives.
func TestLinesKeepsUnfinishedLine(t *testing.T) {
	g := &growing{data: []byte("one\ntw")}
	l := NewLines(g, 0)
	if line, err := l.Next(); string(line) != "one" || err != nil {
		t.Fatalf("Next = %q, %v", line, err)
	}
	if line, err := l.Next(); err != io.EOF {
		t.Fatalf("Next = %q, %v; want EOF while the line is unfinished", line, err)
	}
	g.data = append(g.data, "o\nthree\n"...)
	if got := readLines(t, l); strings.Join(got, "|") != "two|three" {
		t.Fatalf("lines %q", got)
	}
}
