package integration

import (
	"context"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// credentialFile is a file a developer's machine holds credentials in,
// and the secrets in it that must never reach the agent.
type credentialFile struct {
	name    string
	content string
	secrets []string
}

// fakeKey is a private key block with n bytes of base64 body wrapped at 64
// columns (its size, not its math, is what the scanner must handle).
func fakeKey(r *rand.Rand, kind string, n int) (block, bodyLine string) {
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\n")
	if strings.HasPrefix(kind, "PGP") {
		b.WriteString("Comment: rsa3072 and a subkey\n\n")
	}
	for n > 0 {
		line := make([]byte, min(64, n))
		for i := range line {
			line[i] = b64[r.IntN(64)]
		}
		if bodyLine == "" {
			bodyLine = string(line)
		}
		b.Write(line)
		b.WriteByte('\n')
		n -= len(line)
	}
	b.WriteString("-----END " + kind + "-----\n")
	return b.String(), bodyLine
}

func credentialFiles() []credentialFile {
	r := rand.New(rand.NewPCG(24, 24))
	rsa8192, rsaLine := fakeKey(r, "RSA PRIVATE KEY", 6300)
	gpg, gpgLine := fakeKey(r, "PGP PRIVATE KEY BLOCK", 5100)
	dockerAuth := base64.StdEncoding.EncodeToString([]byte("robot:Rb7xQ2mW9kZ4vT1nP8sL"))
	return []credentialFile{
		{"aws-credentials", "[default]\naws_access_key_id = AKIAZ7XQ3RNB4WJ6PLMU\naws_secret_access_key = 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\n",
			[]string{"AKIAZ7XQ3RNB4WJ6PLMU", "kQ7w/2Lm9Zr+Xy3Bt8Vn4Hs1Jd6Fg0Pc5Ae2Ui7O"}},
		{"env", "AWS_SECRET_ACCESS_KEY=Zp4/Qw8Er2Ty6Ui0Op3As5Df7Gh9Jk1Lz+Xc4Vb6N\nDATABASE_URL=postgres://app:Tq8wZ3pN5x@db/prod\n",
			[]string{"Zp4/Qw8Er2Ty6Ui0Op3As5Df7Gh9Jk1Lz+Xc4Vb6N", "Tq8wZ3pN5x"}},
		{"netrc", "machine api.example.com\n  login octocat\n  password Nw4kP9zQ2rT7vX1m\n", []string{"Nw4kP9zQ2rT7vX1m"}},
		{"pgpass", "db.internal:5432:prod:app:Hs8dK3qL6wE1rT5y\n", []string{"Hs8dK3qL6wE1rT5y"}},
		{"docker-config", `{"auths": {"registry.example.com": {"auth": "` + dockerAuth + `"}}}` + "\n", []string{dockerAuth}},
		{"kubeconfig", "users:\n- name: admin\n  user:\n    client-key-data: " + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("kUbE-KeY-", 12))) + "\n    token: Kt5mQ8wZ2xR7vN4pL1sD9fG3\n",
			[]string{base64.StdEncoding.EncodeToString([]byte(strings.Repeat("kUbE-KeY-", 12))), "Kt5mQ8wZ2xR7vN4pL1sD9fG3"}},
		{"azure", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("AzUrEkEy", 8))) + ";EndpointSuffix=core.windows.net\n",
			[]string{base64.StdEncoding.EncodeToString([]byte(strings.Repeat("AzUrEkEy", 8)))}},
		{"http-log", "GET /v1/me HTTP/1.1\nAuthorization: Bearer Bq3wE8rT1yU6iO9pA2sD5fG7hJ4kL0zX\n", []string{"Bq3wE8rT1yU6iO9pA2sD5fG7hJ4kL0zX"}},
		{"id_rsa-8192", rsa8192, []string{rsaLine}},
		{"gpg-secret-key", gpg, []string{gpgLine}},
	}
}

// fileEncodings are the encodings a file holding a credential may be
// written in (or an agent may write it in).
var fileEncodings = []struct {
	name string
	enc  func(string) string
}{
	{"plain", func(s string) string { return s }},
	{"base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64-wrapped", func(s string) string {
		e := base64.StdEncoding.EncodeToString([]byte(s))
		var lines []string
		for len(e) > 76 {
			lines, e = append(lines, e[:76]), e[76:]
		}
		return strings.Join(append(lines, e), "\n")
	}},
	{"base64url-unpadded", func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
	{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
	{"HEX", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }},
	{"base32", func(s string) string { return base32.StdEncoding.EncodeToString([]byte(s)) }},
	{"percent-4x", func(s string) string {
		return url.QueryEscape(url.QueryEscape(url.QueryEscape(url.QueryEscape(s))))
	}},
	{"html-entities", func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, "&#%d;", r)
		}
		return b.String()
	}},
	{"html-named", html.EscapeString},
	{"literal-u", func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return b.String()
	}},
	{"zero-width", func(s string) string { return insertEvery(s, "\u200b", 3) }},
	{"soft-hyphen", func(s string) string { return insertEvery(s, "\u00ad", 4) }},
	{"fullwidth", func(s string) string {
		return strings.Map(func(r rune) rune {
			if r > ' ' && r < 0x7f {
				return r - 0x21 + 0xff01
			}
			return r
		}, s)
	}},
}

func insertEvery(s, sep string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 && i%n == 0 && s[i] != '\n' && s[i-1] != '\n' {
			b.WriteString(sep)
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// leaked returns the secrets of f that text holds, as they are or in the
// encoding enc (of the secret alone).
func leaked(f credentialFile, enc func(string) string, text string) []string {
	var out []string
	for _, s := range f.secrets {
		if strings.Contains(text, s) || strings.Contains(text, enc(s)) {
			out = append(out, s)
		}
	}
	return out
}

// TestSecretsFilesystemEncodings: behind the baseline, the real
// server-filesystem reads credential files of every kind in every
// encoding, and the agent gets each with its credentials redacted; a
// write of any of them is refused before the server sees it; a key read
// with head or tail, and any of them read with read_media_file, is
// redacted too (the blob stays base64 of the file, redacted inside).
func TestSecretsFilesystemEncodings(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := credentialFiles()
	for _, f := range files {
		for _, e := range fileEncodings {
			if err := os.WriteFile(filepath.Join(root, f.name+"."+e.name+".txt"), []byte(e.enc(f.content)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(root, f.name+".png"), []byte(f.content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	co := &clientOpts{Roots: []*mcp.Root{{URI: "file://" + root, Name: "tree"}}}
	cs := connectGuardedWith(t, co, nil, bin, root)

	stopped, total := 0, 0
	for _, f := range files {
		for _, e := range fileEncodings {
			total++
			got := blobView(callText(t, cs, "read_text_file", map[string]any{"path": filepath.Join(root, f.name+"."+e.name+".txt")}))
			if l := leaked(f, e.enc, got); len(l) > 0 || !strings.Contains(got, "[REDACTED:") {
				t.Errorf("read %s as %s: the agent got %d secrets: %s", f.name, e.name, len(l), truncate(got, 400))
				continue
			}
			stopped++
		}
	}
	t.Logf("server→agent: %d of %d encoded credential files redacted", stopped, total)

	// A key cut by head or tail is still a key.
	key := filepath.Join(root, "id_rsa-8192.plain.txt")
	for _, part := range []map[string]any{{"path": key, "head": 10}, {"path": key, "tail": 10}} {
		got := callText(t, cs, "read_text_file", part)
		for _, line := range strings.Split(got, "\n") {
			if len(line) == 64 && !strings.Contains(line, "REDACTED") {
				t.Errorf("read_text_file %v: a key line reached the agent: %q", part, line)
			}
		}
		if !strings.Contains(got, "[REDACTED:private-key") {
			t.Errorf("read_text_file %v: no redaction: %s", part, truncate(got, 300))
		}
	}

	// read_media_file answers base64: the image the agent decodes is the
	// file redacted.
	for _, f := range files {
		data := mediaData(t, cs, filepath.Join(root, f.name+".png"))
		if l := leaked(f, func(s string) string { return s }, string(data)); len(l) > 0 || !strings.Contains(string(data), "[REDACTED:") {
			t.Errorf("read_media_file %s: the agent decoded %d secrets: %q", f.name, len(l), truncate(string(data), 300))
		}
	}

	// agent→server: writing any of them, in any encoding, is refused and
	// never reaches the server.
	for _, f := range files {
		for _, e := range fileEncodings {
			path := filepath.Join(root, "out-"+f.name+"-"+e.name)
			callRejected(t, cs, "write_file", map[string]any{"path": path, "content": e.enc(f.content)}, "INPUT_REJECTED_SECRET")
			if _, err := os.Stat(path); err == nil {
				t.Errorf("write_file of %s as %s reached the server", f.name, e.name)
			}
		}
	}
	// Ordinary files with credential-like words come back as they are.
	benign := "# Configuration\n\npassword: changeme\nDATABASE_URL=postgres://user:password@localhost:5432/mydb\n" +
		"aws_secret_access_key = YOUR_SECRET_ACCESS_KEY\ncurl -H \"Authorization: Bearer $TOKEN\" https://api.example.com\n" +
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n" +
		"sha256:" + strings.Repeat("9f86d081", 8) + "\n" + base64.StdEncoding.EncodeToString([]byte("an ordinary sentence, encoded for no reason")) + "\n"
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(benign), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, cs, "read_text_file", map[string]any{"path": filepath.Join(root, "README.md")}); got != benign {
		t.Errorf("an ordinary file changed:\n got %q\nwant %q", got, benign)
	}
}

// mediaData reads a file with read_media_file and returns the bytes the
// client decodes from its answer.
func mediaData(t *testing.T, cs *mcp.ClientSession, path string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_media_file", Arguments: map[string]any{"path": path}})
	if err != nil {
		t.Fatalf("read_media_file: %v", err)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ImageContent:
			return c.Data
		case *mcp.AudioContent:
			return c.Data
		}
	}
	t.Fatalf("read_media_file returned no image: %s", truncate(mustJSON(toJSON(t, res)), 500))
	return nil
}

// TestSecretsEverythingEncodings: the real server-everything's get-env
// returns variables whose values are credential files in every encoding
// (under names that are not credential names, so only the scanner can
// know); none reaches the agent. Its echo tool never receives them.
func TestSecretsEverythingEncodings(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	files := credentialFiles()[:8] // the keys are read through the filesystem test
	var vars []string
	for _, f := range files {
		for _, e := range fileEncodings {
			vars = append(vars, envName(f.name, e.name)+"="+e.enc(f.content))
		}
	}
	dir := t.TempDir()
	pol := filepath.Join(dir, "everything.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\nserver: everything\ntools:\n  get-env: allow\n  echo: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connectGuarded(t, &guardOpts{Policy: pol, Env: vars}, npmServer(t, "mcp-server-everything"))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	// get-env is JSON.stringify(process.env, null, 2): a line per variable.
	env := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if name, v, ok := strings.Cut(strings.TrimSpace(line), `": `); ok {
			env[strings.TrimPrefix(name, `"`)] = v
		}
	}
	for _, f := range files {
		for _, e := range fileEncodings {
			v, ok := env[envName(f.name, e.name)]
			if !ok {
				t.Fatalf("get-env did not return %s: %s", envName(f.name, e.name), truncate(text, 500))
			}
			if l := leaked(f, e.enc, v); len(l) > 0 || !strings.Contains(blobView(strings.Trim(v, `",`)), "[REDACTED:") {
				t.Errorf("get-env %s as %s: the agent got %d secrets: %s", f.name, e.name, len(l), truncate(v, 300))
			}
		}
	}
	for _, f := range files {
		for _, e := range fileEncodings[:8] {
			callRejected(t, cs, "echo", map[string]any{"message": e.enc(f.content)}, "INPUT_REJECTED_SECRET")
		}
	}
	if got := callText(t, cs, "echo", map[string]any{"message": "password: changeme"}); !strings.Contains(got, "password: changeme") {
		t.Errorf("an ordinary echo changed: %q", got)
	}
}

// blobView is what an agent reads in a text that is base64 whole (a
// blob: mcpguard redacts inside it and encodes it again), else the text.
func blobView(s string) string {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
		if d, err := enc.DecodeString(s); err == nil {
			return string(d)
		}
	}
	return s
}

func envName(file, enc string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace("FIXTURE_" + file + "_" + enc))
}
