package starter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxToolsListPages bounds the tools/list pages read from one server, so a
// server that hands out cursors forever cannot keep init running.
const maxToolsListPages = 100

// errNoSampling declines what init cannot answer: nobody is there.
var errNoSampling = errors.New("mcpguard init does not answer sampling or elicitation")

// ListTools starts argv (no shell, in its own process group), connects to
// it with the official Go MCP SDK client (which negotiates the protocol
// revision, answers ping and roots/list), reads every page of tools/list,
// stops the server and its process group, and returns one tools/list
// result object {"tools":[...]}. The client announces sampling and
// elicitation, so the server lists every tool a full agent would see, and
// declines those requests if they come.
//
// What the server sends is not sanitised here: Generate quotes and
// canonicalises every string it writes.
func ListTools(ctx context.Context, argv []string, stderr io.Writer, version string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("no server command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpguard-init", Version: version}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errNoSampling
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errNoSampling
		},
	})
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		killGroup(cmd)
		return nil, fmt.Errorf("cannot start or initialize the server: %w", err)
	}
	defer func() {
		session.Close()
		killGroup(cmd) // npx and shell wrappers leave their children otherwise
	}()
	tools := []*mcp.Tool{}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxToolsListPages {
			return nil, fmt.Errorf("tools/list: more than %d pages", maxToolsListPages)
		}
		res, err := session.ListTools(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" || res.NextCursor == params.Cursor {
			break
		}
		params.Cursor = res.NextCursor
	}
	return json.Marshal(map[string]any{"tools": tools})
}

// killGroup ends whatever is left of the server's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
