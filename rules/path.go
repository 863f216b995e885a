package rules

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"
)

// PathScope rejects a path that is, or that the server may read as, outside
// every allowed root. It stops path traversal (CWE-22) in the forms a server
// or the libraries under it may decode:
//
//   - ".." that climbs out after cleaning (../../etc, sub/../../x);
//   - sibling-prefix names: /root_x is not inside /root. Containment compares
//     whole path components, never string prefixes. CVE-2025-53110 in
//     @modelcontextprotocol/server-filesystem;
//   - symbolic links that lead out, CVE-2025-53109 in the same server: the
//     path is resolved component by component as the kernel would (a link
//     followed before a ".." after it, dangling links followed to where a
//     write would create the file), up to the deepest existing ancestor; the
//     components that do not exist yet are applied lexically, so files and
//     directories about to be created pass when they land inside a root;
//   - file: URIs (file:///x, file://localhost/x, file:/x), decoded; a
//     file: URI with another host is a UNC path and rejected;
//   - "~" and "~/x", expanded with the home directory of the mcpguard
//     process (os.UserHomeDir); "~user" is rejected, since only the server
//     knows whose home that is;
//   - "$": any '$' is rejected, since the server or a shell under it may
//     expand $VAR and ${VAR} to anything; this is simpler and safer than
//     guessing which variables are set;
//   - percent-encoding (%2e%2e/): the value is checked both as written and
//     decoded once, and a value that a second decode would change again
//     (%252e) is rejected;
//   - backslashes: a Windows server reads '\' as a separator (..\..\x), so
//     any '\' is rejected; drive letters (C:\x, C:/x, C:x), UNC paths
//     (\\host\share, //host/share) and URIs with another scheme are rejected;
//   - fullwidth and other compatibility forms that NFKC folds to '.', '/' or
//     '\' (．．／), checked as folded too;
//   - NUL bytes, the empty string, bytes that are not UTF-8, and paths longer
//     than 4096 bytes.
//
// A relative path is read relative to the first root, which is where the
// server is expected to run. Roots are resolved when the check is built,
// and a path may lie inside a root as written or inside its resolved form.
//
// Race: the check resolves symlinks when it runs, and the server opens the
// path later. Whoever can create or swap a symlink inside a root between the
// two (time-of-check to time-of-use) can still lead the server out. Run the
// server on a tree that the agent and other untrusted processes cannot write
// symlinks into, or have the server itself refuse links (openat2 with
// RESOLVE_BENEATH or O_NOFOLLOW on every component), or confine it with a
// mount namespace or container that only holds the roots.
type PathScope struct {
	first string   // the first root, cleaned: relative paths are read against it
	roots []string // every root cleaned, plus its resolved form when that differs
	real  []string // the resolved roots: paths known to hold no symlink
	home  string   // home directory of this process, cleaned; "" if unknown
}

const (
	maxPathLen      = 4096
	maxLinks        = 40
	pathRemediation = "Pass a path inside the allowed roots, as a plain absolute path or relative to the first root, without .., $, ~user, backslashes or percent-encoding."
)

// NewPathScope returns a check for the given roots, which must be absolute
// (and already have ${VAR} expanded). Each root counts both as written and
// with its symlinks resolved.
func NewPathScope(roots []string) (*PathScope, error) {
	if len(roots) == 0 {
		return nil, errors.New("path_scope needs at least one root")
	}
	p := &PathScope{}
	for _, r := range roots {
		if !utf8.ValidString(r) || strings.IndexByte(r, 0) >= 0 || !filepath.IsAbs(r) {
			return nil, fmt.Errorf("root %q is not an absolute path", r)
		}
		c := filepath.Clean(r)
		if p.first == "" {
			p.first = c
		}
		p.addRoot(c)
		if res, err := resolve(c); err == nil {
			p.addRoot(res)
			if !slices.Contains(p.real, res) {
				p.real = append(p.real, res)
			}
		}
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		p.home = filepath.Clean(home)
	}
	return p, nil
}

func (p *PathScope) addRoot(r string) {
	for _, have := range p.roots {
		if have == r {
			return
		}
	}
	p.roots = append(p.roots, r)
}

// Check rejects value unless every way the server may read it lies inside
// a root.
func (p *PathScope) Check(value string) *Finding {
	if value == "" {
		return pathFinding("path is empty")
	}
	if len(value) > maxPathLen {
		return pathFinding("path is too long")
	}
	return p.checkReadings(value, true)
}

// checkReadings checks s as written, percent-decoded once (if decode), and
// with compatibility forms folded to ASCII.
func (p *PathScope) checkReadings(s string, decode bool) *Finding {
	readings := make([]string, 1, 4)
	readings[0] = s
	if decode {
		if once := percentDecode(s); once != s {
			if percentDecode(once) != once {
				return pathFinding("path is percent-encoded more than once")
			}
			readings = append(readings, once)
		}
	}
	for _, r := range readings {
		if folded := foldPathCompat(r); folded != r {
			readings = append(readings, folded)
		}
	}
	for _, r := range readings {
		if f := p.checkOne(r); f != nil {
			return f
		}
	}
	return nil
}

// checkOne checks one reading of the path.
func (p *PathScope) checkOne(s string) *Finding {
	switch {
	case s == "":
		return pathFinding("path is empty")
	case !utf8.ValidString(s):
		return pathFinding("path is not valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return pathFinding("path contains a NUL byte")
	case strings.IndexByte(s, '$') >= 0:
		return pathFinding("path contains $, which the server may expand as a variable")
	case strings.IndexByte(s, '\\') >= 0:
		return pathFinding("path contains a backslash, which a Windows server reads as a separator")
	case hasScheme(s):
		if len(s) >= 5 && strings.EqualFold(s[:5], "file:") {
			return p.checkFileURI(s[5:])
		}
		return pathFinding("drive-letter paths and URIs other than file: are not allowed")
	case strings.HasPrefix(s, "//"):
		return pathFinding("UNC paths (two leading slashes or backslashes) are not allowed")
	case s[0] == '~':
		if s != "~" && !strings.HasPrefix(s, "~/") {
			return pathFinding("~user paths are not allowed")
		}
		if p.home == "" {
			return pathFinding("~ cannot be expanded: the home directory is unknown")
		}
		if f := p.contain(p.home + s[1:]); f != nil {
			return f
		}
		// A server that does not expand ~ reads it as a relative name.
	}
	abs := s
	if !filepath.IsAbs(abs) {
		abs = p.first + "/" + s
	}
	return p.contain(abs)
}

// checkFileURI checks what follows "file:".
func (p *PathScope) checkFileURI(rest string) *Finding {
	if strings.ContainsAny(rest, "?#") {
		return pathFinding("file: URI with a query or fragment is not allowed")
	}
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		host, path, found := strings.Cut(after, "/")
		if !found {
			return pathFinding("file: URI without a path")
		}
		if host != "" && !strings.EqualFold(host, "localhost") {
			return pathFinding("file: URI with a host (a UNC path) is not allowed")
		}
		rest = "/" + path
	}
	if !strings.HasPrefix(rest, "/") {
		return pathFinding("file: URI with a relative path is not allowed")
	}
	path := percentDecode(rest)
	if percentDecode(path) != path {
		return pathFinding("path is percent-encoded more than once")
	}
	if len(path) >= 3 && path[2] == ':' && isAlpha(path[1]) {
		return pathFinding("drive-letter paths and URIs other than file: are not allowed")
	}
	return p.checkReadings(path, false)
}

// contain checks an absolute path both lexically (as a server that cleans
// paths before opening them reads it) and as the kernel resolves it.
func (p *PathScope) contain(abs string) *Finding {
	if !p.inside(filepath.Clean(abs)) {
		return pathFinding("path is outside the allowed roots")
	}
	res, err := p.resolveUnder(abs)
	if err != nil {
		return pathFinding("path could not be resolved")
	}
	if !p.inside(res) {
		return pathFinding("path is outside the allowed roots through a symbolic link")
	}
	return nil
}

// inside reports whether the clean absolute path c is a root or lies under
// one, comparing whole components: /root_x is not under /root.
func (p *PathScope) inside(c string) bool {
	for _, r := range p.roots {
		if r == "/" || c == r || strings.HasPrefix(c, r) && c[len(r)] == '/' {
			return true
		}
	}
	return false
}

func pathFinding(reason string) *Finding {
	return reject(CodePathScope, reason, pathRemediation)
}

var errTooManyLinks = errors.New("too many levels of symbolic links")

// resolveUnder is resolve, started at a resolved root when abs is written
// under one: the root's own components were resolved when the check was
// built, and skipping them saves one lstat(2) each on every call. (A root
// swapped for a symlink after that is the race documented on PathScope.)
func (p *PathScope) resolveUnder(abs string) (string, error) {
	for _, r := range p.real {
		if r != "/" && strings.HasPrefix(abs, r) && len(abs) > len(r) && abs[len(r)] == '/' {
			return resolveFrom(r, abs[len(r)+1:])
		}
	}
	return resolve(abs)
}

// resolve returns the absolute path abs as the kernel would resolve it:
// component by component, each symlink replaced by its target before the
// components after it (".." included) apply. A component that does not
// exist, and everything after it, is applied lexically, so a dangling link
// resolves to where a write through it would land.
func resolve(abs string) (string, error) { return resolveFrom("/", abs) }

// resolveFrom resolves the relative path rest against dst, which holds no
// symlink.
func resolveFrom(dst, rest string) (string, error) {
	links := 0
	missing := false // a component did not exist: nothing below it can
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			dst = filepath.Dir(dst)
			continue
		}
		next := filepath.Join(dst, c)
		if missing {
			dst = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return "", errTooManyLinks
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			if filepath.IsAbs(target) {
				dst = "/"
			}
			rest = target + "/" + rest
		case err == nil:
			dst = next
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			dst, missing = next, true
		default:
			return "", err
		}
	}
	return dst, nil
}

// percentDecode decodes every %XX escape once and leaves any other '%' as it
// is, as a lenient server would.
func percentDecode(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// foldPathCompat folds the compatibility forms that NFKC turns into path
// syntax: fullwidth ．／＼, small forms, and the dot leaders (U+2025 is "..").
func foldPathCompat(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch r {
		case 0x2025:
			b.WriteString("..")
		case 0x2026:
			b.WriteString("...")
		default:
			b.WriteRune(compatASCII(r))
		}
	}
	return b.String()
}

// hasScheme reports whether s starts with a URI scheme and ':' ("file:",
// "http:"), which includes drive letters ("C:").
func hasScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return true
		case isAlnum(c) || c == '+' || c == '-' || c == '.':
		default:
			return false
		}
	}
	return false
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
