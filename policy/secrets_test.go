package policy

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/codes"
)

const testToken = "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234"

func loadWithEnv(t *testing.T, yaml string, env ...string) *Policy {
	t.Helper()
	p, err := Load("test.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if p, err = p.WithEnvironment(env); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSecretsAudit(t *testing.T) {
	p := loadWithEnv(t, "version: 1\ntools:\n  t: {secrets: {ingress: audit}}\n")
	ev := p.Evaluate([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"k":"`+testToken+`"}}}`), nil)
	if ev.Verdict != Audited || ev.ErrorCode != "INPUT_REJECTED_SECRET" {
		t.Fatalf("got %+v, want an audited secret", ev)
	}
	ev = p.Evaluate([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"u","arguments":{"k":"`+testToken+`"}}}`), nil)
	if ev.Verdict != Rejected {
		t.Fatalf("another tool: got %+v, want rejected", ev)
	}
	if strings.Contains(ev.Error, testToken) || strings.Contains(string(ev.Reply), testToken) {
		t.Fatal("the rejection echoes the credential")
	}
}

func TestSecretsPolicyErrors(t *testing.T) {
	for _, bad := range []string{
		"version: 1\nsecrets: {allow_rules: [no-such-rule]}\n",
		"version: 1\nsecrets: {ingress: block}\n",
		"version: 1\nsecrets: {files: [/no/such/file]}\n",
		"version: 1\ntools:\n  t: {secrets: {env: [X]}}\n",
		"version: 1\ntools:\n  t: {secrets: {allow_rules: [nope]}}\n",
		"version: 1\nlinks: {images: hide}\n",
	} {
		if _, err := Load("bad.yaml", []byte(bad), func(string) (string, bool) { return "", false }); err == nil {
			t.Errorf("policy loaded: %q", bad)
		}
	}
}

func egressOf(t *testing.T, p *Policy, method, tool string, line string) (string, []Rewrite) {
	t.Helper()
	m, err := message.Parse([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	var call *Call
	if method != "" {
		call = &Call{Method: method, Tool: tool}
	}
	out, rws, err := p.NewSession().Egress(m, call)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), rws
}

func result(text string) string {
	q, _ := jsontext.AppendQuote(nil, text)
	return `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(q) + `}]}}`
}

func TestEgressRedactsAndRemoves(t *testing.T) {
	known := "kn0wn-Egress-S3cret"
	p := loadWithEnv(t, "version: 1\nlinks: {allow_image_hosts: [img.shields.io]}\n", "GITHUB_TOKEN="+known, "HOME=/home/u")
	cases := []struct {
		name, text, gone, rule string
	}{
		{"credential", "token: " + testToken + " ok", testToken, "github-pat"},
		{"known secret", "env GITHUB_TOKEN=" + known, known, "known-secret"},
		{"known secret split by escapes", "", known, "known-secret"},
		{"markdown image", "see ![x](https://evil.example/?q=1) now", "evil.example/?q=1", "host evil.example"},
		{"html image", `<img src="https://evil.example/p.png">`, "evil.example/p.png", "host evil.example"},
	}
	for _, c := range cases {
		line := result(c.text)
		if c.text == "" {
			esc := ""
			for i, r := range known {
				if i%2 == 0 {
					esc += `\u00` + strings.ToLower(string("0123456789ABCDEF"[r>>4])) + string("0123456789abcdef"[r&15])
				} else {
					esc += string(r)
				}
			}
			line = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x ` + esc + ` y"}]}}`
		}
		out, rws := egressOf(t, p, "tools/call", "t", line)
		if strings.Contains(out, c.gone) {
			t.Errorf("%s: %s survived: %s", c.name, c.gone, out)
		}
		found := false
		for _, rw := range rws {
			if rw.Rule == c.rule && rw.Field == "result.content[0].text" {
				found = true
			}
			if strings.Contains(rw.Rule+rw.Field+rw.Canonicaliser, c.gone) {
				t.Errorf("%s: a rewrite names the value", c.name)
			}
		}
		if !found {
			t.Errorf("%s: no rewrite names %q: %+v", c.name, c.rule, rws)
		}
	}
	// Allowed image hosts and clean text are forwarded byte for byte.
	for _, text := range []string{"![badge](https://img.shields.io/b.svg)", "plain text", "git 9fceb02d0ae598e95dc970b74767f19372d61af8"} {
		line := result(text)
		if out, rws := egressOf(t, p, "tools/call", "t", line); out != line || len(rws) != 0 {
			t.Errorf("%q changed: %s %+v", text, out, rws)
		}
	}
	// Descriptions in tools/list and error messages are covered too.
	out, _ := egressOf(t, p, "tools/list", "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"![x](https://evil.example/t) `+known+`","inputSchema":{"type":"object"}}]}}`)
	if strings.Contains(out, known) || strings.Contains(out, "evil.example/t") {
		t.Errorf("tools/list kept it: %s", out)
	}
	out, _ = egressOf(t, p, "tools/call", "t", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"bad token `+testToken+`"}}`)
	if strings.Contains(out, testToken) {
		t.Errorf("error message kept it: %s", out)
	}
}

func TestEgressSecretsOffPerTool(t *testing.T) {
	p := loadWithEnv(t, "version: 1\ntools:\n  vault: {secrets: {egress: off}}\nlinks: {images: keep}\n")
	line := result("token " + testToken + " ![x](https://evil.example/)")
	if out, _ := egressOf(t, p, "tools/call", "vault", line); out != line {
		t.Errorf("vault's result changed: %s", out)
	}
	if out, _ := egressOf(t, p, "tools/call", "other", line); strings.Contains(out, testToken) || !strings.Contains(out, "evil.example") {
		t.Errorf("other tool: %s", out)
	}
}

// TestBaselineSecretsEveryRequest: the baseline refuses a credential in
// the arguments of every request the server acts on, not only tools/call
// (a prompts/get argument used to reach the server), and lets the same
// requests through without one.
func TestBaselineSecretsEveryRequest(t *testing.T) {
	p, err := Baseline().WithEnvironment([]string{"DB_PASSWORD=correct horse battery staple"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, params string }{
		{"prompts/get", `{"name":"p","arguments":{"topic":"%s"}}`},
		{"resources/read", `{"uri":"https://api.example/x?key=%s"}`},
		{"resources/subscribe", `{"uri":"file:///%s"}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"%s"}}`},
		{"completion/complete", `{"ref":{"type":"ref/resource","uri":"https://api.example/%s/{id}"},"argument":{"name":"id","value":"1"}}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"x"},"context":{"arguments":{"b":"%s"}}}`},
		{"tools/call", `{"name":"t","arguments":{"a":"%s"}}`},
	} {
		for _, secret := range []string{testToken, "correct horse battery staple"} {
			line := `{"jsonrpc":"2.0","id":1,"method":"` + tc.name + `","params":` + strings.Replace(tc.params, "%s", secret, 1) + `}`
			ev := p.Evaluate([]byte(line), nil)
			if ev.Verdict != Rejected || ev.ErrorCode != "INPUT_REJECTED_SECRET" {
				t.Errorf("%s with %.8s...: got %s %s, want INPUT_REJECTED_SECRET", tc.name, secret, ev.Verdict, ev.ErrorCode)
			}
			if strings.Contains(string(ev.Reply), secret) {
				t.Errorf("%s: the rejection echoes the secret", tc.name)
			}
		}
		line := `{"jsonrpc":"2.0","id":1,"method":"` + tc.name + `","params":` + strings.Replace(tc.params, "%s", "ordinary words", 1) + `}`
		if ev := p.Evaluate([]byte(line), nil); ev.Verdict != Allowed {
			t.Errorf("%s without a secret: got %s %s", tc.name, ev.Verdict, ev.Error)
		}
	}
}

// TestAnswerSecrets: the client's answers to the server's requests (an
// elicitation form, a sampled message) are judged for credentials like
// tools/call arguments; clean answers pass.
func TestAnswerSecrets(t *testing.T) {
	p, err := Baseline().WithEnvironment(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := p.NewSession()
	for _, tc := range []struct {
		method, result string
		refused        bool
	}{
		{"elicitation/create", `{"action":"accept","content":{"password":"` + testToken + `"}}`, true},
		{"elicitation/create", `{"action":"accept","content":{"` + testToken + `":true}}`, true},
		{"sampling/createMessage", `{"role":"assistant","model":"m","content":{"type":"text","text":"key ` + testToken + `"}}`, true},
		{"elicitation/create", `{"action":"accept","content":{"name":"Ada"}}`, false},
		{"sampling/createMessage", `{"role":"assistant","model":"m","content":{"type":"text","text":"hello"}}`, false},
	} {
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":3,"result":` + tc.result + `}`))
		if err != nil {
			t.Fatal(err)
		}
		v := s.Answer(tc.method, m)
		if (v.Rejection != nil) != tc.refused {
			t.Errorf("%s %s: rejection %+v, want refused=%v", tc.method, tc.result, v.Rejection, tc.refused)
			continue
		}
		if v.Rejection == nil {
			continue
		}
		if v.Rejection.ErrorCode != "INPUT_REJECTED_SECRET" || v.Audit || !v.AsError {
			t.Errorf("%s: got %+v", tc.method, v)
		}
		if reply := string(v.Reply(m.ID)); strings.Contains(reply, testToken) || !strings.Contains(reply, `"error"`) {
			t.Errorf("%s: reply to the server %s", tc.method, reply)
		}
	}
	audit := loadWithEnv(t, "version: 1\nsecrets: {ingress: audit}\n").NewSession()
	m, _ := message.Parse([]byte(`{"jsonrpc":"2.0","id":3,"result":{"action":"accept","content":{"p":"` + testToken + `"}}}`))
	if v := audit.Answer("elicitation/create", m); v.Rejection == nil || !v.Audit {
		t.Errorf("secrets ingress audit: got %+v, want an audited rejection", v)
	}
}

// TestEgressIconsAndResourceLinks: an icon's src is an image the client
// fetches by itself, removed like one to a host not allowed; a
// resource_link's uri is a link, removed when links are neutralised.
func TestEgressIconsAndResourceLinks(t *testing.T) {
	icons := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"icons":[` +
		`{"src":"https://collector.example/i.png?d=x","mimeType":"image/png"},{"src":"https://img.shields.io/ok.svg"},{"src":"data:image/png;base64,iVBORw0KGgo="},{"src":"https://169.254.169.254/x"}]}],` +
		`"_meta":{"icons":[{"src":"https://collector.example/j.png"}]}}}`
	p := loadWithEnv(t, "version: 1\nlinks: {allow_image_hosts: [img.shields.io]}\n")
	out, rws := egressOf(t, p, "tools/list", "", icons)
	for _, gone := range []string{"collector.example", "169.254.169.254"} {
		if strings.Contains(out, gone) {
			t.Errorf("an icon to %s survives: %s", gone, out)
		}
	}
	for _, kept := range []string{"https://img.shields.io/ok.svg", "data:image/png;base64,iVBORw0KGgo=", `"mimeType":"image/png"`} {
		if !strings.Contains(out, kept) {
			t.Errorf("%s is gone: %s", kept, out)
		}
	}
	if n := strings.Count(out, `"src":"data:,"`); n != 3 || len(rws) != 3 {
		t.Errorf("%d icons replaced, %d rewrites (%+v), want 3: %s", n, len(rws), rws, out)
	}
	link := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","uri":"https://collector.example/doc?d=x","name":"doc"},{"type":"resource_link","uri":"file:///home/u/doc.txt","name":"local"}]}}`
	if out, _ := egressOf(t, Baseline(), "tools/call", "t", link); out != link {
		t.Errorf("baseline changed a resource link (links are kept by default): %s", out)
	}
	neutral := loadWithEnv(t, "version: 1\nlinks: {links: neutralise, allow_link_hosts: [docs.example]}\n")
	out, _ = egressOf(t, neutral, "tools/call", "t", link)
	if strings.Contains(out, "collector.example") || !strings.Contains(out, `"uri":"data:,"`) {
		t.Errorf("links: neutralise kept a resource link to another host: %s", out)
	}
	if !strings.Contains(out, "file:///home/u/doc.txt") {
		t.Errorf("a file: resource link was removed: %s", out)
	}
	prompt := `{"jsonrpc":"2.0","id":1,"result":{"messages":[{"role":"user","content":{"type":"resource_link","uri":"https://collector.example/p","name":"p"}}]}}`
	if out, _ := egressOf(t, neutral, "prompts/get", "p", prompt); strings.Contains(out, "collector.example") {
		t.Errorf("a prompt message's resource link survives: %s", out)
	}
}

// TestInputResponsesSecrets: the answers a 2026-07-28 client sends with
// its retry are judged like answers sent on their own.
func TestInputResponsesSecrets(t *testing.T) {
	p, err := Baseline().WithEnvironment(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"tools/call", "prompts/get", "resources/read"} {
		line := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"name":"t","uri":"file:///x","arguments":{},"inputResponses":{"r1":{"action":"accept","content":{"pw":"` + testToken + `"}}},"_meta":{}}}`
		ev := p.Evaluate([]byte(line), nil)
		if ev.Verdict != Rejected || ev.ErrorCode != "INPUT_REJECTED_SECRET" || !strings.HasPrefix(ev.Field, "inputResponses.") {
			t.Errorf("%s: got %s %s %s", method, ev.Verdict, ev.ErrorCode, ev.Field)
		}
		clean := strings.Replace(line, testToken, "Ada", 1)
		if ev := p.Evaluate([]byte(clean), nil); ev.Verdict != Allowed {
			t.Errorf("%s without a secret: %s %s", method, ev.Verdict, ev.Error)
		}
	}
}

// TestDeniedToolNameVariants: a tool denied by name is refused under the
// spellings a server that matches names loosely resolves to it.
func TestDeniedToolNameVariants(t *testing.T) {
	p := loadWithEnv(t, "version: 1\ntools:\n  send_email: deny\n  read_mail: allow\n  \"git_*\": deny\n")
	for _, name := range []string{"send_email", "SEND_EMAIL", "Send_Email", "send_email ", "s\u0435nd_email", "ｓｅｎｄ_ｅｍａｉｌ", "git_push", "GIT_PUSH", " Git_Push", "ｇｉｔ_push", "g\u0456t_push", "\u0261it_push", "GIT_\u0420USH"} {
		line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
		if ev := p.Evaluate([]byte(line), nil); ev.Verdict != Rejected || ev.ErrorCode != codes.ToolDenied {
			t.Errorf("%q: got %s %s", name, ev.Verdict, ev.ErrorCode)
		}
	}
	for _, name := range []string{"read_mail", "READ_MAIL", "send_emails", "gitpush", "github_push"} {
		line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
		if ev := p.Evaluate([]byte(line), nil); ev.Verdict != Allowed {
			t.Errorf("%q: got %s %s", name, ev.Verdict, ev.Error)
		}
	}
}

// TestListenSecrets: subscriptions/listen (2026-07-28) names resource URIs
// as resources/subscribe did; they are judged the same way.
func TestListenSecrets(t *testing.T) {
	p := loadWithEnv(t, "version: 1\ningress:\n  - methods: [resources/subscribe]\n    fields: [uri]\n    check: path_scope\n    roots: [/srv]\n")
	for uri, want := range map[string]Outcome{
		"file:///srv/a.txt":                Allowed,
		"file:///etc/passwd":               Rejected,
		"file:///srv/" + testToken + ".md": Rejected,
	} {
		line := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///srv/b.txt","` + uri + `"]}}}`
		if ev := p.Evaluate([]byte(line), nil); ev.Verdict != want {
			t.Errorf("%s: got %s %s %s, want %s", uri, ev.Verdict, ev.ErrorCode, ev.Error, want)
		}
	}
	bad := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{},"notifications":{"resourceSubscriptions":[1]}}}`
	if ev := p.Evaluate([]byte(bad), nil); ev.Verdict != Rejected {
		t.Errorf("a URI that is not a string: %s", ev.Verdict)
	}
}

// TestIconUnderEscapedName: an icon or a resource link's uri under a
// name with an escaped letter is judged as one, in a list and in a tool's
// result (which egress does not rewrite before it looks).
func TestIconUnderEscapedName(t *testing.T) {
	escaped := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","icon\u0073":[{"src":"https://collector.example/i.png"}]}]}}`
	if out, _ := egressOf(t, Baseline(), "tools/list", "", escaped); strings.Contains(out, "collector.example") {
		t.Errorf("an icon under an escaped name survives: %s", out)
	}
	neutral := loadWithEnv(t, "version: 1\nlinks: {links: neutralise}\n")
	for _, c := range []struct {
		p    *Policy
		line string
	}{
		{Baseline(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x","_meta":{"i\u0063ons":[{"src":"https://collector.example/i.png"}]}}]}}`},
		{Baseline(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x","_meta":{"icons":[{"src":"https://collector.example/i.png"}]}}]}}`},
		{neutral, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","\u0075ri":"https://collector.example/doc","name":"doc"}]}}`},
	} {
		if out, _ := egressOf(t, c.p, "tools/call", "t", c.line); strings.Contains(out, "collector.example") {
			t.Errorf("a URL under an escaped name survives: %s", out)
		}
	}
}

// TestRejectionFieldIgnoresMemberOrder: a call with credentials in two
// fields is refused naming the same field whichever order the agent
// wrote them in, also when the fields are nested under one member
// (a walk that met only one-member objects is not walked again).
func TestRejectionFieldIgnoresMemberOrder(t *testing.T) {
	t.Parallel()
	p := Baseline()
	for _, args := range [][2]string{
		{`{"b":"` + testToken + `","a":"` + testToken + `"}`, `{"a":"` + testToken + `","b":"` + testToken + `"}`},
		{`{"o":{"b":"` + testToken + `","a":"` + testToken + `"}}`, `{"o":{"a":"` + testToken + `","b":"` + testToken + `"}}`},
		{`{"o":{"b":"` + testToken + `"}}`, `{"o":{"b":"` + testToken + `"}}`},
	} {
		var fields [2]string
		for i, a := range args {
			ev := p.Evaluate([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":`+a+`}}`), nil)
			if ev.Verdict != Rejected {
				t.Fatalf("%s: got %+v, want rejected", a, ev)
			}
			fields[i] = ev.Field
		}
		if fields[0] != fields[1] || fields[0] == "" {
			t.Errorf("%s and %s: refused naming %q and %q, want one field", args[0], args[1], fields[0], fields[1])
		}
	}
}
