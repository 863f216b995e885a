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
