package shellcmd

import (
	"strings"

	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// run judges one command as the shell will start it: the program, and
// then the program a wrapper among its arguments will start, down to the
// last one. Every program in the chain must pass.
func (r *reader) run(argv []field) *rules.Finding {
	if len(argv) == 0 {
		return nil
	}
	if !argv[0].known {
		return refuse("a program name that comes from a variable or arithmetic")
	}
	prog := argv[0].text
	if prog == "" {
		return refuse("an empty program name")
	}
	if f := r.c.judgeProgram(prog); f != nil {
		return f
	}
	name := strings.ToLower(prog[strings.LastIndexByte(prog, '/')+1:])
	args := argv[1:]
	if r.c.allow == nil && opaque[name] {
		return refuse("program %q runs commands the check cannot follow; list it in programs to allow it", name)
	}
	if f := unreadable(name, args); f != nil {
		return f
	}
	if w, ok := wrappers[name]; ok {
		return w(r, args)
	}
	return nil
}

// opaque run other programs with options, or in a syntax, the check does
// not follow. Without an allowlist they are refused: a denylist cannot see
// what they run. An allowlist that names one accepts it.
var opaque = map[string]bool{
	"busybox": true,
	"strace":  true, "ltrace": true, "gdb": true, "valgrind": true, "chroot": true,
	"unshare": true, "nsenter": true, "runuser": true, "setpriv": true, "ionice": true,
	"taskset": true, "chrt": true, "parallel": true, "expect": true, "tmux": true,
	"screen": true, "at": true, "batch": true, "crontab": true, "systemd-run": true,
	"ssh": true, "zsh": true, "fish": true, "csh": true, "tcsh": true, "ksh": true,
	"mksh": true, "pwsh": true, "powershell": true, "osascript": true,
}

// interpreter matches the programs that run code given as an argument or
// on standard input (see unreadable).
var interpreter = lazyregexp.New(`^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|wish|rscript|julia|irb|jshell|groovy|scala|ts-node|tsx)$`)

// awk matches the awk family, whose program text is always inline.
var awk = lazyregexp.New(`^[gmn]?awk$`)

// unreadable refuses what runs code the check cannot read, whatever the
// lists say: an interpreter given code inline (python -c, node -e,
// perl -ne) or on standard input (curl x | python3), and an awk program
// that runs commands or writes files. A script file (python3 app.py,
// node server.js) or a module run by name (python3 -m pytest) is the
// program the policy allowed.
func unreadable(name string, args []field) *rules.Finding {
	if awk().MatchString(name) {
		for _, a := range args {
			if !a.known || a.text == "-f" || strings.HasPrefix(a.text, "--file") ||
				strings.Contains(a.text, "system") || strings.Contains(a.text, "getline") ||
				strings.ContainsAny(a.text, "|>") {
				return refuse("an awk program that runs commands or writes files")
			}
		}
		return nil
	}
	if !interpreter().MatchString(name) {
		return nil
	}
	for i, a := range args {
		if !a.known {
			return refuse("an interpreter argument that comes from a variable")
		}
		t := a.text
		switch {
		case t == "--version" || t == "-v" || t == "-V" || t == "--help" || t == "-h":
			return nil
		case t == "-":
			return refuse("an interpreter reading code from standard input")
		case t == "--eval" || t == "--print" || t == "--command" || t == "eval" && i == 0:
			return refuse("an interpreter running code given inline")
		case len(t) > 1 && t[0] == '-' && t[1] != '-':
			if strings.ContainsAny(t[1:], "ceEpr") && !strings.HasPrefix(t, "-m") {
				return refuse("an interpreter running code given inline")
			}
			if t == "-m" {
				return nil
			}
		case strings.HasPrefix(t, "--"):
		default:
			return nil // a script or subcommand
		}
	}
	return refuse("an interpreter reading code from standard input")
}

// wrappers judge the program a wrapper runs from its arguments.
var wrappers map[string]func(r *reader, args []field) *rules.Finding

func init() {
	wrappers = map[string]func(r *reader, args []field) *rules.Finding{
		"sh": shell, "bash": shell, "dash": shell, "ash": shell, "rbash": shell,
		"env":     env,
		"command": command,
		"builtin": then(opts{}),
		"exec":    then(opts{flags: "cl", valued: "a"}),
		"nohup":   then(opts{}),
		"setsid":  then(opts{flags: "cfw", long: map[string]bool{"ctty": false, "fork": false, "wait": false}}),
		"nice":    then(opts{valued: "n", digits: true, long: map[string]bool{"adjustment": true}}),
		"timeout": after(1, opts{flags: "v", valued: "sk", long: map[string]bool{
			"signal": true, "kill-after": true, "preserve-status": false, "foreground": false, "verbose": false}}),
		"stdbuf": then(opts{valued: "ioe", long: map[string]bool{"input": true, "output": true, "error": true}}),
		"time": then(opts{flags: "pvaq", valued: "fo", long: map[string]bool{
			"format": true, "output": true, "append": false, "verbose": false, "portability": false, "quiet": false}}),
		"sudo": then(opts{flags: "AbEHnPSk", valued: "CDghpRrTUu", long: map[string]bool{
			"askpass": false, "background": false, "preserve-env": false, "set-home": false, "non-interactive": false,
			"preserve-groups": false, "stdin": false, "reset-timestamp": false, "close-from": true, "chdir": true,
			"group": true, "host": true, "prompt": true, "role": true, "type": true, "other-user": true, "user": true,
			"command-timeout": true}}),
		"doas":   then(opts{flags: "n", valued: "uC"}),
		"xargs":  xargs,
		"find":   find,
		"printf": printf,
		"su":     commandString("c", "command"),
		"script": commandString("c", "command"),
		"flock":  flock,
		"watch":  watch,
	}
}

// opts describes a wrapper's options: short flags, short options that
// take a value, and long options (true: takes a value). digits accepts
// -N (nice -10). An option the table does not know is refused: it might
// take a value, and the program would then be another word.
type opts struct {
	flags, valued string
	long          map[string]bool
	digits        bool
}

// skip returns the index of the first operand after the options, and the
// options seen (short letters, long names).
func (o opts) skip(args []field) (int, map[string]bool, *rules.Finding) {
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		if !args[i].known {
			return 0, nil, refuse("a wrapper's option comes from a variable")
		}
		a := args[i].text
		switch {
		case a == "--":
			return i + 1, seen, nil
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			takes, ok := o.long[name]
			if !ok {
				return 0, nil, refuse("a wrapper option the check does not know")
			}
			seen[name] = true
			if takes && !hasValue {
				i++
			}
		case len(a) > 1 && a[0] == '-':
			if o.digits && isDigits(a[1:]) {
				continue
			}
			for j := 1; j < len(a); j++ {
				ch := a[j]
				seen[string(ch)] = true
				if strings.IndexByte(o.valued, ch) >= 0 {
					if j == len(a)-1 {
						i++
					}
					break
				}
				if strings.IndexByte(o.flags, ch) < 0 {
					return 0, nil, refuse("a wrapper option the check does not know")
				}
			}
		default:
			return i, seen, nil
		}
	}
	return len(args), seen, nil
}

// then is a wrapper whose program follows its options.
func then(o opts) func(*reader, []field) *rules.Finding {
	return after(0, o)
}

// after is a wrapper whose program follows its options and n operands
// (timeout DURATION).
func after(n int, o opts) func(*reader, []field) *rules.Finding {
	return func(r *reader, args []field) *rules.Finding {
		i, _, f := o.skip(args)
		if f != nil {
			return f
		}
		i += n
		if i >= len(args) {
			return nil
		}
		return r.run(args[i:])
	}
}

var shellOpts = opts{flags: "abefhkmnptuvxBCEHPTcilrsD", valued: "oO", long: map[string]bool{
	"norc": false, "noprofile": false, "posix": false, "login": false, "restricted": false,
	"verbose": false, "noediting": false, "debugger": false, "rcfile": true, "init-file": true,
}}

// shell reads the string of sh -c / bash -c as a command line; a shell
// that would read a script file or standard input runs what the check
// cannot see.
func shell(r *reader, args []field) *rules.Finding {
	// +o name and +O name are options too.
	var plain []field
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.known && (a.text == "+o" || a.text == "+O") {
			i++
			continue
		}
		if a.known && strings.HasPrefix(a.text, "+") {
			continue
		}
		plain = append(plain, a)
	}
	i, seen, f := shellOpts.skip(plain)
	if f != nil {
		return f
	}
	if !seen["c"] {
		if i < len(plain) {
			return refuse("a shell running a script file the check cannot read")
		}
		return refuse("a shell reading commands from standard input")
	}
	if i >= len(plain) {
		return refuse("sh -c without a command string")
	}
	if !plain[i].known {
		return refuse("a shell command string that comes from a variable")
	}
	return r.nested(plain[i].text)
}

// nested judges a command string a program hands to a shell.
func (r *reader) nested(src string) *rules.Finding {
	for _, d := range dialects {
		inner := &reader{c: r.c, d: d, depth: r.depth + 1}
		if f := inner.line(src); f != nil {
			return f
		}
	}
	return nil
}

// env: options, then NAME=VALUE assignments (judged like the shell's),
// then the program; -S splits a string with rules of its own.
func env(r *reader, args []field) *rules.Finding {
	i, _, f := opts{flags: "i0v", valued: "uCP", long: map[string]bool{
		"ignore-environment": false, "null": false, "unset": true, "chdir": true, "debug": false,
		"default-signal": false, "ignore-signal": false, "block-signal": false, "list-signal-handling": false,
	}}.skip(args)
	if f != nil {
		return f
	}
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			return refuse("an env operand that comes from a variable")
		}
		if a.text == "-" {
			continue
		}
		name, _, ok := strings.Cut(a.text, "=")
		if !ok {
			return r.run(args[i:])
		}
		if !r.c.env[name] {
			return refuse("an assignment to a variable the policy's env does not list")
		}
	}
	return nil
}

// command -v and -V only describe a name; otherwise the name runs.
func command(r *reader, args []field) *rules.Finding {
	i, seen, f := opts{flags: "pvV"}.skip(args)
	if f != nil {
		return f
	}
	if seen["v"] || seen["V"] || i >= len(args) {
		return nil
	}
	return r.run(args[i:])
}

// printf -v assigns to a name, and a name with a subscript is arithmetic.
func printf(r *reader, args []field) *rules.Finding {
	if len(args) > 0 && (!args[0].known || strings.HasPrefix(args[0].text, "-v")) {
		return refuse("printf -v evaluates a variable name the check cannot follow")
	}
	return nil
}

// xargs runs its program (echo by default) with words read from standard
// input appended.
func xargs(r *reader, args []field) *rules.Finding {
	i, _, f := opts{flags: "0rtpxie", valued: "aEdILnPs", long: map[string]bool{
		"null": false, "no-run-if-empty": false, "verbose": false, "interactive": false, "exit": false,
		"arg-file": true, "delimiter": true, "eof": false, "replace": false, "max-lines": false,
		"max-args": true, "max-procs": true, "max-chars": true, "process-slot-var": true,
		"open-tty": false, "show-limits": false,
	}}.skip(args)
	if f != nil {
		return f
	}
	if i >= len(args) {
		return r.run([]field{{text: "echo", known: true}})
	}
	return r.run(args[i:])
}

// find runs the commands of -exec, -execdir, -ok and -okdir; -delete
// removes files as rm does, and -fprint and -fls write files.
func find(r *reader, args []field) *rules.Finding {
	for i := 0; i < len(args); i++ {
		if !args[i].known {
			continue
		}
		switch args[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].known && (args[j].text == ";" || args[j].text == "+")) {
				j++
			}
			if j == i+1 {
				return refuse("find -exec without a command")
			}
			if f := r.run(args[i+1 : j]); f != nil {
				return f
			}
			i = j
		case "-delete":
			if f := r.run([]field{{text: "rm", known: true}}); f != nil {
				return f
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if f := r.need(Redirects, "find writing a file"); f != nil {
				return f
			}
		}
	}
	return nil
}

// commandString is a program that runs -c STRING with a shell (su,
// script); without it, it starts an interactive shell.
func commandString(short, long string) func(*reader, []field) *rules.Finding {
	return func(r *reader, args []field) *rules.Finding {
		for i, a := range args {
			if !a.known {
				return refuse("an argument that comes from a variable")
			}
			if (a.text == "-"+short || a.text == "--"+long) && i+1 < len(args) {
				if !args[i+1].known {
					return refuse("a shell command string that comes from a variable")
				}
				return r.nested(args[i+1].text)
			}
			if strings.HasPrefix(a.text, "-"+short) || strings.HasPrefix(a.text, "--"+long+"=") {
				return refuse("a command string spelt in a way the check does not read")
			}
		}
		return refuse("a program that starts a shell")
	}
}

// flock FILE PROGRAM ARGS, or flock FILE -c STRING.
func flock(r *reader, args []field) *rules.Finding {
	o := opts{flags: "snxuoFeE", valued: "wEc", long: map[string]bool{
		"shared": false, "exclusive": false, "unlock": false, "nonblock": false, "close": false,
		"no-fork": false, "timeout": true, "conflict-exit-code": true, "verbose": false}}
	i, _, f := o.skip(args)
	if f != nil {
		return f
	}
	if i+1 >= len(args) {
		return nil
	}
	rest := args[i+1:]
	if rest[0].known && (rest[0].text == "-c" || rest[0].text == "--command") {
		if len(rest) < 2 || !rest[1].known {
			return refuse("a shell command string that comes from a variable")
		}
		return r.nested(rest[1].text)
	}
	return r.run(rest)
}

// watch joins its operands with spaces and runs them with sh -c.
func watch(r *reader, args []field) *rules.Finding {
	i, seen, f := opts{flags: "bcegtwpx", valued: "dnq", long: map[string]bool{
		"beep": false, "color": false, "no-color": false, "errexit": false, "chgexit": false,
		"no-title": false, "no-wrap": false, "precise": false, "exec": false, "differences": false,
		"interval": true, "equexit": true, "no-linewrap": false}}.skip(args)
	if f != nil {
		return f
	}
	if i >= len(args) {
		return nil
	}
	if seen["x"] || seen["exec"] {
		return r.run(args[i:])
	}
	words := make([]string, 0, len(args)-i)
	for _, a := range args[i:] {
		if !a.known {
			return refuse("a watched command that comes from a variable")
		}
		words = append(words, a.text)
	}
	return r.nested(strings.Join(words, " "))
}
