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
	if len(all) == 0 || len(argv) < 2 {
		return warnings
	}
	for _, arg := range argv[1:] {
		if strings.HasPrefix(arg, "-") {
			if i := strings.IndexByte(arg, '='); i > 0 {
				arg = arg[i+1:] // --root=/dir
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
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || coveredBy(dir, all) {
			continue
		}
		warnings = append(warnings, "the server's argument "+arg+" is a directory that no path_scope root covers; calls with paths in it will be refused (roots: "+strings.Join(all, ", ")+")")
	}
	return warnings
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
