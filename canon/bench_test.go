package canon

import (
	"strings"
	"testing"
)

// sourceText is 1 MiB of ordinary program output: code, log lines, tabs.
var sourceText = func() string {
	chunk := "func main() {\n\tfmt.Println(\"hello, world\") // `backticks` stay\n}\n" +
		"2026-11-22T18:00:00Z INFO server started on :8080 (pid 4242)\n" +
		"PASS: TestRelay (0.01s)\tok  \tgithub.com/x/y\t0.123s\n"
	return strings.Repeat(chunk, (1<<20)/len(chunk)+1)[:1<<20]
}()

var cjkText = strings.Repeat("日本語のテキスト。Ünïcödé — emoji 👨‍👩‍👧\n", (1<<20)/64)

var hostileText = strings.Repeat("ok \x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 \u202eevil\U000E0041\n", (1<<20)/64)

func benchText(b *testing.B, s string) {
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Text(s)
	}
}

func BenchmarkTextClean(b *testing.B)   { benchText(b, sourceText) }
func BenchmarkTextCJK(b *testing.B)     { benchText(b, cjkText) }
func BenchmarkTextHostile(b *testing.B) { benchText(b, hostileText) }

func BenchmarkNeedsText(b *testing.B) {
	src := []byte(sourceText)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if NeedsText(src) {
			b.Fatal("clean text needs text")
		}
	}
}

func BenchmarkFreeText(b *testing.B) {
	s := sourceText[:4096]
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		FreeText(s, 4096)
	}
}

func BenchmarkPath(b *testing.B) {
	s := "/home/user/src/github.com/project/internal/pkg/file_name.go"
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Path(s)
	}
}
