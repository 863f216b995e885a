package policy

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/links"
)

// headFiller is n bytes of the bench's text: lines of the printable ASCII
// characters shifting from line to line, with "<", "(", "!" and "["
// everywhere but no image marker.
func headFiller(n int) string {
	const printable = ` !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{|}~`
	var sb strings.Builder
	for line := 0; sb.Len() < n; line++ {
		for col := range 79 {
			sb.WriteByte(printable[(line*7+col)%len(printable)])
		}
		sb.WriteByte('\n')
	}
	return sb.String()[:n]
}

// headLine is a tools/call result whose text is filler with snippet at
// offset at.
func headLine(t testing.TB, filler, snippet string, at int) []byte {
	at = min(at, len(filler))
	q, err := jsontext.AppendQuote(nil, filler[:at]+snippet+filler[at:])
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":`), q, []byte(`}]}}`))
}

// textAt is the offset in filler whose JSON string starts at the raw
// offset raw: every newline is escaped in two bytes.
func textAt(filler string, raw int) int {
	at := 0
	for n := 0; n < raw; at++ {
		n++
		if filler[at] == '\n' {
			n++
		}
	}
	return at
}

// headPolicies: the baseline (images removed, links kept) and a policy
// that neutralises links, for which the head's finding does not count.
func headPolicies(t testing.TB) []*Policy {
	return []*Policy{Baseline(), mustLoad(t, "version: 1\nlinks: {links: neutralise}\n")}
}

// judgedAsWhole judges line's links with what a HeadCheck found in the
// heads it arrived in (each a length; with wait, after it has read the
// last of them), and as a whole, and fails when the
// verdicts differ: the head's finding is an input of that verdict alone.
// It returns what the HeadCheck found.
func judgedAsWhole(t testing.TB, p *Policy, line []byte, arrivals []int, wait bool) int {
	t.Helper()
	var h HeadCheck
	for _, n := range arrivals {
		h.Arrived(line[:n])
	}
	if wait {
		h.caughtUp()
	}
	head := h.Done()
	m, err := message.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	ef := p.egressFilterFor("read")
	if got, want := ef.linksClean(m.Raw, m.Escapes(), m.Members(), head), ef.linksClean(m.Raw, m.Escapes(), m.Members(), 0); got != want {
		t.Fatalf("head %d of %d (arrived %v): links clean %v, as a whole %v", head, len(line), arrivals, got, want)
	}
	return head
}

// TestEgressAfterHead: a long result judged with what a HeadCheck found
// while it arrived gets the bytes and rewrites Egress gives it whole,
// clean or with an image in its head.
func TestEgressAfterHead(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat(strings.Repeat("x", 79)+"\n", (headMin+128<<10)/80)
	call := &Call{Method: "tools/call", Tool: "read"}
	for _, snippet := range []string{"", "![x](https://evil.example/a.png)"} {
		line := headLine(t, filler, snippet, headMin/2)
		var h HeadCheck
		for n := 64 << 10; n < len(line); n += 64 << 10 {
			h.Arrived(line[:n])
		}
		h.caughtUp()
		head := h.Done()
		if snippet == "" && head < headMin {
			t.Errorf("a clean head: %d bytes judged", head)
		}
		want, wantRw, wantErr := Baseline().NewSession().Egress(mustParse(t, string(line)), call)
		got, gotRw, gotErr := Baseline().NewSession().EgressAfter(mustParse(t, string(line)), call, head)
		if !bytes.Equal(got, want) || len(gotRw) != len(wantRw) || gotErr != nil || wantErr != nil {
			t.Errorf("%q: %d bytes, %v, %v; whole: %d bytes, %v, %v", snippet, len(got), gotRw, gotErr, len(want), wantRw, wantErr)
		}
		if (len(wantRw) == 0) != (snippet == "") {
			t.Errorf("%q: rewrites %v", snippet, wantRw)
		}
	}
}

// TestHeadCheckAsWhole: an image, a loading tag or a CSS url() that
// starts where a head of a long result ends, or MarkReach before, is
// judged as in the whole result, and a clean head is judged (so the tail
// alone is left).
func TestHeadCheckAsWhole(t *testing.T) {
	t.Parallel()
	filler := headFiller(headMin + 192<<10)
	var lens []int // arrivals of 64 KiB, as reads of a pipe give them
	for n := 64 << 10; n < len(filler); n += 64 << 10 {
		lens = append(lens, n)
	}
	prefix := len(headLine(t, "", "", 0)) - len(`"}]}}`)
	for _, p := range headPolicies(t) {
		if head := judgedAsWhole(t, p, headLine(t, filler, "", 0), lens, true); head != lens[len(lens)-1]-links.MarkReach {
			t.Errorf("a clean head: %d bytes judged", head)
		}
		for _, snippet := range []string{"![x](https://evil.example/a.png)", "<img src=https://evil.example/a>",
			`<p style="background:url(https://evil.example/)">`, `<a href="https://evil.example/">x</a>`} {
			q, _ := jsontext.AppendQuote(nil, snippet)
			quoted := q[1 : len(q)-1] // as the line spells it
			mark := bytes.IndexAny(quoted, "<!")
			if bytes.Contains(quoted, []byte("url(")) {
				mark = bytes.IndexByte(quoted, '(')
			}
			for _, edge := range []int{headMin, headMin + 64<<10, lens[len(lens)-1]} {
				ds := []int{-links.MarkReach - 1, -links.MarkReach, -links.MarkReach + 1, -8, -1, 0, 1}
				if raceEnabled {
					ds = []int{-links.MarkReach, 0} // a sample: the race detector makes each read slow
				}
				for _, d := range ds {
					line := headLine(t, filler, snippet, textAt(filler, edge+d-prefix-mark))
					// A byte later when edge+d falls inside an escaped newline.
					if got := bytes.Index(line, quoted) + mark; got != edge+d && got != edge+d+1 {
						t.Fatalf("the marker is at %d, not %d", got, edge+d)
					}
					judgedAsWhole(t, p, line, lens, d%2 == 0)
				}
			}
		}
	}
}

// FuzzHeadCheck: a long result judged with what a HeadCheck found while
// it arrived, broken at any points, gets what Egress gives it whole.
func FuzzHeadCheck(f *testing.F) {
	for _, s := range []string{"![x](https://evil.example/a.png)", "<img src=x>", "<IMG\tsrc=x>", "url(x)",
		`\75 rl(x)`, "<a href=x>y</a>", "[x](https://evil.example/)", "plain"} {
		f.Add(s, uint32(headMin), uint32(headMin+10), uint32(headMin+300))
		f.Add(s, uint32(headMin+headPiece-3), uint32(headMin+1), uint32(headMin+headPiece))
	}
	filler := headFiller(headMin + headPiece)
	ps := headPolicies(f)
	f.Fuzz(func(t *testing.T, snippet string, at, cut1, cut2 uint32) {
		if !utf8.ValidString(snippet) || len(snippet) > 256 {
			return
		}
		line := headLine(t, filler, snippet, int(at)%len(filler))
		arrivals := []int{int(cut1) % len(line), int(cut2) % len(line)}
		slices.Sort(arrivals)
		for _, p := range ps {
			judgedAsWhole(t, p, line, arrivals, at%2 == 0)
		}
	})
}

// caughtUp waits until the goroutine has read all it can of the last head
// it was given, or found a marker.
func (h *HeadCheck) caughtUp() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.running && !h.marked && h.clean < len(h.head)-links.MarkReach {
		h.changed.Wait()
	}
}
