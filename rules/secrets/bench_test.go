package secrets

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// cleanText is 1 MiB of the benign corpus (prose, code, logs, lock files,
// digests, base64 blobs), repeated.
func cleanText(b testing.TB) string {
	var sb strings.Builder
	corpus := benignCorpus(b)
	for sb.Len() < 1<<20 {
		for _, s := range corpus {
			sb.WriteString(s)
			sb.WriteByte('\n')
		}
	}
	return sb.String()[:1<<20]
}

func benchScanner(b testing.TB) *Scanner {
	sc, err := New(Options{Known: []Known{{Source: "GITHUB_TOKEN", Value: "ghp_" + strings.Repeat("Ab1", 12)}, {Source: "DB_PASSWORD", Value: "correct horse battery staple"}}})
	if err != nil {
		b.Fatal(err)
	}
	return sc
}

func BenchmarkFindClean(b *testing.B) {
	text := cleanText(b)
	sc := benchScanner(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if fs := sc.Find(text); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}

func BenchmarkRawCleanJSON(b *testing.B) {
	q, _ := jsontext.AppendQuote(nil, cleanText(b))
	sc := benchScanner(b)
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		if !sc.RawClean(q) {
			b.Fatal("not clean")
		}
	}
}

func BenchmarkCheckSmall(b *testing.B) {
	sc := benchScanner(b)
	for b.Loop() {
		if sc.Check("/home/user/src/project/main.go") != nil {
			b.Fatal("refused")
		}
	}
}

// BenchmarkRawCleanBig: the raw check of a 16 MiB result of ordinary
// multi-line text (a \n escape every 80 bytes), nothing to find.
func BenchmarkRawCleanBig(b *testing.B) {
	q, _ := jsontext.AppendQuote(nil, strings.Repeat(strings.Repeat("x", 79)+"\n", (16<<20)/80))
	sc := benchScanner(b)
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		if !sc.RawClean(q) {
			b.Fatal("not clean")
		}
	}
}

// BenchmarkRawCleanPrintable: the raw check of 1 MiB of lines of the
// printable ASCII characters shifting from line to line (policy's
// BenchmarkEgressBigResult printable, a sixteenth).
func BenchmarkRawCleanPrintable(b *testing.B) {
	const printable = ` !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{|}~`
	var sb strings.Builder
	for n := 0; sb.Len() < 1<<20-80; n++ {
		for col := range 79 {
			sb.WriteByte(printable[(n*7+col)%len(printable)])
		}
		sb.WriteByte('\n')
	}
	q, _ := jsontext.AppendQuote(nil, sb.String())
	sc := benchScanner(b)
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		if !sc.RawClean(q) {
			b.Fatal("not clean")
		}
	}
}

// shortMessages are raw JSON texts of the size most calls carry: the
// bench's echo arguments and reply (a ten-digit id and 235 bytes of
// flags, paths, prose and every printable ASCII character), JSON-RPC
// envelopes, a file path, prose and code.
var shortMessages = func() []struct{ name, raw string } {
	const echo = `0000000001 --format=json --run=TestRelay/pipelined ./proxy/... ./message/... path/to/some/file.go:123:45 (the quick brown fox jumps over the lazy dog) 0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ !#$%&'()*+,-./:;<=>?@[]^_{|}~ `
	return []struct{ name, raw string }{
		{"echo-arguments", `{"text":"` + echo + `"}`},
		{"echo-reply", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + echo + `"}]}}`},
		{"envelope", `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`},
		{"initialize", `{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"secure-filesystem-server","version":"0.2.0"}}}`},
		{"path", `{"path":"/home/user/src/project/internal/server/handler_test.go"}`},
		{"prose", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"The relay reads one line from the agent, judges it against the policy and writes it to the server; the reply comes back the same way, cleaned of what the server must not show."}]}}`},
		{"code", `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"func (c *Client) Token(ctx context.Context) (string, error) {\n\tif c.src == nil {\n\t\treturn \"\", errNoSource\n\t}\n\treturn c.src.Token()\n}\n"}]}}`},
	}
}()

// BenchmarkRawCleanShort: the raw check of each of shortMessages.
func BenchmarkRawCleanShort(b *testing.B) {
	sc := benchScanner(b)
	for _, m := range shortMessages {
		b.Run(m.name, func(b *testing.B) {
			raw := []byte(m.raw)
			for b.Loop() {
				if !sc.RawClean(raw) {
					b.Fatalf("not clean: %s", raw)
				}
			}
		})
	}
}

// BenchmarkRawCleanShortCold: the raw check of the bench's echo reply
// with the caches emptied before each call (64 MiB written between
// calls), as when the relay wakes for one message:
// its cost follows the cache lines the check reads more than its
// instructions. It reports the median call (ns/op counts the sweep; a
// loaded machine preempts some calls).
func BenchmarkRawCleanShortCold(b *testing.B) {
	sc := benchScanner(b)
	raw := []byte(shortMessages[1].raw)
	evict := make([]byte, 64<<20)
	var calls []time.Duration
	for i := 0; i < b.N; i++ {
		for j := 0; j < len(evict); j += 64 {
			evict[j]++
		}
		start := time.Now()
		clean := sc.RawClean(raw)
		calls = append(calls, time.Since(start))
		if !clean {
			b.Fatalf("not clean: %s", raw)
		}
	}
	slices.Sort(calls)
	b.ReportMetric(float64(calls[len(calls)/2].Nanoseconds()), "median-ns/op")
}
