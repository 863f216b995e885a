package rules

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkChecks runs a typical 40-byte argument through each check.
func BenchmarkChecks(b *testing.B) {
	const arg = "tests/unit/test_models.py::TestUser_ok12" // 40 bytes
	if len(arg) != 40 {
		b.Fatalf("arg is %d bytes", len(arg))
	}
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "tests/unit"), 0o755); err != nil {
		b.Fatal(err)
	}
	flags := newTestFlags(b)
	pattern, _ := NewPattern(`^[A-Za-z0-9_./:-]+$`, "", "")
	deny, _ := NewDenyPattern("[`;&\\n\\r]|\\$\\(", "", "")
	paths, err := NewPathScope([]string{root})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		check Check
		value string
	}{
		{"dangerous_flags", flags, arg},
		{"dangerous_flags/flag", flags, "--maxfail=2 --durations=10 -x --tb=short"},
		{"dangerous_flags/kebab", flags, "--no-header --cov-report=term-missing --Max-Fail=2 -rfEp"},
		{"dangerous_flags/unicode", flags, "tests/ünit/test_mödels.py::TestÜser_ok"},
		{"shell_metachars", NewShellMetachars(), arg},
		{"control_chars", NewControlChars(), arg},
		{"pattern", pattern, arg},
		{"deny_pattern", deny, arg},
		{"duration", NewDuration(0, false), "1h30m"},
		{"path_scope", paths, arg},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.value)))
			b.ReportAllocs()
			for b.Loop() {
				if f := bc.check.Check(bc.value); f != nil {
					b.Fatal(f)
				}
			}
		})
	}
}
