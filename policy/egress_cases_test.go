package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// egressFile is one file of egress cases under testdata/egress: a policy
// and exchanges, each a fresh session that relays the steps in order.
type egressFile struct {
	Note   string       `yaml:"note"`
	Policy string       `yaml:"policy"`
	Cases  []egressCase `yaml:"cases"`
}

type egressCase struct {
	Note  string       `yaml:"note"`
	Steps []egressStep `yaml:"steps"`
}

// egressStep is a request from the agent (optional: absent for a
// server→client request or notification) and the server's message. want
// is the exact line the agent gets, "same" for the server's line
// unchanged, or "refused" for an error (the relay drops the message and
// answers the request in flight). absent lists strings that must not be
// in the line the agent gets.
type egressStep struct {
	Agent  string   `yaml:"agent"`
	Server string   `yaml:"server"`
	Want   string   `yaml:"want"`
	Absent []string `yaml:"absent"`
}

func TestEgressCases(t *testing.T) {
	files, err := filepath.Glob("testdata/egress/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no egress case files: %v", err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var ef egressFile
		if err := yaml.UnmarshalWithOptions(data, &ef, yaml.Strict()); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			p := mustLoad(t, ef.Policy)
			for i, c := range ef.Cases {
				s := p.NewSession()
				for j, st := range c.Steps {
					var call *Call
					if st.Agent != "" {
						m := mustParse(t, st.Agent)
						if v := s.Ingress(m); v.Rejection != nil {
							t.Fatalf("case %d %q step %d: the request is rejected: %s", i, c.Note, j, v.Rejection.Error)
						}
						cl := s.CallOf(m)
						call = &cl
					}
					out, _, err := s.Egress(mustParse(t, st.Server), call)
					got := string(out)
					if err != nil {
						got = "refused"
					}
					want := st.Want
					if want == "same" {
						want = st.Server
					}
					if want != "" && got != want {
						t.Errorf("case %d %q step %d:\n got %s (%v)\nwant %s", i, c.Note, j, got, err, want)
					}
					for _, a := range st.Absent {
						if strings.Contains(got, a) {
							t.Errorf("case %d %q step %d: %q reaches the agent: %s", i, c.Note, j, a, got)
						}
					}
				}
			}
		})
	}
}
