package policy_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpguard/mcpguard/policy"
)

// A policy is YAML text; Load validates and compiles it, and reports what
// is wrong as file:line:col.
func ExampleLoad() {
	_, err := policy.Load("fs.yaml", []byte("version: 1\nmode: lenient\n"), os.LookupEnv)
	fmt.Println(err)
	// Output:
	// fs.yaml:2:7: mode: `lenient` is not a valid mode; allowed: enforce, audit
}

// Evaluate gives the verdict one message from the agent would get, as the
// relay would give it, and why.
func ExamplePolicy_Evaluate() {
	pol, err := policy.Load("fs.yaml", []byte(`
version: 1
tools:
  delete_file: deny
ingress:
  - tools: ["*"]
    fields: [path]
    check: path_scope
    roots: [/srv/data]
`), os.LookupEnv)
	if err != nil {
		panic(err)
	}
	for _, call := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/srv/data/notes.txt"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/srv/data/../../etc/passwd"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"/srv/data/notes.txt"}}}`,
	} {
		ev := pol.Evaluate([]byte(call), nil)
		fmt.Println(strings.TrimSpace(fmt.Sprint(ev.Verdict, " ", ev.ErrorCode, " ", ev.Field)))
	}
	// Output:
	// allowed
	// rejected INPUT_REJECTED_PATH_SCOPE path
	// rejected INPUT_REJECTED_TOOL_DENIED
}
