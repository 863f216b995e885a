package pins

import "testing"

// BenchmarkCheck is what a tools/call pays for pins: a tool listed and
// pinned (a hit), one never listed without a lock (a miss), and one the
// lock does not pin.
func BenchmarkCheck(b *testing.B) {
	s := NewSession(Options{})
	judge(s, Tool, echoV1, sumV1)
	l := NewLock()
	l.Items[Tool]["echo"] = Definition{Fields: map[string]string{"name": `"echo"`}}
	locked := NewSession(Options{Lock: l})
	for _, c := range []struct {
		name string
		s    *Session
		tool string
		want bool
	}{{"listed", s, "echo", false}, {"unlisted", s, "run_tests", false}, {"unpinned", locked, "run_tests", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if (c.s.Check(Tool, c.tool) != nil) != c.want {
					b.Fatal("wrong verdict")
				}
			}
		})
	}
}
