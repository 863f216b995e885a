package shellcmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// bashPrelude makes bash report, instead of running, every program a
// line starts: PATH finds nothing, so each command name reaches
// command_not_found_handle with the argv bash expanded; builtins are
// disabled so that they do too; restricted mode refuses (and names) a
// program given by a path and refuses output redirections to files, so
// nothing on the disk is run or written. One printf per record keeps the
// stages of a pipeline from interleaving.
const bashPrelude = `command_not_found_handle() { printf '%s\x1d' "$(printf '\x1e%s' "$@")" >&3; return 1; }
for b in $(compgen -b); do case $b in printf|return|set|enable) ;; *) enable -n "$b" ;; esac; done
set -r
`

var restrictedName = regexp.MustCompile(`(?m)^bash: line \d+: (.*): restricted: cannot specify`)

// bashRuns returns the argv of each program bash would start for line:
// whole for those looked up in PATH, the name alone for paths.
func bashRuns(t *testing.T, bash, line string) [][]string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", bashPrelude+line)
	cmd.Env = []string{"LC_ALL=C", "PATH=/nonexistent", "HOME=/~"}
	cmd.Dir = t.TempDir() // globs match nothing
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.ReadFrom(r)
	if cmd.Wait(); ctx.Err() != nil {
		t.Fatalf("%q: bash did not finish", line)
	}
	var runs [][]string
	for rec := range strings.SplitSeq(out.String(), "\x1d") {
		if rec == "" {
			continue
		}
		runs = append(runs, strings.Split(strings.TrimPrefix(rec, "\x1e"), "\x1e"))
	}
	for _, m := range restrictedName.FindAllStringSubmatch(stderr.String(), -1) {
		runs = append(runs, []string{m[1]})
	}
	return runs
}

// TestBashRunsWhatTheCheckJudged runs every line of both corpora that a
// check with no lists passes through the real bash, and requires that
// every program bash starts, with its arguments, is one the check
// judged: the check's reading of words, quotes, escapes, ANSI-C strings,
// braces and lists is bash's.
func TestBashRunsWhatTheCheckJudged(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to compare the check's reading with the shell's:", err)
	}
	open, err := New(Options{Syntax: allSyntax})
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, line := range append(corpus(t, "ordinary.txt"), corpus(t, "obfuscations.txt")...) {
		var judged [][]string
		r := &reader{c: open, d: dialects[0], seen: func(argv []field) {
			var words []string
			for _, f := range argv {
				words = append(words, f.text)
			}
			judged = append(judged, words)
		}}
		if r.line(line) != nil {
			continue
		}
		compared++
		for _, run := range bashRuns(t, bash, line) {
			ok := slices.ContainsFunc(judged, func(j []string) bool {
				if len(run) == 1 && strings.Contains(run[0], "/") {
					return len(j) > 0 && j[0] == run[0]
				}
				return slices.Equal(j, run)
			})
			if !ok {
				t.Errorf("%q: bash runs %q, the check judged %q", line, run, judged)
			}
		}
	}
	if compared < 100 {
		t.Errorf("compared %d lines with bash, want at least 100", compared)
	}
}
