package canon

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden runs Text over bigger hostile samples (testdata/*.in) and
// compares with testdata/*.golden. Rewrite with: go test -update, in this package.
func TestGolden(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/*.in")
	if len(inputs) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		got := Text(string(data))
		golden := strings.TrimSuffix(in, ".in") + ".golden"
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s:\n got %q\nwant %q", in, got, want)
		}
		if _, bad := forbidden(got); bad || got == string(data) {
			t.Errorf("%s: output still hostile or unchanged", in)
		}
		if Text(got) != got || NeedsText(want) {
			t.Errorf("%s: the golden output is not a fixed point of Text", in)
		}
		checkText(t, string(data))
		checkFreeText(t, string(data), 0)
		checkPath(t, string(data))
	}
}
