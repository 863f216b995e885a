package policy

import (
	"os"
	"path/filepath"
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
	if len(all) == 0 {
		return warnings
	}
	for _, d := range argDirs(argv) {
		if !coveredBy(d.abs, all) {
			warnings = append(warnings, "the server's argument "+d.arg+" is a directory that no path_scope root covers; calls with paths in it will be refused, relative paths included (roots: "+strings.Join(all, ", ")+")")
		}
	}
	return warnings
}

// argDir is a word of the server's argv that names a directory.
type argDir struct{ arg, abs string }

// argDirs lists the words of the server's argv (after the command) that
// name an existing directory, also as --flag=/dir, with the absolute path
// of each: the directories the server was given. A bare word without '/'
// and @scope/name are taken for package names.
func argDirs(argv []string) []argDir {
	var dirs []argDir
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
		if arg == "" || strings.HasPrefix(arg, "@") || !strings.ContainsRune(arg, '/') && arg != "." && arg != ".." {
			continue // a bare word or @scope/name is more likely a package than a directory
		}
		dir, err := filepath.Abs(arg)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			dirs = append(dirs, argDir{arg: arg, abs: dir})
		}
	}
	return dirs
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
