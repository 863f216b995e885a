// Command runnerserver is a test-runner MCP server in the coverctl style for
// mcpguard's integration tests: one tool, run_tests {testArgs, timeout},
// that runs a real test runner in the project directory with testArgs as
// its argv (no shell), and returns the exit status and the output. The
// shipped runner policies (policies/jest.yaml, policies/go-test.yaml) are
// tested in front of it, against jest and go test themselves.
//
// Flags:
//
//	-runner jest|go|pytest  which runner: jest (-jest names the binary),
//	                  go test, or pytest (-pytest names the binary)
//	-jest PATH        the jest binary (integration/node_modules/.bin/jest)
//	-pytest PATH      the pytest binary
//	-dir DIR          the project directory the runner runs in
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	runner  = flag.String("runner", "go", "`jest`, `go` or `pytest`")
	jestBin = flag.String("jest", "jest", "the jest `binary`")
	pytest  = flag.String("pytest", "pytest", "the pytest `binary`")
	dir     = flag.String("dir", ".", "the project `directory`")
)

type runArgs struct {
	TestArgs []string `json:"testArgs,omitempty" jsonschema:"arguments for the test runner, passed as argv"`
	Timeout  string   `json:"timeout,omitempty" jsonschema:"how long the run may take, a Go duration"`
}

func main() {
	flag.Parse()
	s := mcp.NewServer(&mcp.Implementation{Name: "runnerserver", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "run_tests", Description: "Runs the project's tests."}, runTests)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

func runTests(ctx context.Context, _ *mcp.CallToolRequest, in runArgs) (*mcp.CallToolResult, any, error) {
	limit := 2 * time.Minute
	if d, err := time.ParseDuration(in.Timeout); err == nil && d > 0 && d < limit {
		limit = d
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var cmd *exec.Cmd
	switch *runner {
	case "jest":
		cmd = exec.CommandContext(ctx, *jestBin, append([]string{"--ci", "--watchAll=false"}, in.TestArgs...)...)
	case "pytest":
		cmd = exec.CommandContext(ctx, *pytest, in.TestArgs...)
	default:
		cmd = exec.CommandContext(ctx, "go", append([]string{"test"}, in.TestArgs...)...)
	}
	cmd.Dir = *dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		fmt.Fprintf(&out, "\nrunnerserver: %v", err)
	}
	text := fmt.Sprintf("exit=%d\n%s", code, out.Bytes())
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: code != 0}, nil, nil
}
