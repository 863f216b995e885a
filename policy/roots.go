package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RootWarnings says where the policy's path_scope roots and the server
// disagree, before the first call is refused for it: a root that does not
// exist (a typo, or ${HOME} expanded for another user), and a directory in
// the server's argv that no root covers (the server was given a directory
// the policy will refuse every path in). Each warning is one line.
func (p *Policy) RootWarnings(argv []string) []string {
	var warnings, all []string
	seen := map[string]bool{}
	for _, r := range p.ingress {
		for _, root := range r.roots {
			if seen[root] {
				continue
			}
			seen[root] = true
			all = append(all, root)
			if _, err := os.Stat(root); err != nil {
				warnings = append(warnings, "path_scope root "+root+" ("+r.rule+") does not exist; check the policy's roots")
			}
		}
	}
	follows := p.followsClient()
	if len(all) == 0 && !follows {
		return warnings
	}
	for _, d := range ServerDirs(argv) {
		switch {
		case follows && d.Abs == "/":
			warnings = append(warnings, "the server's argument "+d.Arg+" is /, which client_roots never makes a root; calls with paths in it will be refused")
		case follows:
			// client_roots: the server's directories are roots.
		case !coveredBy(d.Abs, all):
			warnings = append(warnings, "the server's argument "+d.Arg+" is a directory that no path_scope root covers; calls with paths in it will be refused, relative paths included (roots: "+strings.Join(all, ", ")+")")
		}
	}
	return warnings
}

// ArgDir is a word of a server's argv that names a directory: the word
// as written and the directory's absolute path.
type ArgDir struct{ Arg, Abs string }

// ArgDirs are the directories a server was given on its command line.
type ArgDirs []ArgDir

// ServerDirs is the one reader of the directories in a server's argv:
// path_scope reads relative paths against them (Session.SetServerArgv),
// RootWarnings checks the roots cover them, and `mcpguard init` and
// `mcpguard wrap --policy-dir` make them a starter's or a copied
// policy's roots. Sharing it means a policy wrap writes covers exactly
// the directories the relay judges the server by.
//
// A word after the command (or the value of a --flag=VALUE word) counts
// when it names an existing directory and reads as a path: it holds a
// '/' or is "." or "..". A bare word (`server`) and an npm @scope/name
// are taken for package or module names even when the working directory
// has a directory of that name, so `python -m server` does not make
// ./server a root. A word holding "${" is a client's placeholder
// (${workspaceFolder}) that only the client expands, and "~" is the
// shell's: neither is expanded here, so neither names a directory
// (unless one of that literal name exists, for "~/..."). A relative word
// is read against the working directory. Every word that counts is
// listed, duplicates included; Abs lists each directory once.
func ServerDirs(argv []string) ArgDirs {
	wd, err := os.Getwd()
	if err != nil {
		wd = ""
	}
	return ServerDirsIn(argv, wd)
}

// ServerDirsIn is ServerDirs for a server that will run in the directory
// base rather than in this process's working directory (an agent config's
// entry, run from its cwd or project): a relative word is read against
// base, and with base "" (the directory is not known until the agent
// starts the server) a relative word names no directory. Reading it
// against the directory `mcpguard wrap` happens to run in would make "."
// mean "/" when wrap runs from /.
func ServerDirsIn(argv []string, base string) ArgDirs {
	var dirs ArgDirs
	for i, arg := range argv {
		if i == 0 {
			continue
		}
		if strings.HasPrefix(arg, "-") {
			if eq := strings.IndexByte(arg, '='); eq > 0 {
				arg = arg[eq+1:] // --root=/dir
			} else {
				continue
			}
		}
		if arg == "" || strings.HasPrefix(arg, "@") || strings.Contains(arg, "${") ||
			!strings.ContainsRune(arg, '/') && arg != "." && arg != ".." {
			continue
		}
		dir := arg
		if !filepath.IsAbs(dir) {
			if base == "" || !filepath.IsAbs(base) {
				continue
			}
			dir = filepath.Join(base, dir)
		}
		dir = filepath.Clean(dir)
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			dirs = append(dirs, ArgDir{Arg: arg, Abs: dir})
		}
	}
	return dirs
}

// Abs lists the absolute path of each directory once, in argv order.
func (d ArgDirs) Abs() []string {
	var out []string
	for _, a := range d {
		if !slices.Contains(out, a.Abs) {
			out = append(out, a.Abs)
		}
	}
	return out
}

// coveredBy reports whether dir lies in one of roots, as written or with
// symlinks resolved on both sides.
func coveredBy(dir string, roots []string) bool {
	dirs := []string{filepath.Clean(dir)}
	if res, err := filepath.EvalSymlinks(dir); err == nil {
		dirs = append(dirs, res)
	}
	for _, root := range roots {
		rs := []string{filepath.Clean(root)}
		if res, err := filepath.EvalSymlinks(root); err == nil {
			rs = append(rs, res)
		}
		for _, d := range dirs {
			for _, r := range rs {
				if rel, err := filepath.Rel(r, d); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
					return true
				}
			}
		}
	}
	return false
}
