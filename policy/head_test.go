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

// headFiller is n bytes of text: with kind "printable", the bench's
// (lines of the printable ASCII characters shifting from line to line,
// with "<", "(", "!" and "[" everywhere but no image marker); with
// "cyrillic", lines of Russian words (two bytes a letter).
func headFiller(n int, kind string) string {
	const printable = ` !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{|}~`
	var sb strings.Builder
	for line := 0; sb.Len() < n; line++ {
		if kind == "cyrillic" {
			sb.WriteString("Съешь же ещё этих мягких французских булок, да выпей чаю " + strings.Repeat("ж", line%7) + "\n")
			continue
		}
		for col := range 79 {
			sb.WriteByte(printable[(line*7+col)%len(printable)])
		}
		sb.WriteByte('\n')
	}
	return strings.ToValidUTF8(sb.String()[:n], "")
}

// headLine is a tools/call result whose text is filler with snippet at
// offset at (or the start of the code point there).
func headLine(t testing.TB, filler, snippet string, at int) []byte {
	at = min(at, len(filler))
	for at < len(filler) && !utf8.RuneStart(filler[at]) {
		at++
	}
	q, err := jsontext.AppendQuote(nil, filler[:at]+snippet+filler[at:])
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":`), q, []byte(`}]}}`))
}

// textAt is the offset in filler whose JSON string starts at the raw
// offset raw (or the byte after): every newline is escaped in two bytes.
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

// judgedAsWhole judges line's links and text with what a HeadCheck
// found in the heads it arrived in (each a length; with wait, after it
// has read the last of them), and as a whole, and fails when the verdicts
// differ: what the head check finds is an input of those verdicts alone.
// It returns what the HeadCheck found.
func judgedAsWhole(t testing.TB, p *Policy, line []byte, arrivals []int, wait bool) Head {
	t.Helper()
	var h HeadCheck
	for _, n := range arrivals {
		h.Arrived(line[:n])
	}
	if wait {
		h.caughtUp()
	}
	m, err := message.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	head := h.Done().of(m.Raw)
	ef := p.egressFilterFor("read")
	if got, want := ef.linksClean(m.Raw, m.Escapes(), m.Members(), head.imagesClean()), ef.linksClean(m.Raw, m.Escapes(), m.Members(), 0); got != want {
		t.Fatalf("head %+v of %d (arrived %v): links clean %v, as a whole %v", head, len(line), arrivals, got, want)
	}
	if got, want := head.needsText || needsText(m.Raw[head.text:]), rawNeedsText(m.Raw); got != want {
		t.Fatalf("head %+v of %d (arrived %v): needs text %v, as a whole %v", head, len(line), arrivals, got, want)
	}
	return head
}

// TestEgressAfterHead: a long result judged with what a HeadCheck found
// while it arrived gets the bytes and rewrites Egress gives it whole,
// clean, with an image or with a bidi override in its head.
func TestEgressAfterHead(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat(strings.Repeat("x", 79)+"\n", (headMin+64<<10)/80)
	call := &Call{Method: "tools/call", Tool: "read"}
	for _, snippet := range []string{"", "![x](https://evil.example/a.png)", "a\u202eb"} {
		line := headLine(t, filler, snippet, headMin/2)
		var h HeadCheck
		for n := 64 << 10; n < len(line); n += 64 << 10 {
			h.Arrived(line[:n])
		}
		h.caughtUp()
		head := h.Done()
		if snippet == "" && (head.imagesClean() < headMin || head.text != 0) { // ASCII: the parse judges the text
			t.Errorf("a clean head: %+v judged", head)
		}
		want, wantRw, wantErr := Baseline().NewSession().Egress(mustParse(t, string(line)), call)
		m, err := message.Parse(line) // Raw is line, where the head was found
		if err != nil {
			t.Fatal(err)
		}
		got, gotRw, gotErr := Baseline().NewSession().EgressAfter(m, call, head)
		if !bytes.Equal(got, want) || len(gotRw) != len(wantRw) || gotErr != nil || wantErr != nil {
			t.Errorf("%q: %d bytes, %v, %v; whole: %d bytes, %v, %v", snippet, len(got), gotRw, gotErr, len(want), wantRw, wantErr)
		}
		if (len(wantRw) == 0) != (snippet == "") {
			t.Errorf("%q: rewrites %v", snippet, wantRw)
		}
	}
}

// TestHeadCheckAsWhole: an image, a loading tag, a CSS url(), a bidi
// override or an escaped control that starts where a head of a long
// result ends, or MarkReach before, is judged as in the whole result,
// in ASCII and in Cyrillic text; and a clean head is judged (so the tail
// alone is left).
func TestHeadCheckAsWhole(t *testing.T) {
	t.Parallel()
	kinds := []string{"printable", "cyrillic"}
	if raceEnabled {
		kinds = kinds[:1] // the race detector makes each read slow; the run without it does all
	}
	for _, kind := range kinds {
		filler := headFiller(headMin+192<<10, kind)
		var lens []int // arrivals of 64 KiB, as reads of a pipe give them
		for n := 64 << 10; n < len(filler); n += 64 << 10 {
			lens = append(lens, n)
		}
		prefix := len(headLine(t, "", "", 0)) - len(`"}]}}`)
		policies := headPolicies(t)
		if kind == "cyrillic" {
			policies = policies[:1] // the text check does not depend on the links filter
		}
		for _, p := range policies {
			last := lens[len(lens)-1]
			head := judgedAsWhole(t, p, headLine(t, filler, "", 0), lens, true)
			text := head.text >= last-64 // beyond ASCII: the head check reads the text
			if kind == "printable" {
				text = head.text == 0 // ASCII: the parse judges the text
			}
			if head.imagesClean() != last-links.MarkReach || !text || head.needsText {
				t.Errorf("%s: a clean head: %+v judged of %d", kind, head, last)
			}
			for _, snippet := range []string{"![x](https://evil.example/a.png)", "<img src=https://evil.example/a>",
				`<p style="background:url(https://evil.example/)">`, `<a href="https://evil.example/">x</a>`,
				"\u202eevil", "\x1b[31mred"} {
				q, _ := jsontext.AppendQuote(nil, snippet)
				quoted := q[1 : len(q)-1] // as the line spells it
				mark := max(0, bytes.IndexAny(quoted, "<!"))
				if bytes.Contains(quoted, []byte("url(")) {
					mark = bytes.IndexByte(quoted, '(')
				}
				for _, edge := range []int{headMin, last} {
					ds := []int{-links.MarkReach - 1, -links.MarkReach, -links.MarkReach + 1, -1, 0, 1}
					if raceEnabled {
						ds = []int{-links.MarkReach, 0} // a sample: the race detector makes each read slow
					}
					for _, d := range ds {
						line := headLine(t, filler, snippet, textAt(filler, edge+d-prefix-mark))
						// Up to two bytes later when edge+d falls inside an
						// escaped newline or a letter.
						if got := bytes.Index(line, quoted) + mark; got < edge+d || got > edge+d+2 {
							t.Fatalf("the mark is at %d, not %d", got, edge+d)
						}
						judgedAsWhole(t, p, line, lens, d%2 == 0)
					}
				}
			}
		}
	}
}

// FuzzHeadCheck: a long result judged with what a HeadCheck found while
// it arrived, broken at any points, gets the links and text verdicts of
// the whole line. The bits of at and cut2 choose whether the check
// catches up before the line ends, the policy, whitespace the parse
// takes out of the line, and the text (ASCII or Cyrillic), so that each
// input costs one judgement.
func FuzzHeadCheck(f *testing.F) {
	for _, s := range []string{"![x](https://evil.example/a.png)", "<img src=x>", "<IMG\tsrc=x>", "url(x)",
		`\75 rl(x)`, "<a href=x>y</a>", "[x](https://evil.example/)", "plain", "\u202e", "\x1b[31m", "\u200b"} {
		f.Add(s, uint32(headMin), uint32(headMin+10), uint32(headMin+301))
		f.Add(s, uint32(headMin+headPiece-3), uint32(headMin+1), uint32(headMin+headPiece))
		for _, cut := range []uint32{3, 5, 7, 9} { // Cyrillic, heads ending inside a letter or not
			f.Add(s, uint32(headMin+2), uint32(headMin+cut-2), uint32(headMin+cut))
		}
	}
	fillers := []string{headFiller(headMin+64<<10, "printable"), headFiller(headMin+64<<10, "cyrillic")}
	if raceEnabled {
		fillers = fillers[:1] // the race detector makes each read of Cyrillic slow
	}
	ps := headPolicies(f)
	f.Fuzz(func(t *testing.T, snippet string, at, cut1, cut2 uint32) {
		if !utf8.ValidString(snippet) || len(snippet) > 256 {
			return
		}
		filler := fillers[int(cut2)%len(fillers)]
		line := headLine(t, filler, snippet, int(at)%len(filler))
		switch at >> 2 % 8 { // whitespace the parse trims or compacts away
		case 1:
			line = slices.Concat([]byte("  "), line)
		case 2:
			line = slices.Concat(line[:1], []byte("\t"), line[1:])
		case 3:
			line = slices.Concat(line, []byte("   "))
		}
		arrivals := []int{int(cut1) % len(line), int(cut2) % len(line)}
		slices.Sort(arrivals)
		judgedAsWhole(t, ps[at>>1%2], line, arrivals, at%2 == 0)
	})
}

// caughtUp waits until the goroutine has read all it can of the last head
// it was given.
func (h *HeadCheck) caughtUp() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.running && h.found.more(h.head) {
		h.changed.Wait()
	}
}

// TestEgressAfterHeadSpaced: a long result whose line has whitespace
// before, between or after its tokens is forwarded trimmed and compacted
// (message.Message.Raw), so the offsets a HeadCheck found in the line as
// read are not offsets of Raw. A hostile server that pads the line and
// pauses where the head ends must not get an image or a bidi override
// past the checks (whitespace shifts them out of what is judged), nor
// crash the proxy (trailing whitespace puts the head beyond Raw).
func TestEgressAfterHeadSpaced(t *testing.T) {
	t.Parallel()
	call := &Call{Method: "tools/call", Tool: "read"}
	const pad = 4 << 10
	n := 0
	for _, kind := range []string{"printable", "cyrillic"} {
		filler := headFiller(headMin+128<<10, kind)
		for _, snippet := range []string{"![x](https://evil.example/a.png)", "<img src=https://evil.example/a>", "a\u202eb"} {
			for _, where := range []string{"leading", "between", "trailing"} {
				// Under -race, 5 of the 18 (every kind, snippet and
				// padding among them); .ci/run's run without it does all.
				if n++; raceEnabled && (n-1)%4 != 0 {
					continue
				}
				line := headLine(t, filler, "", 0)
				edge := headMin + 64<<10 // where the server pauses
				switch where {
				case "leading":
					line = slices.Concat(bytes.Repeat([]byte(" "), pad), line)
				case "between":
					line = slices.Concat(line[:1], bytes.Repeat([]byte("\t"), pad), line[1:])
				case "trailing":
					line = slices.Concat(line, bytes.Repeat([]byte(" "), pad))
					edge = len(line) // the head holds the padding; the newline comes later
				}
				// The snippet just past what the head check reads: its
				// image markers to the edge, its text to a piece's end
				// (the next piece has no cut: the filler's escaped
				// newlines are too close).
				q, _ := jsontext.AppendQuote(nil, snippet)
				at := edge + 8
				if strings.Contains(snippet, "\u202e") {
					at = headPiece + 8
				}
				if where == "trailing" {
					at = edge - pad - 64
				}
				for at < len(line) && !utf8.RuneStart(line[at]) {
					at++
				}
				line = slices.Concat(line[:at], q[1:len(q)-1], line[at:])
				if where == "trailing" {
					edge = len(line)
				}
				var h HeadCheck
				for n := 64 << 10; n < edge; n += 64 << 10 {
					h.Arrived(line[:n])
				}
				h.Arrived(line[:edge])
				h.caughtUp()
				head := h.Done()
				want, wantRw, wantErr := Baseline().NewSession().Egress(mustParse(t, string(line)), call)
				var got []byte
				var gotRw []Rewrite
				var gotErr error
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s %s %q: EgressAfter panicked: %v", kind, where, snippet, r)
						}
					}()
					got, gotRw, gotErr = Baseline().NewSession().EgressAfter(mustParse(t, string(line)), call, head)
				}()
				if !bytes.Equal(got, want) || len(gotRw) != len(wantRw) || gotErr != nil || wantErr != nil || len(wantRw) == 0 {
					t.Errorf("%s %s %q: head %+v: %d bytes, %v, %v; whole: %d bytes, %v, %v", kind, where, snippet, head,
						len(got), gotRw, gotErr, len(want), wantRw, wantErr)
				}
			}
		}
	}
}
