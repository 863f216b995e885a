package rules

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// PathScope rejects a path that is, or that the server may read as, outside
// every allowed root. It stops path traversal (CWE-22) by judging every
// reading a server, or a library under it, may give the value; each must
// lie inside a root:
//
//   - the kernel's walk: component by component, a symlink replaced by its
//     target before the components after it (".." included) apply;
//   - the lexically cleaned path (what path.resolve, filepath.Clean and
//     os.path.abspath give) walked again through its symlinks. The two
//     differ after a symlink: outlink/.. is the link's parent to the kernel
//     and the directory holding outlink to a cleaning server;
//   - both walks go on past a component that does not exist (or a regular
//     file used as a directory): it is taken as a directory about to be
//     created (mkdir -p), so missing/../outlink/x is judged through outlink.
//     Files and directories about to be created pass when they land inside
//     a root;
//   - a name that does not exist but equals an existing entry of its
//     directory under Unicode canonical equivalence (NFC: "é" as e and
//     U+0301, "K" and the Kelvin sign U+212A) is that entry:
//     server-filesystem maps such a spelling onto the entry, and macOS file
//     systems do so natively. Two such entries make the name ambiguous, and
//     it is rejected;
//   - the NFKC form of the value, a reading for a server that normalises
//     its input; and a component whose NFKC form is "." or ".." or holds a
//     separator is rejected outright: U+FF0E FULLWIDTH FULL STOP, U+FE52
//     SMALL FULL STOP and U+2024 ONE DOT LEADER fold to "."; U+2025 TWO DOT
//     LEADER and U+FE30 PRESENTATION FORM FOR VERTICAL TWO DOT LEADER to "..";
//     U+FF0F FULLWIDTH SOLIDUS to "/"; U+FF3C FULLWIDTH REVERSE SOLIDUS and
//     U+FE68 SMALL REVERSE SOLIDUS to "\". No file name needs them;
//   - percent-encoding (%2e%2e/): the value is judged as written and decoded
//     once, and a value that a second decode would change again (%252e) is
//     rejected;
//   - variables: $NAME and ${NAME} are judged both as written (Node does
//     not expand them, Python's os.path.expandvars keeps unset ones) and
//     expanded (a shell or expandvars: the value in mcpguard's environment,
//     which the server inherits, else empty). So Foo$Bar.class and
//     src/$lib/utils.ts pass, while $HOME/x passes only when the home
//     directory is inside a root, and sub/$UNSET/../../x (sub//../../x to a
//     shell) is rejected. $( and ${ with an operator (${X:-/etc}) are
//     rejected: their reading is a command's output or a computed string;
//   - "~" and "~/x", judged expanded with the home directory of the
//     mcpguard process and as a plain relative name. "~name" is rejected
//     when name is a user on this system (~root/.ssh is /root/.ssh to
//     Python's expanduser and to a shell) and otherwise is a plain name:
//     ~notes.txt passes. ~+, ~- and ~N (a shell's working directory,
//     previous directory, directory stack) are rejected;
//   - file: URIs (file:///x, file://localhost/x, file:/x), decoded; a file:
//     URI with another host is a UNC path and rejected;
//   - the value with white space trimmed from its ends (JavaScript's
//     trim, Python's strip) and one quote dropped from either end
//     (server-filesystem's normalisation);
//   - Windows readings: a component of dots and spaces with a space
//     (".. ", ". .") is rejected, since Windows drops trailing dots and
//     spaces;
//     any '\' is rejected (a Windows server reads it as a
//     separator: ..\..\x), and so are drive letters (C:\x, C:/x, C:x), UNC
//     paths (//host/share) and URIs with an authority or an absolute path
//     (smb://host/x, http:/x). Any other ':' is an ordinary character:
//     backup-2024-01-01T10:00.txt and std::vector.md pass;
//   - sibling-prefix names: /root_x is not inside /root. Containment
//     compares whole path components, never string prefixes.
//     CVE-2025-53110 in @modelcontextprotocol/server-filesystem; symlinks
//     that lead out are CVE-2025-53109 in the same server;
//   - NUL bytes, the empty string, bytes that are not UTF-8, and paths
//     longer than 4096 bytes.
//
// Characters that change no reading pass: '$' before anything but a name,
// '{' or '(', ':' after the first component's first letter, '~' after the
// first byte, spaces, and every letter and joiner of every script
// (control_chars is the check for invisible characters).
//
// A relative path is read by server-filesystem against each of its allowed
// directories in turn, and those are the client's roots/list answer when
// there is one. It is judged against every root of the check and every
// extra base the caller passes (CheckFrom: the client's roots), and it must
// not climb above its base at any point (sub/../../root/x is rejected even
// though it comes back), so that no base below a root can lead it out.
//
// Roots are resolved when the check is built, and a path may lie inside a
// root as written or inside its resolved form.
//
// Race: the check resolves symlinks when it runs, and the server opens the
// path later. Whoever can create or swap a symlink inside a root between the
// two (time-of-check to time-of-use) can still lead the server out. Run the
// server on a tree that the agent and other untrusted processes cannot write
// symlinks into, or have the server itself refuse links (openat2 with
// RESOLVE_BENEATH or O_NOFOLLOW on every component), or confine it with a
// mount namespace or container that only holds the roots.
type PathScope struct {
	bases []string // every root cleaned as written: relative paths are read against each
	roots []string // every root cleaned, plus its resolved form when that differs
	real  []string // the resolved roots: paths known to hold no symlink
	home  string   // home directory of this process, cleaned; "" if unknown
	own   []string // files refused inside the roots too (Protect), as written and resolved
}

const (
	maxPathLen      = 4096
	maxLinks        = 40
	maxReadings     = 32
	pathRemediation = "Pass a path inside the allowed roots, as a plain absolute path or relative to a root, without .. that leaves it, ${...} expressions, ~user, backslashes or percent-encoding."
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
		if !slices.Contains(p.bases, c) {
			p.bases = append(p.bases, c)
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
	if !slices.Contains(p.roots, r) {
		p.roots = append(p.roots, r)
	}
}

// Protect refuses paths inside the roots: mcpguard's own policy and lock
// files. An injected agent that can write files through the server it
// guards would otherwise rewrite the policy that guards it, in force from
// the next start or SIGHUP. Each path counts as written (made absolute
// against the working directory) and with its symlinks resolved; a path
// the server may read as one of them, through any spelling Check knows,
// is refused. Call it before the check is used.
func (p *PathScope) Protect(paths ...string) {
	for _, f := range paths {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		for _, c := range []string{abs, ""} {
			if c == "" {
				if c, err = resolve(abs); err != nil {
					break
				}
			}
			if !slices.Contains(p.own, c) {
				p.own = append(p.own, c)
			}
		}
	}
}

// owned reports whether the clean absolute path c is a protected file or
// lies under one.
func (p *PathScope) owned(c string) bool {
	for _, f := range p.own {
		if c == f || strings.HasPrefix(c, f) && c[len(f)] == '/' {
			return true
		}
	}
	return false
}

// Contains reports whether the clean absolute path c is a root, or lies
// under one (as written or resolved), and resolves inside one too.
func (p *PathScope) Contains(c string) bool {
	return filepath.IsAbs(c) && p.contain(filepath.Clean(c)) == nil
}

// Check rejects value unless every way the server may read it lies inside
// a root.
func (p *PathScope) Check(value string) *Finding { return p.CheckFrom(value, nil) }

// CheckFrom is Check with more bases a relative path may be read against
// (the directories a client named in its roots/list answer).
func (p *PathScope) CheckFrom(value string, bases []string) *Finding {
	switch {
	case value == "":
		return pathFinding("path is empty")
	case len(value) > maxPathLen:
		return pathFinding("path is too long")
	case !utf8.ValidString(value):
		return pathFinding("path is not valid UTF-8")
	}
	return p.checkReadings(value, true, bases)
}

// checkReadings judges s as written, percent-decoded once (if decode),
// NFKC-normalised, and with variables expanded.
func (p *PathScope) checkReadings(s string, decode bool, bases []string) *Finding {
	var buf [maxReadings]string
	readings := append(buf[:0], s)
	overflow := false
	add := func(r string) {
		switch {
		case slices.Contains(readings, r):
		case len(readings) == maxReadings:
			overflow = true
		default:
			readings = append(readings, r)
		}
	}
	if decode {
		if once := percentDecode(s); once != s {
			if percentDecode(once) != once {
				return pathFinding("path is percent-encoded more than once")
			}
			add(once)
		}
	}
	for i, n := 0, len(readings); i < n; i++ {
		// JavaScript's trim, Python's strip, and server-filesystem's
		// normalisation, which also drops one quote at either end.
		t := strings.TrimFunc(readings[i], isTrimmed)
		add(t)
		t = strings.TrimPrefix(t, `"`)
		t = strings.TrimPrefix(t, "'")
		t = strings.TrimSuffix(t, `"`)
		add(strings.TrimSuffix(t, "'"))
	}
	for i := 0; i < len(readings); i++ {
		if !isASCII(readings[i]) {
			add(norm.NFKC.String(readings[i]))
		}
	}
	for i := 0; i < len(readings); i++ {
		if strings.IndexByte(readings[i], '$') < 0 {
			continue
		}
		exp, f := expandVars(readings[i])
		if f != nil {
			return f
		}
		add(exp)
	}
	if overflow {
		return pathFinding("path has more readings than can be judged")
	}
	for _, r := range readings {
		if f := p.checkOne(r, bases); f != nil {
			return f
		}
	}
	return nil
}

// isTrimmed reports whether r is dropped from the ends of a string by
// JavaScript's trim (white space, line terminators, U+FEFF) or Python's
// strip (white space, the information separators).
func isTrimmed(r rune) bool { return unicode.IsSpace(r) || r == 0xFEFF || r >= 0x1C && r <= 0x1F }

// checkOne checks one reading of the path.
func (p *PathScope) checkOne(s string, bases []string) *Finding {
	switch {
	case s == "":
		return nil // a variable that expands to nothing: the other readings judge the rest
	case !utf8.ValidString(s):
		return pathFinding("path is not valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return pathFinding("path contains a NUL byte")
	case strings.IndexByte(s, '\\') >= 0:
		return pathFinding("path contains a backslash, which a Windows server reads as a separator")
	case len(s) >= 5 && strings.EqualFold(s[:5], "file:"):
		return p.checkFileURI(s[5:], bases)
	case isDriveLetter(s):
		return pathFinding("drive-letter paths are not allowed")
	case hasURIScheme(s):
		return pathFinding("URIs other than file: are not allowed")
	case strings.HasPrefix(s, "//"):
		return pathFinding("UNC paths (two leading slashes or backslashes) are not allowed")
	}
	if f := compatComponents(s); f != nil {
		return f
	}
	for c := range strings.SplitSeq(s, "/") {
		if dotsAndSpaces(c) {
			return pathFinding("path has a component of dots and spaces, which Windows reads as . or ..")
		}
	}
	if s[0] == '~' {
		name, _, _ := strings.Cut(s[1:], "/")
		switch {
		case name != "" && strings.TrimLeft(strings.TrimLeft(name, "+-"), "0123456789") == "":
			// ~+ ~- ~N ~+N ~-N: a shell's working directory, previous
			// one, or directory stack entry.
			return pathFinding("~+ and ~- paths are not allowed")
		case name != "":
			if _, err := user.Lookup(name); err == nil {
				return pathFinding("~user paths are not allowed")
			}
			// No such user: every reading is a plain relative name.
		case p.home == "":
			return pathFinding("~ cannot be expanded: the home directory is unknown")
		default:
			if f := p.contain(p.home + s[1:]); f != nil {
				return f
			}
			// A server that does not expand ~ reads it as a relative name.
		}
	}
	if filepath.IsAbs(s) {
		return p.contain(s)
	}
	if climbsAbove(s) {
		return pathFinding("relative path climbs above the directory it is read from")
	}
	for _, b := range p.bases {
		if f := p.contain(b + "/" + s); f != nil {
			return f
		}
	}
	for _, b := range bases {
		if f := p.contain(b + "/" + s); f != nil {
			return f
		}
	}
	return nil
}

// checkFileURI checks what follows "file:".
func (p *PathScope) checkFileURI(rest string, bases []string) *Finding {
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
	if isDriveLetter(path[1:]) {
		return pathFinding("drive-letter paths are not allowed")
	}
	return p.checkReadings(path, false, bases)
}

// contain checks an absolute path under its three readings: lexically
// cleaned, walked as the kernel walks it, and cleaned then walked.
func (p *PathScope) contain(abs string) *Finding {
	clean := filepath.Clean(abs)
	if !p.inside(clean) {
		return pathFinding("path is outside the allowed roots")
	}
	if p.owned(clean) {
		return ownFinding
	}
	// Without a ".." the two walks meet the same components.
	hasDotDot := strings.Contains(abs, "..")
	for k, r := range [2]string{abs, clean} {
		if k == 1 && (!hasDotDot || r == abs) {
			break
		}
		res, err := p.resolveUnder(r)
		switch {
		case err == errTooManyLinks, err == errAmbiguous:
			return pathFinding("path could not be resolved: " + err.Error())
		case err != nil:
			return pathFinding("path could not be resolved") // err names the path
		}
		if !p.inside(res) {
			return pathFinding("path is outside the allowed roots through a symbolic link")
		}
		if p.owned(res) {
			return ownFinding
		}
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

// ownFinding refuses a path Protect names.
var ownFinding = reject(codes.PathScope, "path is one of mcpguard's own files (its policy or lock file): an agent that could write it could change what mcpguard allows",
	"Leave mcpguard's policy and lock files to the user; edit them outside the agent.")

func pathFinding(reason string) *Finding {
	return reject(codes.PathScope, reason, pathRemediation)
}

var (
	errTooManyLinks = errors.New("too many levels of symbolic links")
	errAmbiguous    = errors.New("a name matches two entries under Unicode normalisation")
)

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
// exist is taken as a directory about to be created: the components after
// it apply to it, and a ".." that leaves it walks on from its (existing)
// parent, through whatever symlinks are there. A dangling link resolves to
// where a write through it would land.
func resolve(abs string) (string, error) { return resolveFrom("/", abs) }

// resolveFrom resolves the relative path rest against dst, which holds no
// symlink.
func resolveFrom(dst, rest string) (string, error) {
	links := 0
	created := 0 // how many trailing components of dst do not exist yet
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			dst = filepath.Dir(dst)
			if created > 0 {
				created--
			}
			continue
		}
		next := filepath.Join(dst, c)
		if created > 0 {
			dst = next
			created++
			continue
		}
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) && mayHaveEquivalent(c) {
			// A server may map the name onto an entry it equals under
			// Unicode normalisation.
			alt, aerr := equivalentEntry(dst, c)
			if aerr != nil {
				return "", aerr
			}
			if alt != "" {
				next = filepath.Join(dst, alt)
				fi, err = os.Lstat(next)
			}
		}
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
			dst, created = next, 1
		default:
			return "", err
		}
	}
	return dst, nil
}

// mayHaveEquivalent reports whether another name can equal name under
// NFC. An ASCII name can only be the NFC form of names made of the three
// characters whose canonical decomposition is one ASCII character: KELVIN
// SIGN U+212A (K), GREEK QUESTION MARK U+037E (;) and GREEK VARIA U+1FEF
// (`).
func mayHaveEquivalent(name string) bool {
	return !isASCII(name) || strings.ContainsAny(name, "K;`")
}

// maxDirScan bounds the entries equivalentEntry reads from one directory.
const maxDirScan = 1 << 16

// equivalentEntry returns the entry of dir whose NFC form equals name's,
// when name itself does not exist there; "" when there is none. Two such
// entries are ambiguous (server-filesystem refuses them too).
func equivalentEntry(dir, name string) (string, error) {
	want := norm.NFC.String(name)
	f, err := os.Open(dir)
	if err != nil {
		return "", nil // not a readable directory: nothing to map onto
	}
	defer f.Close()
	found := ""
	for seen := 0; seen < maxDirScan; {
		names, err := f.Readdirnames(1024)
		for _, e := range names {
			if e != name && norm.NFC.String(e) == want {
				if found != "" {
					return "", errAmbiguous
				}
				found = e
			}
		}
		seen += len(names)
		if err != nil {
			break
		}
	}
	return found, nil
}

// expandVars returns s with $NAME and ${NAME} replaced as a shell or
// Python's os.path.expandvars would: the value in this process's
// environment (which the server inherits), else nothing. NAME is a run of
// letters, digits and '_' (Python's \w); a shell's special parameters ($1,
// $$, $?, ...) expand to nothing here. $( and ${ with anything but a name
// are rejected.
func expandVars(s string) (string, *Finding) {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		switch {
		case s == "":
			b.WriteByte('$')
		case s[0] == '(':
			return "", pathFinding("path contains $(, which a shell replaces with a command's output")
		case s[0] == '{':
			end := strings.IndexByte(s, '}')
			if end < 0 || !isVarName(s[1:end]) {
				return "", pathFinding("path contains ${ with an expression a shell would compute")
			}
			b.WriteString(os.Getenv(s[1:end]))
			s = s[end+1:]
		case strings.IndexByte("@*#?!-$0123456789", s[0]) >= 0:
			s = s[1:]
		default:
			n := 0
			for n < len(s) {
				r, size := utf8.DecodeRuneInString(s[n:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				n += size
			}
			if n == 0 {
				b.WriteByte('$')
				continue
			}
			b.WriteString(os.Getenv(s[:n]))
			s = s[n:]
		}
	}
}

func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// compatComponents rejects a component that is not "." or ".." as written
// but is one, or holds a separator, after NFKC (．．, ‥, ︰, ／, ＼).
func compatComponents(s string) *Finding {
	if isASCII(s) {
		return nil
	}
	for c := range strings.SplitSeq(s, "/") {
		if isASCII(c) {
			continue
		}
		k := norm.NFKC.String(c)
		if k == "." || k == ".." || strings.ContainsAny(k, "/\\") {
			return pathFinding("path has a component that Unicode compatibility normalisation turns into . or .. or a separator")
		}
	}
	return nil
}

// dotsAndSpaces reports whether the component c is made of dots and
// spaces only, with a space: Windows drops a component's trailing dots and
// spaces, so ".. " is ".." there. A component of dots only ("...", Go's
// package wildcard) loses them all and names the directory it is in.
func dotsAndSpaces(c string) bool {
	return strings.Contains(c, " ") && strings.Trim(c, ". ") == ""
}

// climbsAbove reports whether the relative path s goes above its start at
// any point: "..", "a/../..", "a/../../x".
func climbsAbove(s string) bool {
	depth := 0
	for c := range strings.SplitSeq(s, "/") {
		switch c {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
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
		if s[i] == '%' && i+2 < len(s) && rawjson.IsHex(s[i+1]) && rawjson.IsHex(s[i+2]) {
			b = append(b, rawjson.Unhex(s[i+1])<<4|rawjson.Unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// isDriveLetter reports whether s starts with a Windows drive: "C:" and
// anything after it (C:\x, C:/x, C:x).
func isDriveLetter(s string) bool { return len(s) >= 2 && isAlpha(s[0]) && s[1] == ':' }

// hasURIScheme reports whether s starts with a URI scheme followed by a
// path or an authority ("smb://h/x", "http:/x"): a server that takes URIs
// reads those as a resource elsewhere. "std::vector.md" and
// "backup-2024-01-01T10:00.txt" are names, not URIs.
func hasURIScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i+1 < len(s) && s[i+1] == '/'
		case isAlnum(c) || c == '+' || c == '-' || c == '.':
		default:
			return false
		}
	}
	return false
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
