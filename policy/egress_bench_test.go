package policy

import (
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
)

// bigResult is a 16 MiB tools/call result of ordinary multi-line text:
// the JSON has a \n escape every 80 bytes, as real output does. kind
// "clean" is lines of x, "printable" lines of the printable ASCII
// characters shifting from line to line (digits, capitals, punctuation:
// the text the relay benchmark sends), "hostile" the x lines with one
// escape sequence.
func bigResult(b *testing.B, kind string) []byte {
	const printable = ` !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{|}~`
	var sb strings.Builder
	for n := 0; sb.Len() < 16<<20-80; n++ {
		for col := range 79 {
			c := byte('x')
			if kind == "printable" {
				c = printable[(n*7+col)%len(printable)]
			}
			sb.WriteByte(c)
		}
		sb.WriteByte('\n')
	}
	text := sb.String()
	if kind == "hostile" {
		text = text[:len(text)/2] + "\x1b[31m" + text[len(text)/2:]
	}
	q, err := jsontext.AppendQuote(nil, text)
	if err != nil {
		b.Fatal(err)
	}
	return append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`), q...), `}]}}`...)
}

// BenchmarkEgressBigResult: strict parse plus the egress decision for a
// 16 MiB result, clean (forwarded byte-identical) and with one escape
// sequence (re-encoded).
func BenchmarkEgressBigResult(b *testing.B) {
	for _, kind := range []string{"clean", "printable", "hostile"} {
		b.Run(kind, func(b *testing.B) {
			line := bigResult(b, kind)
			s := Baseline().NewSession()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				m, err := message.Parse(line)
				if err != nil {
					b.Fatal(err)
				}
				out, _, err := s.Egress(m, &Call{Method: "tools/call", Tool: "t"})
				if err != nil || (len(out) == len(line)) == (kind == "hostile") {
					b.Fatal("unexpected egress result", err)
				}
			}
		})
	}
}

// cleanText1MiB is 1 MiB of the secrets benign corpus (prose, code, logs,
// lock files, digests, base64 blobs): text with nothing to redact or remove.
func cleanText1MiB(b *testing.B) string {
	data, err := os.ReadFile("../rules/secrets/testdata/benign.txt")
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "# ") {
			lines = append(lines, strings.ReplaceAll(l, `\n`, "\n"))
		}
	}
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		for _, l := range lines {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	return sb.String()[:1<<20]
}

// BenchmarkEgressCleanText: strict parse plus the whole egress path (text,
// secrets with known secrets, images) for a 1 MiB result of clean text,
// forwarded byte-identical.
func BenchmarkEgressCleanText(b *testing.B) {
	q, err := jsontext.AppendQuote(nil, cleanText1MiB(b))
	if err != nil {
		b.Fatal(err)
	}
	line := append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`), q...), `}]}}`...)
	p, err := Baseline().WithEnvironment([]string{"GITHUB_TOKEN=ghp_" + strings.Repeat("Ab1", 12), "DB_PASSWORD=correct horse battery staple"})
	if err != nil {
		b.Fatal(err)
	}
	s := p.NewSession()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		m, err := message.Parse(line)
		if err != nil {
			b.Fatal(err)
		}
		out, rws, err := s.Egress(m, &Call{Method: "tools/call", Tool: "t"})
		if err != nil || len(out) != len(line) || len(rws) != 0 {
			b.Fatal("unexpected egress result", err, rws)
		}
	}
}
