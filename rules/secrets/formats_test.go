package secrets

import (
	"encoding/base64"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// ownCases are true examples of mcpguard's own formats and of private
// key blocks of every size, each with the rule that must find it.
func ownCases() [][2]string {
	r := rand.New(rand.NewPCG(5, 6))
	secret40 := rnd(r, b64, 40)
	rsa8192 := pemBlock(r, "RSA PRIVATE KEY", 6400)
	lines := strings.Split(rsa8192, "\n")
	gpg := pemBlock(r, "PGP PRIVATE KEY BLOCK", 5100)
	pkcs8 := pemBlock(r, "PRIVATE KEY", 1600)
	return [][2]string{
		{"aws-secret-access-key", "[default]\naws_access_key_id = AKIA" + rnd(r, upper2, 16) + "\naws_secret_access_key = " + secret40 + "\n"},
		{"aws-secret-access-key", "AWS_SECRET_ACCESS_KEY=" + rnd(r, b64, 40)},
		{"aws-session-token", "aws_session_token = " + rnd(r, b64, 300)},
		{"credential-assignment", "DB_PASSWORD=s3cr3t-" + rnd(r, alnum, 12)},
		{"credential-assignment", "export STRIPE_SECRET=" + rnd(r, alnum, 20) + "9"},
		{"credential-assignment", "  password: \"Tr0ub4dor&" + rnd(r, alnum, 6) + "\""},
		{"url-password", "postgres://app:pw@db/prod"},
		{"url-password", "DATABASE_URL=mysql://svc:" + rnd(r, alnum, 16) + "@10.0.0.5:3306/app"},
		{"url-password", "amqp://worker:" + rnd(r, alnum, 12) + "@rabbit.internal:5672/"},
		{"netrc-password", "machine api.github.com\n  login octocat\n  password " + rnd(r, alnum, 20) + "\n"},
		{"pgpass-password", "db.internal:5432:prod:app:" + rnd(r, alnum, 16)},
		{"docker-config-auth", `{"auths":{"registry.example.com":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("robot:"+rnd(r, alnum, 24))) + `"}}}`},
		{"kubeconfig-client-key", "users:\n- name: admin\n  user:\n    client-key-data: " + base64.StdEncoding.EncodeToString([]byte(rnd(r, alnum, 120))) + "\n"},
		{"credential-assignment", "users:\n- name: ci\n  user:\n    token: " + rnd(r, alnum, 30) + "7\n"},
		{"azure-account-key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + base64.StdEncoding.EncodeToString([]byte(rnd(r, alnum, 64))) + ";EndpointSuffix=core.windows.net"},
		{"gcp-private-key-id", `{"type": "service_account", "project_id": "acme", "private_key_id": "` + rnd(r, lowhex, 40) + `"}`},
		{"private-key", `{"type": "service_account", "private_key": "` + strings.ReplaceAll(pkcs8, "\n", `\n`) + `", "client_email": "x@acme.iam.gserviceaccount.com"}`},
		{"authorization-header", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+rnd(r, alnum, 12)))},
		{"authorization-header", "authorization: Bearer " + rnd(r, alnum, 32)},
		{"private-key", pemBlock(r, "RSA PRIVATE KEY", 1600)},
		{"private-key", pemBlock(r, "RSA PRIVATE KEY", 3200)},
		{"private-key", rsa8192},
		{"private-key", gpg},
		{"private-key", pemBlock(r, "EC PRIVATE KEY", 160)},
		{"private-key", pemBlock(r, "ENCRYPTED PRIVATE KEY", 2400)},
		{"private-key", strings.Join(lines[:12], "\n") + "\n"},          // head
		{"private-key-tail", strings.Join(lines[len(lines)-12:], "\n")}, // tail
	}
}

func ownTrue() []string {
	var out []string
	for _, c := range ownCases() {
		out = append(out, c[1])
	}
	return out
}

// ownFalse are ordinary texts near those formats that hold no credential.
var ownFalse = []string{
	"password: changeme",
	"PASSWORD=password",
	"DB_PASSWORD=${DB_PASSWORD}",
	"api_key: <your-api-key>",
	"token = os.environ.get('TOKEN')",
	"password = request.form['password']",
	"self.secret = secret_value",
	"SECRET_KEY_BASE: {{ .Values.secretKeyBase }}",
	"postgres://user:password@localhost:5432/mydb",
	"postgres://postgres:postgres@localhost/test",
	"https://user:${PASSWORD}@example.com/",
	"redis://:<password>@host:6379",
	"git clone https://github.com/mcpguard/mcpguard.git",
	"ssh://git@github.com:22/owner/repo",
	"http://[::1]:8080/path",
	"machine example.com login anonymous password xxxxxxxx",
	"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"aws_secret_access_key = YOUR_SECRET_ACCESS_KEY",
	"Authorization: Bearer <token>",
	"Authorization: Bearer $TOKEN",
	`curl -H "Authorization: Bearer ${GITHUB_TOKEN}" https://api.github.com/user`,
	"the token endpoint returns an access_token field",
	"-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
	"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + strings.Repeat("A", 60) + "\n-----END PUBLIC KEY-----",
	"-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHHIG" + strings.Repeat("Q", 64) + "\n-----END CERTIFICATE-----",
	`"auth": "none"`,
	"AccountKey=<key>",
	"if token_type == 'Bearer' and token:",
	"PASSWORD_MIN_LENGTH=12",
	"Secret: the secret of the recipe is butter",
	`"secret":                               "\u3299\ufe0f",`,
	`SharedSecret: "46fc62106420ff012e54a434fbdd2d25ccc5852060561e68040dd7778997bd7b",`,
	"type netrcLine struct {\n\tmachine  string\n\tlogin    string\n\tpassword string\n}",
	"Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
	"		Secret: Bug4Secret{1},",
	"	password = base64.StdEncoding.EncodeToString(pwd[:]) + \"_-As@!%*\"",
	"        private_key: ed25519.Ed25519PrivateKey, f_priv: _FragList",
	"		// 	groupname:password:GID:user_list",
	`            "access_token":"2YotnFZFEjr1zCsicMWpAA",`,
}

func TestOwnFormats(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ownCases() {
		fs := sc.Find(c[1])
		found := false
		for _, f := range fs {
			found = found || f.Rule == c[0]
		}
		if !found {
			t.Errorf("%s: not found in %q: %v", c[0], trunc(c[1]), fs)
		}
		red, _ := sc.Redact(c[1])
		if sc.Check(red) != nil {
			t.Errorf("%s: the redaction still holds a credential: %q", c[0], trunc(red))
		}
	}
	for _, s := range ownFalse {
		if fs := sc.Find(s); len(fs) > 0 {
			t.Errorf("false finding in %q: %v", s, fs)
		}
	}
}

// TestPrivateKeySizes: the whole body of a key of any size is redacted,
// not just its first 4 KiB.
func TestPrivateKeySizes(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1600, 3200, 6400, 12800, 1 << 16} {
		key := pemBlock(r, "RSA PRIVATE KEY", n)
		text := "cat id_rsa\n" + key + "$ "
		red, fs := sc.Redact(text)
		if red != "cat id_rsa\n[REDACTED:private-key]\n$ " {
			t.Errorf("%d bytes: %q (%v)", n, trunc(red), fs)
		}
	}
}

// TestNotABlobCostsNoDecoding: a long string that leaves the base64
// alphabet early is not decoded four times over (each decoding allocated
// three quarters of the string before it failed): Redact of a 4 MiB
// markdown flood allocates less than the string's own size.
func TestNotABlobCostsNoDecoding(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	flood := strings.Repeat("![x][", 4<<20/5)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if red, _ := sc.Redact(flood); red != flood {
		t.Fatal("the flood changed")
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(flood)) {
		t.Errorf("Redact allocated %d KiB for a %d KiB string", got>>10, len(flood)>>10)
	}
	for s, want := range map[string]bool{"QUJD": true, "QUJD-_": true, "QUJD+/==": true, "QU=JD": false, "QUJD+-": false, "QUJD\n": false, "": true} {
		if maybeBase64(s) != want {
			t.Errorf("maybeBase64(%q) = %v", s, !want)
		}
	}
}

// TestBlobStaysBlob: a blob whose decoded bytes hold a credential comes
// back as a blob of the same encoding, the credential redacted inside.
func TestBlobStaysBlob(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	file := "[default]\naws_access_key_id = AKIAZ7XQ3RNB4WJ6KEYS\naws_secret_access_key = " + strings.Repeat("Zk3/", 10) + "\n"
	for _, enc := range blobEncodings {
		blob := enc.EncodeToString([]byte(file))
		red, fs := sc.Redact(blob)
		if len(fs) == 0 {
			t.Fatalf("%v: nothing found", enc)
		}
		d, err := enc.DecodeString(red)
		if err != nil {
			t.Fatalf("the redacted blob is not base64 of the same kind: %v", err)
		}
		if strings.Contains(string(d), "Zk3/") || strings.Contains(string(d), "AKIAZ7XQ3RNB4WJ6KEYS") || !strings.Contains(string(d), "[REDACTED:") {
			t.Errorf("decoded redacted blob: %q", d)
		}
		if again, _ := sc.Redact(red); again != red {
			t.Errorf("redacting a redacted blob changes it")
		}
	}
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\x01\xfe", 100)))
	if red, _ := sc.Redact(png); red != png {
		t.Errorf("a clean blob changed")
	}
}

// TestStrongWord holds the SWAR test to its byte-wise meaning.
func TestStrongWord(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 200000; i++ {
		var b [8]byte
		for k := range b {
			b[k] = byte(r.IntN(256))
			if i < 256 {
				b[k] = byte(i) // every byte value, alone
			}
		}
		x := uint64(0)
		want := uint64(0)
		for k := 7; k >= 0; k-- {
			x = x<<8 | uint64(b[k])
			if b[k] >= '0' && b[k] <= 'Z' {
				want |= 0x80 << (8 * k)
			}
		}
		if got := strongWord(x); got != want {
			t.Fatalf("strongWord(% x) = %x, want %x", b, got, want)
		}
	}
}

// TestKeyPartsRaw: the part of a key `tail` returns, ending in a short
// last line, is found in the raw JSON too (a \n escape before a line is
// not part of it).
func TestKeyPartsRaw(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	lines := strings.Split(pemBlock(r, "RSA PRIVATE KEY", 6300), "\n")
	for _, part := range []string{
		strings.Join(lines[len(lines)-4:], "\n"), // two body lines, the short last one, END
		strings.Join(lines[:3], "\n"),            // BEGIN and two body lines
		"-----BEGIN+RSA+PRIVATE+KEY-----%0A" + strings.Join(lines[1:4], "%0A"),
	} {
		q, _ := jsontext.AppendQuote(nil, part)
		if sc.RawClean(q) || sc.Check(part) == nil {
			t.Errorf("not found: %q", part)
		}
	}
}
