package secrets

import (
	"strings"
	"testing"

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
