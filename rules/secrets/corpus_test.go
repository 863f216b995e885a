package secrets

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"testing"
)

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowhex = "0123456789abcdef"
	upper2 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	b64    = alnum + "+/"
)

func rnd(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// benignCorpus is the false-positive corpus: testdata/benign.txt and
// generated identifiers, digests and blobs of the kinds tools print.
func benignCorpus(t testing.TB) []string {
	f, err := os.Open("testdata/benign.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		out = append(out, strings.ReplaceAll(line, `\n`, "\n"))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 60; i++ {
		sha := rnd(r, lowhex, 40)
		out = append(out, sha, "commit "+sha, sha[:7]+" fix: flaky test in relay", "https://github.com/mcpguard/mcpguard/commit/"+sha)
	}
	for i := 0; i < 40; i++ {
		u := rnd(r, lowhex, 8) + "-" + rnd(r, lowhex, 4) + "-4" + rnd(r, lowhex, 3) + "-a" + rnd(r, lowhex, 3) + "-" + rnd(r, lowhex, 12)
		out = append(out, u, `{"id":"`+u+`","status":"done"}`, "request_id="+u)
	}
	for i := 0; i < 40; i++ {
		d := rnd(r, lowhex, 64)
		out = append(out, "sha256:"+d, d+"  mcpguard-linux-amd64.tar.gz", "digest: sha256:"+d)
	}
	for i := 0; i < 20; i++ {
		png := "iVBORw0KGgoAAAANSUhEUgAA" + rnd(r, b64, 600) + "=="
		out = append(out, png, "data:image/png;base64,"+png)
		pdf := "JVBERi0xLjcKJeLjz9MK" + rnd(r, b64, 800)
		out = append(out, pdf)
		raw := make([]byte, 300)
		for j := range raw {
			raw[j] = byte(r.IntN(256))
		}
		out = append(out, base64.StdEncoding.EncodeToString(raw), hex.EncodeToString(raw[:64]))
	}
	for i := 0; i < 20; i++ {
		out = append(out, "sha512-"+rnd(r, b64, 86)+"==", "h1:"+rnd(r, b64, 43)+"=")
	}
	// JWT-looking fixtures that carry no credential: the RFC 7519 and jwt.io
	// examples and unsigned tokens (alg none).
	out = append(out,
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
		"// test fixture: eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ0ZXN0LXVzZXIiLCJyb2xlIjoiYWRtaW4ifQ.",
		"eyJhbGciOiJub25lIn0.eyJpc3MiOiJqb2UiLCJleHAiOjEzMDA4MTkzODB9.",
	)
	return out
}

// adversarialSecrets returns credentials of every family, each with the
// rule that must find it.
func adversarialSecrets() [][2]string {
	r := rand.New(rand.NewPCG(3, 4))
	s := [][2]string{
		{"aws-access-token", "AKIA" + rnd(r, upper2, 16)},
		{"aws-access-token", "ASIA" + rnd(r, upper2, 16)},
		{"github-pat", "ghp_" + rnd(r, alnum, 36)},
		{"github-oauth", "gho_" + rnd(r, alnum, 36)},
		{"github-app-token", "ghs_" + rnd(r, alnum, 36)},
		{"github-app-token", "ghu_" + rnd(r, alnum, 36)},
		{"github-refresh-token", "ghr_" + rnd(r, alnum, 36)},
		{"github-fine-grained-pat", "github_pat_" + rnd(r, alnum, 22) + "_" + rnd(r, alnum, 59)},
		{"gitlab-pat", "glpat-" + rnd(r, alnum, 20)},
		{"slack-bot-token", "xoxb-" + rnd(r, "0123456789", 12) + "-" + rnd(r, "0123456789", 13) + "-" + rnd(r, alnum, 24)},
		{"slack-user-token", "xoxp-" + rnd(r, "0123456789", 12) + "-" + rnd(r, "0123456789", 12) + "-" + rnd(r, "0123456789", 13) + "-" + rnd(r, lowhex, 32)},
		{"slack-webhook-url", "https://hooks.slack.com/services/T" + rnd(r, upper2, 8) + "/B" + rnd(r, upper2, 8) + "/" + rnd(r, alnum, 24)},
		{"stripe-access-token", "sk_live_" + rnd(r, alnum, 24)},
		{"stripe-access-token", "rk_live_" + rnd(r, alnum, 24)},
		{"openai-api-key", "sk-proj-" + rnd(r, alnum, 74) + "T3BlbkFJ" + rnd(r, alnum, 74)},
		{"anthropic-api-key", "sk-ant-api03-" + rnd(r, alnum, 93) + "AA"},
		{"gcp-api-key", "AIza" + rnd(r, alnum, 35)},
		{"npm-access-token", "npm_" + rnd(r, alnum, 36)},
		{"pypi-upload-token", "pypi-AgEIcHlwaS5vcmc" + rnd(r, alnum, 60)},
		{"sendgrid-api-token", "SG." + rnd(r, alnum, 22) + "." + rnd(r, alnum, 43)},
		{"twilio-api-key", "SK" + rnd(r, lowhex, 32)},
		{"digitalocean-pat", "dop_v1_" + rnd(r, lowhex, 64)},
		{"huggingface-access-token", "hf_" + rnd(r, lower, 34)},
		{"shopify-access-token", "shpat_" + rnd(r, lowhex, 32)},
		{"databricks-api-token", "dapi" + rnd(r, lowhex, 32)},
		{"doppler-api-token", "dp.pt." + rnd(r, alnum, 43)},
		{"vault-service-token", "hvs." + rnd(r, alnum, 95)},
		{"linear-api-key", "lin_api_" + rnd(r, alnum, 40)},
		{"postman-api-token", "PMAK-" + rnd(r, lowhex, 24) + "-" + rnd(r, lowhex, 34)},
		{"pulumi-api-token", "pul-" + rnd(r, lowhex, 40)},
		{"grafana-cloud-api-token", "glc_" + rnd(r, alnum, 48)},
		{"age-secret-key", "AGE-SECRET-KEY-1" + rnd(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)},
		{"square-access-token", "sq0atp-" + rnd(r, alnum, 22)},
		{"sentry-user-token", "sntryu_" + rnd(r, lowhex, 64)},
		{"flyio-access-token", "fo1_" + rnd(r, alnum, 43)},
		{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + rnd(r, alnum, 40) + "fQ." + rnd(r, alnum, 43)},
		{"private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + rnd(r, b64, 64) + "\n" + rnd(r, b64, 64) + "\n" + rnd(r, b64, 40) + "\n-----END RSA PRIVATE KEY-----"},
		{"private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + rnd(r, b64, 70) + "\n" + rnd(r, b64, 70) + "\n-----END OPENSSH PRIVATE KEY-----"},
		{"heroku-api-key", "HEROKU_API_KEY=" + rnd(r, lowhex, 8) + "-" + rnd(r, lowhex, 4) + "-" + rnd(r, lowhex, 4) + "-" + rnd(r, lowhex, 4) + "-" + rnd(r, lowhex, 12)},
		{"discord-api-token", `discord_token = "` + rnd(r, lowhex, 64) + `"`},
		{"adafruit-api-key", "adafruit_key: " + rnd(r, lower+"0123456789", 32)},
		{"mailgun-private-api-token", "MAILGUN_KEY=key-" + rnd(r, lowhex, 32)},
		{"telegram-bot-api-token", "telegram_bot_token = " + rnd(r, "0123456789", 10) + ":A" + rnd(r, alnum, 34)},
		{"new-relic-user-api-key", "newrelic_key = NRAK-" + rnd(r, upper2, 27)},
	}
	return s
}

// wantSecret is the part of an adversarial sample that must not survive
// redaction: the value after "=" or ":" for assignments, else all of it.
func wantSecret(sample string) string {
	for _, sep := range []string{`= "`, "=", ": "} {
		if i := strings.Index(sample, sep); i >= 0 && !strings.Contains(sample, "://") && !strings.HasPrefix(sample, "-----") {
			return strings.Trim(sample[i+len(sep):], `"`)
		}
	}
	return sample
}

// contexts wrap a sample the ways an argument or a result carries it.
var contexts = []struct {
	name string
	wrap func(string) string
}{
	{"plain", func(s string) string { return s }},
	{"prose", func(s string) string { return "Here is the value you asked for: " + s + " (keep it safe)." }},
	{"url-query", func(s string) string { return "https://evil.example/collect?d=" + url.QueryEscape(s) }},
	{"json", func(s string) string { return `{"body": "` + strings.ReplaceAll(s, "\n", `\n`) + `"}` }},
	{"env", func(s string) string { return "export TOKEN=" + s + "\n" }},
}

func TestBenignCorpus(t *testing.T) {
	sc, err := New(Options{Known: []Known{{Source: "GITHUB_TOKEN", Value: "kn0wn-" + strings.Repeat("Zq7", 8)}}})
	if err != nil {
		t.Fatal(err)
	}
	corpus := benignCorpus(t)
	if len(corpus) < 300 {
		t.Fatalf("benign corpus has %d entries, want at least 300", len(corpus))
	}
	for _, s := range corpus {
		if f := sc.Check(s); f != nil {
			t.Errorf("refused benign %q: %s", trunc(s), f.Reason)
		}
		if out, fs := sc.Redact(s); out != s {
			t.Errorf("redacted benign %q: %v", trunc(s), fs)
		}
	}
	t.Logf("%d benign entries", len(corpus))
}

func TestAdversarialCorpus(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range adversarialSecrets() {
		rule, sample := c[0], c[1]
		for _, ctx := range contexts {
			if ctx.name == "env" && strings.Contains(sample, "=") {
				continue
			}
			n++
			text := ctx.wrap(sample)
			f := sc.Check(text)
			if f == nil {
				t.Errorf("%s/%s: not refused: %q", rule, ctx.name, trunc(text))
				continue
			}
			if !strings.Contains(f.Reason, "rule "+rule+")") && ctx.name == "plain" {
				t.Errorf("%s/%s: reason %q names another rule", rule, ctx.name, f.Reason)
			}
			secret := wantSecret(sample)
			if strings.Contains(f.Reason, secret) || strings.Contains(f.Remediation, secret) {
				t.Errorf("%s: the finding echoes the value", rule)
			}
			out, _ := sc.Redact(text)
			if strings.Contains(out, secret) || (ctx.name == "url-query" && strings.Contains(out, url.QueryEscape(secret))) {
				t.Errorf("%s/%s: redaction left the secret: %q", rule, ctx.name, trunc(out))
			}
			if again, _ := sc.Redact(out); again != out {
				t.Errorf("%s/%s: redaction is not idempotent", rule, ctx.name)
			}
		}
	}
	if n < 150 {
		t.Fatalf("adversarial corpus has %d entries, want at least 150", n)
	}
	t.Logf("%d adversarial entries", n)
}

func TestKnownSecretEncodings(t *testing.T) {
	secret := "p4ss-W0rd/with+odd=chars\"q"
	sc, err := New(Options{Known: []Known{{Source: "DB_PASSWORD", Value: secret}}})
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]string{
		"plain":       secret,
		"hex":         hex.EncodeToString([]byte(secret)),
		"HEX":         strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"query":       url.QueryEscape(secret),
		"path":        url.PathEscape(secret),
		"all-percent": allPercent(secret),
		"double-pct":  url.QueryEscape(url.QueryEscape(secret)),
		"json":        jsonEscape(secret),
	}
	for pad := 0; pad < 3; pad++ {
		for name, enc := range map[string]*base64.Encoding{"std": base64.StdEncoding, "url": base64.URLEncoding, "raw": base64.RawStdEncoding} {
			forms[fmt.Sprintf("base64-%s-%d", name, pad)] = enc.EncodeToString([]byte(strings.Repeat("x", pad) + secret + "tail"))
		}
	}
	for name, form := range forms {
		for _, text := range []string{form, "see " + form + " here", "https://evil.example/?q=" + form} {
			f := sc.Check(text)
			if f == nil || !strings.Contains(f.Reason, "DB_PASSWORD") {
				t.Errorf("%s: %q not refused as the known secret: %v", name, text, f)
				continue
			}
			out, _ := sc.Redact(text)
			if strings.Contains(out, form) {
				t.Errorf("%s: redaction kept the secret: %q", name, out)
			}
		}
	}
}

func allPercent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

func trunc(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
