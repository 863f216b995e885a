package agentconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// wrap --pin-versions: an entry that runs a package without an exact
// version (Unpinned) runs whatever the registry serves at each start.
// The release the runner already installed for that very spec is the one
// the user has been running: pinning it keeps the next start on it until
// the user chooses to move. Each runner's own record is read, nothing is
// fetched or started, and a release is pinned only when exactly one is
// found; otherwise the entry stays as it is and the report says why.
//
//   - npx (and npm exec): NPM_CACHE/_npx/HASH/package.json records the
//     spec (_npx.packages), node_modules/PKG/package.json the release.
//   - bunx (and bun x): TMPDIR/bunx-UID-SPEC/node_modules/PKG/package.json.
//   - uvx (and uv tool run): a tool `uv tool install` put in the tools
//     directory is what uvx runs; else the cached tool environments
//     (CACHE/environments-v2/*/*) that hold the package's .dist-info and
//     its command; PKG@X.Y.Z, or --from PKG==X.Y.Z.
//   - docker and podman run: the image's RepoDigests as the local engine
//     reports them (`image inspect`, which pulls nothing): IMAGE@sha256:...
//   - pnpm dlx, yarn dlx, pipx run: named for the user to pin (pnpm's and
//     yarn's caches do not record the spec; pipx's app word takes no
//     version, so the pin needs a --spec the entry does not have).

// versionPin is the release an unpinned package word is pinned to.
type versionPin struct {
	at   int    // the word's index in argv
	word string // the pinned word
	from string // where the release was read
}

// findPin returns the pin for argv, or why there is none ("" when argv
// has nothing to pin).
func findPin(argv []string, home string) (versionPin, string) {
	why := Unpinned(argv)
	if why == "" {
		return versionPin{}, ""
	}
	runner, first := runnerOf(argv)
	switch runner {
	case "npx", "bunx":
		at := npxWord(argv, first)
		if at < 0 {
			return versionPin{}, "several packages or a shell line: pin it by hand (" + why + ")"
		}
		spec := argv[at]
		name := spec
		if i := strings.LastIndexByte(spec, '@'); i > 0 {
			name = spec[:i]
		}
		var version string
		if runner == "npx" {
			version, _ = installedNPX(spec, name, home)
		} else {
			version = installedBunx(spec, name)
		}
		if version == "" {
			return versionPin{}, "no single release installed by " + runner + " found (" + why + ")"
		}
		return versionPin{at, name + "@" + version, "the release " + runner + " installed"}, ""
	case "uvx":
		return uvxPin(argv, first, home, why)
	case "docker", "podman":
		return imagePin(argv, first, runner, why)
	case "pipx":
		return versionPin{}, "pipx run's app word takes no version: pin it by hand with --spec PKG==X.Y.Z (" + why + ")"
	}
	return versionPin{}, "its runner keeps no offline record of the release it ran: pin it by hand (" + why + ")"
}

// runnerOf names the package runner argv starts (npx, bunx, uvx, pipx,
// docker, podman, or the runner's own name for the others) and the index
// of the runner's first own word.
func runnerOf(argv []string) (string, int) {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(argv[0])), ".cmd")
	sub := func(words ...string) bool {
		return len(argv) > len(words) && slices.Equal(argv[1:1+len(words)], words)
	}
	switch {
	case base == "npx", base == "bunx", base == "uvx":
		return base, 1
	case base == "npm" && (sub("exec") || sub("x")):
		return "npx", 2
	case base == "bun" && sub("x"):
		return "bunx", 2
	case base == "uv" && sub("tool", "run"):
		return "uvx", 3
	case base == "pipx" && sub("run"), (base == "docker" || base == "podman") && sub("run"):
		return base, 2
	}
	return base, 1
}

// npxWord is the index of the package word of an npx-style command line
// (first word that is no option, after an optional "--"); -1 when the
// line names its packages with -p or is a shell line (-c).
func npxWord(argv []string, first int) int {
	for i := first; i < len(argv); i++ {
		w := argv[i]
		if w == "-p" || w == "--package" || strings.HasPrefix(w, "--package=") || w == "-c" || w == "--call" {
			return -1
		}
		if w == "--" {
			if i+1 < len(argv) {
				return i + 1
			}
			return -1
		}
		if !strings.HasPrefix(w, "-") {
			return i
		}
	}
	return -1
}

// installedBunx is the exact version bunx installed for spec in its
// directory under the temporary directory, "" when there is none.
func installedBunx(spec, name string) string {
	tmp := os.Getenv("BUN_TMPDIR")
	if !filepath.IsAbs(tmp) {
		tmp = os.TempDir()
	}
	dir := filepath.Join(tmp, "bunx-"+strconv.Itoa(os.Getuid())+"-"+spec)
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json"))
	if err != nil {
		return ""
	}
	var m struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &m) != nil || m.Name != name || !exactVersion().MatchString(m.Version) {
		return ""
	}
	return m.Version
}

// pythonName is a plain Python package name: no version, extras or URL.
var pythonName = lazyregexp.New(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// pythonSeparators are the runs PEP 503 folds into one "-".
var pythonSeparators = lazyregexp.New(`[-_.]+`)

// normalizePython is a package name as PEP 503 compares them.
func normalizePython(name string) string {
	return strings.ToLower(pythonSeparators().ReplaceAllString(name, "-"))
}

// uvxPin pins uvx's package word to the release uv installed for it.
func uvxPin(argv []string, first int, home, why string) (versionPin, string) {
	at, prefix, command, viaFrom := -1, "", "", false
	for i := first; i < len(argv) && command == ""; i++ {
		w := argv[i]
		switch {
		case w == "--from" && i+1 < len(argv):
			at, viaFrom, i = i+1, true, i+1
		case strings.HasPrefix(w, "--from="):
			at, viaFrom, prefix = i, true, "--from="
		case slices.Contains([]string{"--with", "--python", "-p", "--index", "--with-requirements", "--with-editable", "-w"}, w):
			i++
		case strings.HasPrefix(w, "-"):
		case at < 0:
			at, command = i, w
		default:
			command = w
		}
	}
	if at < 0 || command == "" {
		return versionPin{}, "no package and command found: pin it by hand (" + why + ")"
	}
	name, latest := strings.CutSuffix(strings.TrimPrefix(argv[at], prefix), "@latest")
	if !pythonName().MatchString(name) {
		return versionPin{}, "not a plain package name: pin it by hand (" + why + ")"
	}
	if !viaFrom {
		command = name
	}
	pinned := func(version, from string) (versionPin, string) {
		if viaFrom {
			return versionPin{at, prefix + name + "==" + version, from}, ""
		}
		return versionPin{at, name + "@" + version, from}, ""
	}
	if !latest {
		// An installed tool is what uvx runs for a spec without a version.
		dir := os.Getenv("UV_TOOL_DIR")
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(dataHome(home), "uv", "tools")
		}
		if v := distVersions(filepath.Join(dir, normalizePython(name)), name); len(v) == 1 {
			return pinned(v[0], "the tool uv installed")
		}
	}
	cache := os.Getenv("UV_CACHE_DIR")
	if !filepath.IsAbs(cache) {
		cache = filepath.Join(cacheHome(home), "uv")
	}
	envs, _ := filepath.Glob(filepath.Join(cache, "environments-v2", "*", "*"))
	var versions []string
	for _, env := range envs {
		if fi, err := os.Stat(filepath.Join(env, "bin", command)); err != nil || fi.IsDir() {
			continue
		}
		for _, v := range distVersions(env, name) {
			if !slices.Contains(versions, v) {
				versions = append(versions, v)
			}
		}
	}
	if len(versions) != 1 {
		return versionPin{}, "no single release in uv's tool environments found (" + why + ")"
	}
	return pinned(versions[0], "the release uvx installed")
}

// distVersions lists the exact versions of the package name installed in
// the Python environment env (its .dist-info directories).
func distVersions(env, name string) []string {
	infos, _ := filepath.Glob(filepath.Join(env, "lib", "python*", "site-packages", "*.dist-info"))
	var out []string
	for _, p := range infos {
		n, v, ok := strings.Cut(strings.TrimSuffix(filepath.Base(p), ".dist-info"), "-")
		if ok && normalizePython(n) == normalizePython(name) && exactVersion().MatchString(v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// dataHome and cacheHome are $XDG_DATA_HOME and $XDG_CACHE_HOME, by
// default under home.
func dataHome(home string) string {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(home, ".local", "share")
}

func cacheHome(home string) string {
	if d := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(home, ".cache")
}

// inspectTimeout bounds one `docker image inspect`.
const inspectTimeout = 5 * time.Second

// imagePin pins the image of `docker run`/`podman run` to the digest the
// local engine has for it; nothing is pulled.
func imagePin(argv []string, first int, cli, why string) (versionPin, string) {
	at := -1
	for i := first; i < len(argv); i++ {
		if w := argv[i]; strings.HasPrefix(w, "-") {
			if dockerValueFlags[w] {
				i++
			}
			continue
		}
		at = i
		break
	}
	if at < 0 {
		return versionPin{}, ""
	}
	image := argv[at]
	digest, err := localDigest(cli, argv[0], image)
	if err != nil {
		return versionPin{}, err.Error() + " (" + why + ")"
	}
	return versionPin{at, image + "@" + digest, "the digest of the local image"}, ""
}

// localDigest is the one registry digest the local engine records for
// image (its RepoDigests for the image's repository).
func localDigest(cli, command, image string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), inspectTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, command, "image", "inspect", "--format", "{{json .RepoDigests}}", image)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("no local digest of %s (%s image inspect: %s)", image, cli, msg)
	}
	var digests []string
	if err := json.Unmarshal(bytes.TrimSpace(out), &digests); err != nil {
		return "", fmt.Errorf("%s image inspect %s: %v", cli, image, err)
	}
	repo := imageRepo(image)
	var found []string
	for _, d := range digests {
		r, sum, ok := strings.Cut(d, "@")
		if ok && imageRepo(r) == repo && imageDigest().MatchString(sum) && !slices.Contains(found, sum) {
			found = append(found, sum)
		}
	}
	if len(found) != 1 {
		return "", errors.New("the local image " + image + " has " + strconv.Itoa(len(found)) + " registry digests for its repository, not one")
	}
	return found[0], nil
}

// imageDigest is a registry digest as an image reference names it: what
// the engine reports is written into the agent's configuration only in
// that form.
var imageDigest = lazyregexp.New(`^sha256:[0-9a-f]{64}$`)

// imageRepo is an image reference's repository as Docker Hub's short
// names and full names compare: no tag, no docker.io/ or library/.
func imageRepo(ref string) string {
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	ref = strings.TrimPrefix(strings.TrimPrefix(ref, "docker.io/"), "index.docker.io/")
	return strings.TrimPrefix(ref, "library/")
}

// setWord replaces argv[at] of the unguarded entry s (at >= 1: one of
// its args) with word, in the entry's own format and quoting; no other
// byte of the file changes.
func (c *Config) setWord(s *Server, at int, word string) error {
	if at < 1 || at >= len(s.Argv) {
		return errors.New("no such argument")
	}
	argv := slices.Clone(s.Argv)
	argv[at] = word
	// elem is the bytes of argv[at] among elems, the elements of the
	// entry's args as found in the file.
	elem := func(elems [][2]int, found bool) ([2]int, error) {
		if !found || len(elems) != len(s.Argv)-1 {
			return [2]int{}, errors.New("args is not the entry's arguments as read")
		}
		return elems[at-1], nil
	}
	switch {
	case c.Format == "toml":
		e, err := c.tomlEntry(s)
		if err != nil {
			return err
		}
		el, err := elem(e.argElems())
		if err != nil {
			return err
		}
		c.applyTOML([]tomlEdit{{el[0], el[1], requote(c.Bytes()[el[0]:el[1]], word, false)}})
	case c.Format == "yaml":
		e, err := c.yamlEntry(s)
		if err != nil {
			return err
		}
		el, err := elem(e.argElems())
		if err != nil {
			return err
		}
		err = c.applyYAML(s, []tomlEdit{{el[0], el[1], requote(c.Bytes()[el[0]:el[1]], word, true)}}, IsGuardCommand(""),
			func(t *Server) bool { return t.Kind == Unguarded && slices.Equal(t.Argv, argv) })
		if err != nil {
			return err
		}
	case c.Shape == CommandArray:
		if err := c.patch([]patchOp{{Op: "replace", Path: s.Pointer + "/command/" + strconv.Itoa(at), Value: quote(word)}}); err != nil {
			return err
		}
	default:
		if err := c.patch([]patchOp{{Op: "replace", Path: s.Pointer + "/args/" + strconv.Itoa(at-1), Value: quote(word)}}); err != nil {
			return err
		}
	}
	c.dirty = true
	s.Argv = argv
	return nil
}

// plainWord is a word YAML reads as the same string unquoted.
var plainWord = lazyregexp.New(`^[A-Za-z0-9_/.][A-Za-z0-9_@/.:=+-]*$`)

// requote writes word in the quoting style of old (a TOML or YAML
// string as written): a literal '...' string stays literal, a plain YAML
// scalar stays plain when the word allows it, else a double-quoted one.
func requote(old []byte, word string, yaml bool) []byte {
	switch {
	case len(old) > 0 && old[0] == '\'' && !strings.ContainsAny(word, "'\n"):
		return []byte("'" + word + "'")
	case yaml && len(old) > 0 && old[0] != '"' && old[0] != '\'' && plainWord().MatchString(word) && !strings.Contains(word, ": "):
		return []byte(word)
	}
	return quote(word)
}

// argElems are the byte ranges of the entry's args elements; false when
// it has no args array of strings.
func (e *tomlEntry) argElems() ([][2]int, bool) {
	if e.args == nil {
		return nil, false
	}
	return e.args.elems, true
}

func (e *yamlEntry) argElems() ([][2]int, bool) {
	if e.args == nil {
		return nil, false
	}
	return e.args.elems, true
}
