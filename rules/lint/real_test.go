package lint

import (
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// realServer is one server's lists as it sent them (testdata/real.json).
type realServer struct {
	Package           string           `json:"package"`
	Version           string           `json:"version"`
	Instructions      string           `json:"instructions"`
	Tools             []jsontext.Value `json:"tools"`
	Prompts           []jsontext.Value `json:"prompts"`
	Resources         []jsontext.Value `json:"resources"`
	ResourceTemplates []jsontext.Value `json:"resourceTemplates"`
}

func loadReal(t testing.TB) []realServer {
	b, err := os.ReadFile("testdata/real.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Servers []realServer `json:"servers"`
	}
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	return corpus.Servers
}

// TestRealServers holds the live lists of real servers installed from npm
// to no finding: lint: enforce withholds what gets one.
func TestRealServers(t *testing.T) {
	servers := loadReal(t)
	if len(servers) < 10 {
		t.Errorf("%d real servers, want at least 10", len(servers))
	}
	items := 0
	for _, s := range servers {
		for _, list := range [][]jsontext.Value{s.Tools, s.Prompts, s.Resources, s.ResourceTemplates} {
			for _, item := range list {
				items++
				if fs := Item(item); len(fs) > 0 {
					t.Errorf("%s@%s: %s: %v", s.Package, s.Version, keyOf(item, "name"), fs)
				}
			}
		}
		if s.Instructions != "" {
			if fs := Instructions(s.Instructions); len(fs) > 0 {
				t.Errorf("%s@%s: instructions: %v", s.Package, s.Version, fs)
			}
		}
	}
	t.Logf("%d servers, %d items, no findings", len(servers), items)
}
