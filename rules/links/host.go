package links

import (
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// target is where a URL makes the client connect, as a browser (WHATWG
// URL) would read it: external is false for URLs that fetch nothing from
// the network on their own (data:, and relative references, which resolve
// against the client's own origin); host is the lower-case ASCII host, ""
// when the URL names none (cid:, file:).
type target struct {
	external bool
	host     string
}

// specialSchemes are the schemes for which a browser reads "https:host",
// "https:/host" and backslashes as "https://host".
var specialSchemes = map[string]bool{"http": true, "https": true, "ftp": true, "ws": true, "wss": true}

// targetOf reads a URL (already free of entity and backslash escapes) the
// way a browser does: leading and trailing spaces and C0 controls are
// dropped, tabs and newlines inside are removed, backslashes count as
// slashes, and the host is percent-decoded, lower-cased and IDNA-mapped
// (fullwidth dots and letters).
func targetOf(raw string) target {
	u := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	u = strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, u)
	scheme, rest, hasScheme := splitScheme(u)
	switch {
	case hasScheme && scheme == "data":
		return target{}
	case hasScheme && specialSchemes[scheme]:
		return target{external: true, host: hostPart(strings.TrimLeft(rest, "/"))}
	case hasScheme:
		if strings.HasPrefix(rest, "//") {
			return target{external: true, host: hostPart(rest[2:])}
		}
		return target{external: true}
	case strings.HasPrefix(u, "//"):
		return target{external: true, host: hostPart(strings.TrimLeft(u, "/"))}
	}
	return target{}
}

// splitScheme splits "scheme:rest" when u starts with a URL scheme.
func splitScheme(u string) (scheme, rest string, ok bool) {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(u[:i]), u[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// hostPart returns the host of "userinfo@host:port/path...".
func hostPart(s string) string {
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, ']'); i >= 0 {
			return strings.ToLower(s[:i+1])
		}
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	if h, err := url.PathUnescape(s); err == nil {
		s = h
	}
	if a, err := idna.Lookup.ToASCII(s); err == nil {
		s = a
	} else if a, err := idna.Punycode.ToASCII(strings.ToLower(s)); err == nil {
		s = a
	}
	return strings.TrimSuffix(strings.ToLower(s), ".")
}

// hostSet is an allowlist of hosts: exact names, or "*.example.com" for
// every subdomain of example.com (not example.com itself).
type hostSet struct {
	exact  map[string]bool
	suffix []string
}

func newHostSet(hosts []string) hostSet {
	hs := hostSet{exact: map[string]bool{}}
	for _, h := range hosts {
		h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			hs.suffix = append(hs.suffix, "."+rest)
			continue
		}
		hs.exact[h] = true
	}
	return hs
}

func (hs hostSet) allows(t target) bool {
	if !t.external {
		return true
	}
	if t.host == "" {
		return false
	}
	if hs.exact[t.host] {
		return true
	}
	for _, s := range hs.suffix {
		if strings.HasSuffix(t.host, s) {
			return true
		}
	}
	return false
}

// shownHost is a host fit to show in a stand-in: only the characters a
// host name has, so the stand-in cannot carry markup.
func shownHost(t target) string {
	if t.host == "" {
		return "(none)"
	}
	h := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':' {
			return r
		}
		return '?'
	}, t.host)
	if len(h) > 100 {
		h = h[:100]
	}
	return h
}
