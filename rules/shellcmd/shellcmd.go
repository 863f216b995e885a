// Package shellcmd holds the shell_command ingress check: it reads a
// command line the way a shell will (mvdan.cc/sh/v3 parses POSIX sh and
// bash into words, expansions and redirections) and judges the programs
// the shell would run, by name, against an allowlist or a denylist.
//
// It stops command injection through a tool that hands its argument to a
// shell (`spawn(cmd, {shell: true})`, `sh -c`, `exec()`), in the spellings
// that a character filter such as shell_metachars does not read:
//
//   - quoting and escapes inside a word: r\m, 'r'm, "rm", $'\x72m',
//     $'rm\0junk' (the kernel stops at the NUL);
//   - brace expansion and paths: /bin/{rm,} -rf, {rm,-rf,/}, /usr/bin/rm;
//   - wrappers that run their arguments: env, command, exec, nohup,
//     nice, timeout, stdbuf, setsid, sudo, doas, xargs, find -exec and
//     -execdir, busybox, and sh -c / bash -c (whose string is read as a
//     command line in turn);
//   - what no reading can judge before it runs, which is refused: command
//     and process substitution ($(...), `...`, <(...)), a program name
//     that comes from a variable, arithmetic or a glob, eval, source,
//     alias, trap, function definitions (which rename programs), a shell
//     reading commands from standard input or a script file
//     (`curl x | sh`), and anything the parser cannot read.
//
// A value is judged under the bash reading and the POSIX sh reading, and
// refused if either refuses it, since the server's /bin/sh may be either.
package shellcmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// Syntax names a shell construct that a policy may allow.
type Syntax string

// The constructs a policy may allow. Default is what Options.Syntax nil
// gives.
const (
	Pipes      Syntax = "pipes"      // a | b: every stage is judged
	Lists      Syntax = "lists"      // a && b, a || b, a; b, newlines
	Groups     Syntax = "groups"     // ( a ), { a; }
	Control    Syntax = "control"    // if, for, while, until, case
	Background Syntax = "background" // a &
	Redirects  Syntax = "redirects"  // > file, >> file, < file (2>&1 and /dev/null are always allowed)
	Variables  Syntax = "variables"  // $VAR and $((...)) in arguments (never in a program name)
	Globs      Syntax = "globs"      // *, ?, [...] in arguments (never in a program name)
	Braces     Syntax = "braces"     // {a,b} and {1..3}, expanded and judged word by word
)

// Default is the syntax allowed when a policy names none: what ordinary
// commands use (`cd web && npm test 2>&1 | tail -5`, `ls *.go`,
// `mkdir -p src/{a,b}`).
var Default = []Syntax{Pipes, Lists, Groups, Globs, Braces}

var allSyntax = []Syntax{Pipes, Lists, Groups, Control, Background, Redirects, Variables, Globs, Braces}

// Options configure a Check.
type Options struct {
	// Programs, when not empty, are the only programs that may run: names
	// (a path's base name is judged, so git allows /usr/bin/git), compared
	// without case. A program given by a path outside the system
	// directories (/bin, /usr/bin, /usr/local/bin, /sbin, /usr/sbin) is
	// refused: ./git is whatever file is there.
	Programs []string
	// DenyPrograms are refused wherever they run, also through a wrapper.
	DenyPrograms []string
	// Syntax allowed; nil is Default.
	Syntax []Syntax
	// Env are the variable names a command may assign (CI=1 npm test,
	// env NODE_ENV=test node x). Any other assignment is refused:
	// PATH, LD_PRELOAD, BASH_ENV or GIT_SSH_COMMAND change what runs.
	Env []string
}

// Check is the compiled shell_command check. It is immutable and safe for
// concurrent use.
type Check struct {
	allow  map[string]bool // nil: every program not denied
	deny   map[string]bool
	syntax map[Syntax]bool
	env    map[string]bool
}

var _ rules.Check = (*Check)(nil)

// New compiles a Check.
func New(o Options) (*Check, error) {
	c := &Check{deny: map[string]bool{}, syntax: map[Syntax]bool{}, env: map[string]bool{}}
	if len(o.Programs) > 0 {
		c.allow = map[string]bool{}
	}
	for _, p := range o.Programs {
		if p == "" || strings.Contains(p, "/") {
			return nil, fmt.Errorf("programs: %q: want a program name without a directory", p)
		}
		c.allow[strings.ToLower(p)] = true
	}
	for _, p := range o.DenyPrograms {
		if p == "" || strings.Contains(p, "/") {
			return nil, fmt.Errorf("deny_programs: %q: want a program name without a directory", p)
		}
		c.deny[strings.ToLower(p)] = true
	}
	syntax := o.Syntax
	if syntax == nil {
		syntax = Default
	}
	for _, s := range syntax {
		if !slices.Contains(allSyntax, s) {
			return nil, fmt.Errorf("syntax: unknown %q (want one of %v)", s, allSyntax)
		}
		c.syntax[s] = true
	}
	for _, e := range o.Env {
		if !validName(e) {
			return nil, fmt.Errorf("env: %q is not a variable name", e)
		}
		c.env[e] = true
	}
	return c, nil
}

func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9') {
			return false
		}
	}
	return true
}

// Check judges one command line.
func (c *Check) Check(value string) *rules.Finding {
	for _, d := range dialects {
		if f := c.judge(value, d, 0); f != nil {
			return f
		}
	}
	return nil
}

const remediation = "Run one allowed program with plain arguments; no substitutions, variables in program names, eval, or shells reading scripts."

func refuse(format string, args ...any) *rules.Finding {
	return &rules.Finding{Code: codes.ShellCommand, Reason: fmt.Sprintf(format, args...), Remediation: remediation}
}

// judgeProgram judges one program name (as the shell will look it up)
// against the lists.
func (c *Check) judgeProgram(word string) *rules.Finding {
	name := word
	if i := strings.LastIndexByte(word, '/'); i >= 0 {
		name = word[i+1:]
		if name == "" {
			return refuse("a program name ends in '/'")
		}
		if c.allow != nil && !systemDir(word[:i]) {
			return refuse("a program is run by a path outside the system directories")
		}
	}
	lower := strings.ToLower(name)
	if c.deny[lower] {
		return refuse("program %q is denied by the policy", lower)
	}
	if alwaysRefused[lower] {
		return refuse("%q runs or redefines commands the check cannot see", lower)
	}
	if c.allow != nil && !c.allow[lower] {
		return refuse("a program that is not in the policy's programs")
	}
	return nil
}

// systemDir reports whether dir is one of the directories a program
// installed by the system lives in.
func systemDir(dir string) bool {
	switch dir {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		return true
	}
	return false
}

// alwaysRefused are builtins that run text as commands, change what a
// later name runs, or evaluate arithmetic on names (which runs $(...) in
// an array subscript): nothing about the line tells what they will do.
var alwaysRefused = map[string]bool{
	"eval": true, "source": true, ".": true, "alias": true, "unalias": true,
	"trap": true, "enable": true, "hash": true, "fc": true, "let": true,
	"declare": true, "typeset": true, "local": true, "export": true,
	"readonly": true, "shopt": true, "set": true, "mapfile": true, "readarray": true,
	"complete": true, "compgen": true, "bind": true, "coproc": true,
	"function": true, "unset": true, "read": true, "getopts": true,
}
