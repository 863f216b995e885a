package lint

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// BenchmarkListed100 lints a tools/list result of 100 real tools (the
// first 100 of testdata/real.json, in server order), as the relay does
// on first sight of a server.
func BenchmarkListed100(b *testing.B) {
	var tools []jsontext.Value
	for _, s := range loadReal(b) {
		tools = append(tools, s.Tools...)
	}
	tools = tools[:100]
	result, err := json.Marshal(map[string]any{"tools": tools})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(result)))
	b.ResetTimer()
	for b.Loop() {
		if rs := Listed(result, "tools", "name"); len(rs) != 0 {
			b.Fatalf("findings on real tools: %v", rs)
		}
	}
}
