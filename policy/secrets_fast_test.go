package policy

import (
	"testing"

	"github.com/go-json-experiment/json"
)

// FuzzSecretsRawClean holds the ingress fast path to the check it skips:
// when the secrets rule's raw scan says a call's arguments hold nothing,
// the rule run over every string of the argument tree (member names
// included) must refuse nothing. Seeded with credentials of several rule
// families and a known secret in the encodings the scanner decodes.
func FuzzSecretsRawClean(f *testing.F) {
	p, err := Baseline().WithEnvironment([]string{"GITHUB_TOKEN=s3cr3t-v4lue-for-the-fuzzer"})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"AKIALH4VPM77L6S5QMQH",
		"here it is: AKIALH4VPM77L6S5QMQH thanks",
		"ghp_UhrwyL398zPKPMvXkgMzr53w1fNtTQAVZOxu",
		"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
		"s3cr3t-v4lue-for-the-fuzzer",
		"czNjcjN0LXY0bHVlLWZvci10aGUtZnV6emVy",
		"73336372337",
		"s3cr3t%2Dv4lue%2Dfor%2Dthe%2Dfuzzer",
		"plain words, nothing secret",
	} {
		f.Add(s, "body")
		f.Add("note", s)
	}
	f.Fuzz(func(t *testing.T, value, name string) {
		args, err := json.Marshal(map[string]any{name: value, "list": []string{value}})
		if err != nil {
			return // not valid UTF-8
		}
		r := p.secretsIngressRule("t")
		if r == nil || r.rawClean == nil {
			t.Fatal("the baseline has no secrets rule with a raw fast path")
		}
		if !r.rawClean(args) {
			return
		}
		w := walkers.Get().(*walker)
		defer w.release()
		if rej := w.parseArgs(args, "t"); rej != nil {
			return
		}
		if rej := w.checkArgs([]*ingressRule{r}, "t", false); rej != nil {
			t.Fatalf("the raw scan passed %s, but the secrets rule refuses it: %s", args, rej.Error)
		}
	})
}
