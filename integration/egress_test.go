package integration

import (
	"context"
	"fmt"
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
	for i := 0; i < 100; i++ {
		rec.mu.Lock()
		n := len(rec.logs)
		rec.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rec.mu.Lock()
	add("notifications/message", rec.logs)
	rec.mu.Unlock()
	return o
}

// TestDirectHostileOutput checks that testserver is hostile everywhere the
// guarded test looks.
func TestDirectHostileOutput(t *testing.T) {
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

// TestGuardedHostileOutput (issue 4): nothing hostile reaches the client —
// not in results at any depth, descriptions, instructions, error messages
// or log notifications — and the ordinary text around it is kept.
func TestGuardedHostileOutput(t *testing.T) {
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
