// Package launcher recognises the programs that start another program for
// an MCP client's server entry: env, the package runners (npx, bunx, uvx,
// pnpx; npm, pnpm, yarn, bun, pipx and uv with exec, dlx, x, run or tool)
// and the shells run with -c. It is the one definition of a launcher: the
// agent configuration code uses it to find mcpguard behind a launcher in
// an entry, and the session store to walk from mcpguard up to its agent
// past the launchers between them.
package launcher

import (
	"path/filepath"
	"strings"
)

// Next returns the command line that argv, a launcher's command line,
// runs: env's program (its options and NAME=VALUE words skipped), a
// package runner's package (its own flags skipped), the words of a
// shell's -c script (a leading exec dropped). It returns nil when argv[0]
// is not a launcher or runs nothing.
func Next(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	base := strings.ToLower(filepath.Base(argv[0]))
	switch base {
	case "env":
		i := 1
		for i < len(argv) && (strings.HasPrefix(argv[i], "-") || strings.Contains(argv[i], "=")) {
			if argv[i] == "-u" || argv[i] == "-C" || argv[i] == "-S" {
				i++
			}
			i++
		}
		return argv[min(i, len(argv)):]
	case "npx", "bunx", "uvx", "pnpx":
		return skipFlags(argv[1:])
	case "pnpm", "yarn", "bun", "npm", "pipx", "uv":
		if len(argv) > 1 && (argv[1] == "dlx" || argv[1] == "exec" || argv[1] == "x" || argv[1] == "run" || argv[1] == "tool") {
			rest := argv[2:]
			if base == "uv" && len(rest) > 0 && rest[0] == "run" {
				rest = rest[1:]
			}
			return skipFlags(rest)
		}
	case "sh", "bash", "zsh", "dash", "ash", "ksh":
		for i := 1; i+1 < len(argv); i++ {
			if strings.HasPrefix(argv[i], "-") && strings.Contains(argv[i], "c") && !strings.HasPrefix(argv[i], "--") {
				next := strings.Fields(argv[i+1])
				if len(next) > 0 && next[0] == "exec" {
					next = next[1:]
				}
				return next
			}
		}
	}
	return nil
}

// skipFlags drops a package runner's own options (-y, --yes, --quiet,
// -p PKG, --package=PKG) and returns the command it runs.
func skipFlags(argv []string) []string {
	i := 0
	for i < len(argv) && strings.HasPrefix(argv[i], "-") {
		switch argv[i] {
		case "-p", "--package", "--from", "--with", "--spec", "--python":
			i++
		}
		i++
	}
	if i >= len(argv) {
		return nil
	}
	return argv[i:]
}

// Running reports whether a running process, by its argument vector
// (/proc/PID/cmdline, kern.procargs2), is a launcher running something,
// as Next reads it. Two forms a launcher takes at run time are read too:
// the title npm gives its process ("npm exec mcpguard ...", one word with
// no slash and spaces), and an interpreter running a launcher's script
// (node /usr/bin/npx ..., node .../npx-cli.js ..., python3 /usr/bin/pipx
// ...), whose script is read as the program.
func Running(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	if a := argv[0]; !strings.Contains(a, "/") && strings.Contains(a, " ") {
		argv = append(strings.Fields(a), argv[1:]...)
	}
	if len(argv) > 1 && interpreter(argv[0]) && !strings.HasPrefix(argv[1], "-") {
		script := filepath.Base(argv[1])
		for _, ext := range []string{".js", ".cjs", ".mjs", ".py"} {
			script = strings.TrimSuffix(script, ext)
		}
		argv = append([]string{strings.TrimSuffix(script, "-cli")}, argv[2:]...)
	}
	return len(Next(argv)) > 0
}

// interpreter reports whether program runs the script named next on its
// command line: node, and python as pipx and uv scripts are run.
func interpreter(program string) bool {
	b := strings.ToLower(filepath.Base(program))
	return b == "node" || b == "nodejs" || strings.HasPrefix(b, "python")
}
