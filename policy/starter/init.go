package starter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/lint"
)

// InitOptions are the settings of `mcpguard init`.
type InitOptions struct {
	Argv    []string      // the server's command line
	Out     string        // write the policy here; stdout when empty
	Force   bool          // overwrite Out if it exists
	Timeout time.Duration // how long the server gets to list its tools
	Version string        // mcpguard's version, sent as clientInfo
	// SaveToolsList, when set, is a file to write the server's tools/list
	// result to ({"tools":[...]}, every page): what `mcpguard eval
	// --tools-list` and `mcpguard check --tools-list` read.
	SaveToolsList string
}

// Init is `mcpguard init`: it starts the server, lists its tools, stops
// it, and writes a starter policy (audit mode, unknown tools denied) that
// is guaranteed to load. The status is 0 on success, 1 when the server or
// the policy fails, 2 on a usage error.
func Init(ctx context.Context, o InitOptions, stdout, stderr io.Writer) (int, error) {
	if len(o.Argv) == 0 {
		return 2, errors.New("no server command: mcpguard init [--out FILE] -- COMMAND [ARGS...]")
	}
	if o.Out != "" && !o.Force {
		if _, err := os.Stat(o.Out); err == nil {
			return 2, fmt.Errorf("%s exists; pass --force to overwrite it", o.Out)
		}
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	tools, err := ListTools(ctx, o.Argv, stderr, o.Version)
	if err != nil {
		return 1, fmt.Errorf("init: %w", err)
	}
	if o.SaveToolsList != "" {
		if err := os.WriteFile(o.SaveToolsList, append(tools, '\n'), 0o644); err != nil {
			return 1, fmt.Errorf("init: --save-tools-list: %w", err)
		}
	}
	for _, r := range lint.Listed(tools, "tools", "name") {
		fmt.Fprintf(stderr, "mcpguard: lint: tool %s: %s\n", strconv.Quote(canon.FreeText(r.Name, 128)), lint.Join(r.Findings))
	}
	text, err := Generate(tools, o.Argv, Options{Roots: policy.ServerDirs(o.Argv).Abs(), Date: time.Now()})
	if err != nil {
		return 1, fmt.Errorf("init: %w", err)
	}
	// The promise is a policy that passes `mcpguard check`; hold ourselves
	// to it before anyone relies on the file.
	if _, err := policy.Load("starter policy", text, lookupWithPWD); err != nil {
		return 1, fmt.Errorf("init: the starter policy does not load (a bug in mcpguard):\n%w", err)
	}
	where := "stdout"
	if o.Out == "" {
		_, err = stdout.Write(text)
	} else {
		where = o.Out
		err = os.WriteFile(o.Out, text, 0o644)
	}
	if err != nil {
		return 1, fmt.Errorf("init: %w", err)
	}
	fmt.Fprintf(stderr, "mcpguard: starter policy written to %s (mode: audit); review it, try calls with `mcpguard eval`, then switch to enforce\n", where)
	return 0, nil
}

// lookupWithPWD is os.LookupEnv, with PWD falling back to the working
// directory: the starter's default root is ${PWD}.
func lookupWithPWD(name string) (string, bool) {
	if v, ok := os.LookupEnv(name); ok || name != "PWD" {
		return v, ok
	}
	wd, err := os.Getwd()
	return wd, err == nil
}
