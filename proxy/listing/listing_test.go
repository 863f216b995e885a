package listing

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a stdio MCP server that writes its results
// byte for byte, chosen by LISTING_TEST_SERVER.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LISTING_TEST_SERVER"); mode != "" {
		serve(mode, os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Raw pages, with spacing and members the SDK would not write back.
const (
	page1 = `{"tools":[ {"name":"a","inputSchema":{"type":"object"},"x-extra":[1, 2]} ],"nextCursor":"c2"}`
	page2 = `{"tools":[{"name":"b","description":"caf\u00e9","inputSchema":{"type":"object"}}]}`
)

func serve(mode string, in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Cursor          string `json:"cursor"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		var result string
		switch req.Method {
		case "initialize":
			caps := `{"tools":{}}`
			switch mode {
			case "all":
				caps = `{"tools":{},"prompts":{},"resources":{}}`
			case "no-tools":
				caps = `{}`
			}
			result = fmt.Sprintf(`{"protocolVersion":%q,"capabilities":%s,"serverInfo":{"name":"raw","version":"1"},"instructions":"hi"}`, req.Params.ProtocolVersion, caps)
		case "tools/list":
			switch {
			case mode == "no-tools":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no tools"}}`+"\n", req.ID)
				continue
			case mode == "endless":
				result = fmt.Sprintf(`{"tools":[],"nextCursor":"c%s"}`, req.ID)
			case mode == "stuck":
				result = `{"tools":[],"nextCursor":"same"}`
			case req.Params.Cursor == "c2":
				result = page2
			default:
				result = page1
			}
		case "prompts/list":
			result = `{"prompts":[{"name":"p"}]}`
		case "resources/list":
			result = `{"resources":[{"uri":"test://r","name":"r"}]}`
		case "resources/templates/list":
			result = `{"resourceTemplates":[]}`
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}`+"\n", req.ID)
			continue
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
	}
}

func list(t *testing.T, mode string, all bool) (*Listing, error) {
	t.Helper()
	t.Setenv("LISTING_TEST_SERVER", mode)
	// The server is this test binary, and List waits for it to exit:
	// under -race its runtime would first wait a second for late race
	// reports (GORACE's atexit_sleep_ms), which races still fail without.
	t.Setenv("GORACE", os.Getenv("GORACE")+" atexit_sleep_ms=0")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	return List(ctx, []string{os.Args[0]}, Options{All: all, Stderr: io.Discard, Version: "test"})
}

func TestListKeepsTheServersBytes(t *testing.T) {
	l, err := list(t, "tools", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Pages["tools/list"]; len(got) != 2 || string(got[0]) != page1 || string(got[1]) != page2 {
		t.Errorf("tools/list pages: %q", got)
	}
	if len(l.Initialize) != 1 || !strings.Contains(string(l.Initialize[0]), `"instructions":"hi"`) {
		t.Errorf("initialize: %q", l.Initialize)
	}
	if _, ok := l.Pages["prompts/list"]; ok {
		t.Error("prompts listed without All")
	}
	tools, err := l.Tools()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[{"name":"a","inputSchema":{"type":"object"},"x-extra":[1, 2]},{"name":"b","description":"caf\u00e9","inputSchema":{"type":"object"}}]}`
	if string(tools) != want {
		t.Errorf("Tools() =\n%s\nwant\n%s", tools, want)
	}
}

func TestListAll(t *testing.T) {
	l, err := list(t, "all", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		if len(l.Pages[m]) == 0 {
			t.Errorf("no %s page", m)
		}
	}
	// A server that announces no prompts or resources is not asked.
	l, err = list(t, "tools", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Pages) != 1 {
		t.Errorf("asked for what the server does not announce: %q", l.Pages)
	}
}

func TestListBoundsPages(t *testing.T) {
	if _, err := list(t, "endless", false); err == nil || !strings.Contains(err.Error(), "more than 100 pages") {
		t.Errorf("endless cursors: %v", err)
	}
	l, err := list(t, "stuck", false)
	if err != nil || len(l.Pages["tools/list"]) != 2 {
		t.Errorf("a cursor handed out twice: %v, %d pages", err, len(l.Pages["tools/list"]))
	}
}

func TestListWithoutTools(t *testing.T) {
	l, err := list(t, "no-tools", false)
	if err != nil {
		t.Fatalf("a server that announces no tools may refuse tools/list: %v", err)
	}
	if tools, err := l.Tools(); err != nil || string(tools) != `{"tools":[]}` {
		t.Errorf("Tools() = %s, %v", tools, err)
	}
	if _, err := List(t.Context(), nil, Options{}); err == nil {
		t.Error("no server command: no error")
	}
}
