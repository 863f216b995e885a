package message

import (
	"strings"
	"testing"
)

// BenchmarkParseToolCall is the per-message cost on the hot path: a
// tools/call with 256 bytes of arguments, and its reply.
func BenchmarkParseToolCall(b *testing.B) {
	req := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("a", 256) + `"}}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"` + strings.Repeat("a", 256) + `"}]}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(req) + len(resp)))
	for b.Loop() {
		if _, err := Parse(req); err != nil {
			b.Fatal(err)
		}
		if _, err := Parse(resp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateToolCall(b *testing.B) {
	req := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("a", 256) + `"}}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"` + strings.Repeat("a", 256) + `"}]}}`)
	b.SetBytes(int64(len(req) + len(resp)))
	for b.Loop() {
		validate(req).release()
		validate(resp).release()
	}
}

// BenchmarkValidateLongText is the string scan on a tool result of 64 KiB
// of source-like text: lines of 60 bytes with escaped quotes and newline.
func BenchmarkValidateLongText(b *testing.B) {
	benchValidateText(b, strings.Repeat(`    if err := check(ctx, \"value\"); err != nil {return err}\n`, 1100))
}

// BenchmarkValidateWideLines is the scan on 64 KiB of 80-column text:
// 79 plain bytes and an escaped newline, the bench's large results.
func BenchmarkValidateWideLines(b *testing.B) {
	benchValidateText(b, strings.Repeat(strings.Repeat("x", 79)+`\n`, 820))
}

// BenchmarkValidateJSONText is the scan on 64 KiB of JSON written as
// text, the densest escaping common in tool results.
func BenchmarkValidateJSONText(b *testing.B) {
	benchValidateText(b, strings.Repeat(`{\"name\": \"mcpguard\", \"size\": 1234, \"tags\": [\"a\", \"b\"]}\n`, 1000))
}

// BenchmarkValidatePlainText is the scan on 64 KiB of text with no byte
// to stop at (base64, one long line), where vectorScan takes over.
func BenchmarkValidatePlainText(b *testing.B) {
	benchValidateText(b, strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIz", 1640))
}

// BenchmarkValidateHostileText is the scan's worst case: a non-ASCII
// letter after every 136 plain bytes, so that each run of plain text is
// long enough to try the vector path, which finds the letter and gives
// way to the 8-byte scan.
func BenchmarkValidateHostileText(b *testing.B) {
	benchValidateText(b, strings.Repeat(strings.Repeat("a", 136)+"é", 480))
}

func benchValidateText(b *testing.B, text string) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		v := validate(line)
		if !v.res.ok {
			b.Fatal("refused")
		}
		v.release()
	}
}
