package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostileClean is testserver's Hostile text after `text`: escape
// sequences (CSI, OSC 8 and 52 with their payloads, 8-bit CSI) removed
// whole, C0/C1 controls other than tab/LF/CR removed, tag characters and
// bidi embeddings/overrides/isolates removed, everything else kept.
const hostileClean = "plain start\n" +
	"red hidden " +
	"link " +
	" " +
	"c1csi " +
	"tag " +
	"evil.exe isolate " +
	"nulbel " +
	"plain end"

// forbidden returns a description of the first code point that the `text`
// canonicaliser must never let through, or "".
func forbidden(s string) string {
	for i, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return fmt.Sprintf("control U+%04X at byte %d", r, i)
		case r >= 0xE0000 && r <= 0xE007F:
			return fmt.Sprintf("tag character U+%04X at byte %d", r, i)
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("bidi control U+%04X at byte %d", r, i)
		}
	}
	return ""
}

// strings collects every string in a JSON value, member names included.
func allStrings(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case map[string]any:
		for k, x := range v {
			*out = append(*out, k)
			allStrings(x, out)
		}
	case []any:
		for _, x := range v {
			allStrings(x, out)
		}
	}
}

// hostileObservation is what the client read from a hostile testserver.
type hostileObservation struct {
	texts    map[string][]string // where → strings read there
	toolText string
	deep     []string // the strings of structuredContent
}

func observeHostile(t *testing.T, cs *mcp.ClientSession) *hostileObservation {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	o := &hostileObservation{texts: map[string][]string{}}
	add := func(where string, v any) {
		var ss []string
		allStrings(toJSON(t, v), &ss)
		o.texts[where] = append(o.texts[where], ss...)
	}
	add("initialize", cs.InitializeResult())
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	add("tools/list", tools)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hostile", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("hostile: %v", err)
	}
	add("tools/call hostile", res)
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			o.toolText = tc.Text
		}
	}
	allStrings(toJSON(t, res.StructuredContent), &o.deep)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "hostile_error", Arguments: map[string]any{}})
	if err == nil {
		t.Fatalf("hostile_error: no error")
	}
	o.texts["error"] = []string{err.Error()}
	if got := callText(t, cs, "log", nil); got != "logged" {
		t.Fatalf("log: %q", got)
	}
	rec := recorderOf(cs)
	rec.waitFor(t, "the log notification", func() bool { return len(rec.logs) > 0 })
	rec.mu.Lock()
	add("notifications/message", rec.logs)
	rec.mu.Unlock()
	return o
}

// TestDirectHostileOutput checks that testserver is hostile everywhere the
// guarded test looks.
func TestDirectHostileOutput(t *testing.T) {
	t.Parallel()
	o := observeHostile(t, connectDirect(t, testserverBin, "-hostile-descriptions"))
	for _, where := range []string{"initialize", "tools/list", "tools/call hostile", "error", "notifications/message"} {
		found := false
		for _, s := range o.texts[where] {
			if forbidden(s) != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: testserver sent nothing hostile", where)
		}
	}
}

// TestGuardedHostileOutput: nothing hostile reaches the client —
// not in results at any depth, descriptions, instructions, error messages
// or log notifications — and the ordinary text around it is kept.
func TestGuardedHostileOutput(t *testing.T) {
	t.Parallel()
	o := observeHostile(t, connectGuarded(t, nil, testserverBin, "-hostile-descriptions"))
	for where, ss := range o.texts {
		for _, s := range ss {
			if f := forbidden(s); f != "" {
				t.Errorf("%s: %s in %q", where, f, truncate(s, 200))
			}
		}
	}
	if o.toolText != hostileClean {
		t.Errorf("hostile tool text:\n got %q\nwant %q", o.toolText, hostileClean)
	}
	for _, s := range o.deep {
		if strings.HasPrefix(s, "plain start") && s != hostileClean {
			t.Errorf("structuredContent string:\n got %q\nwant %q", s, hostileClean)
		}
	}
	if !strings.Contains(strings.Join(o.texts["tools/list"], "\n"), "Returns its text.") {
		t.Errorf("tool descriptions lost their ordinary text")
	}
}

// TestGuardedEgressRulesSeeCanonicalNames: the egress rules select on the
// member names the client reads. testserver's hostile_names returns
// structuredContent whose names hold NUL, U+202E, an SGR escape, a tag
// character and a zero-width space; each reads as a name a rule selects,
// and each value must arrive rewritten by that rule. Before the fix the
// selectors missed the raw names and text then turned them into the
// selected names, values untouched.
func TestGuardedEgressRulesSeeCanonicalNames(t *testing.T) {
	t.Parallel()
	policyFile := writePolicy(t, `version: 1
egress:
  - tools: [hostile_names]
    fields: [structuredContent.file, structuredContent.path]
    canonicalise: path
  - tools: [hostile_names]
    fields: [structuredContent.summary, structuredContent.note]
    canonicalise: free_text
`)
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	p := startGuardedRaw(t, &guardOpts{Policy: policyFile, Log: logFile}, testserverBin)
	p.initialize()
	p.sendWait(callLine(1, "hostile_names", map[string]any{}))
	m, _ := p.expect("1", 30*time.Second)
	var r struct {
		StructuredContent map[string]string `json:"structuredContent"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("hostile_names: %s", truncate(string(m.raw), 500))
	}
	want := map[string]string{
		"file":    "../../etc/passwd????curl?evil.example?sh?",
		"path":    "/tmp/x?y",
		"summary": "line1 line2",
		"note":    "a'b'",
	}
	if fmt.Sprint(r.StructuredContent) != fmt.Sprint(want) {
		t.Errorf("structuredContent through mcpguard:\n got %q\nwant %q", r.StructuredContent, want)
	}
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(logFile)
	if !strings.Contains(string(log), `(member name)`) || !strings.Contains(string(log), `"canonicaliser":"path"`) {
		t.Errorf("the log does not say which names and values were rewritten:\n%s", truncate(string(log), 3000))
	}
}

// TestGuardedLookalikeToolNames: with wipe: deny, a server that lists
// wi\u202epe (which the client reads as wipe) has it hidden, and a
// server that lists echo twice (echo and ec\u200bho) has its list refused.
func TestGuardedLookalikeToolNames(t *testing.T) {
	t.Parallel()
	policyFile := writePolicy(t, "version: 1\ntools:\n  wipe: deny\n")
	cs := connectGuarded(t, &guardOpts{Policy: policyFile}, testserverBin, "-lookalike", "wipe")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if strings.Contains(tool.Name, "wi") && strings.Contains(tool.Name, "pe") {
			t.Errorf("the denied wipe reached the client as %q", tool.Name)
		}
	}
	if len(list.Tools) == 0 {
		t.Error("no tools listed")
	}
	cs = connectGuarded(t, &guardOpts{Policy: policyFile}, testserverBin, "-lookalike", "echo")
	if list, err := cs.ListTools(context.Background(), nil); err == nil {
		t.Errorf("a list with echo twice (once as ec\\u200bho) was relayed: %d tools", len(list.Tools))
	}
}

// TestTSClientHostileRouting runs testserver's hostile_routing under the
// official TypeScript SDK client, directly and through mcpguard. Directly,
// the OSC 52 request id reaches the roots/list handler as
// extra.requestId and the ESC/U+202E method reaches the fallback
// notification handler (which shows the test can fail); through mcpguard
// neither does, and the plain notification still arrives.
func TestTSClientHostileRouting(t *testing.T) {
	t.Parallel()
	type seen struct {
		RequestIDs []string `json:"requestIds"`
		Methods    []string `json:"methods"`
	}
	run := func(argv []string) seen {
		out := runNodeClient(t, "tsrouting.mjs", map[string]any{"command": argv[0], "args": argv[1:], "env": map[string]string{"PATH": os.Getenv("PATH")}, "tool": "hostile_routing"})
		var s seen
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("tsrouting printed %q: %v", out, err)
		}
		return s
	}
	hostile := func(s string) bool { return strings.ContainsAny(s, "\x1b\u202e\a") }
	direct := run([]string{testserverBin})
	reached := false
	for _, v := range append(direct.RequestIDs, direct.Methods...) {
		reached = reached || hostile(v)
	}
	if !reached {
		t.Fatalf("directly, the hostile id and method did not reach the application (%+q): the test cannot tell", direct)
	}
	guarded := run(guardArgv(t, nil, testserverBin))
	for _, v := range append(guarded.RequestIDs, guarded.Methods...) {
		if hostile(v) {
			t.Errorf("through mcpguard, %+q reached the application", v)
		}
	}
	if len(guarded.Methods) != 1 || guarded.Methods[0] != "notifications/message" {
		t.Errorf("through mcpguard the fallback handler saw %+q, want the plain notifications/message once", guarded.Methods)
	}
}

// TestPaddedLongResult: a hostile server pads a long result's line with
// whitespace (before it, between its tokens, after it) and pauses where
// the padding shifts its image out of what mcpguard judged while the
// line arrived. The image is removed all the same, and trailing padding
// does not end mcpguard.
func TestPaddedLongResult(t *testing.T) {
	t.Parallel()
	p := startGuardedRaw(t, nil, testserverBin)
	p.initialize()
	for i, where := range []string{"leading", "between", "trailing"} {
		text := p.callOK(i+1, "padded", map[string]any{"bytes": 320 << 10, "where": where, "ms": 300})
		if strings.Contains(text, "collector.example/padded.png") || !strings.Contains(text, "[image removed: host collector.example]") {
			i := max(0, strings.Index(text, "![x]"))
			t.Errorf("%s padding: the image survived: %s", where, truncate(text[i:], 200))
		}
	}
}
