// Package urlcheck holds the url ingress check: it reads a URL the way the
// programs that fetch it do (WHATWG URL in Node and browsers, Python's
// urllib and httpx) and refuses it when its scheme or host is not allowed.
// It stops server-side request forgery through a URL argument: a fetch tool
// sent to localhost, the private network or a cloud metadata endpoint, in
// any of the spellings those parsers accept for the same host.
//
// The host is read once per parser family and refused unless every reading
// agrees:
//
//   - the WHATWG reading maps the host through UTS-46 (golang.org/x/net/idna,
//     non-transitional, as Node does): U+3002, U+FF0E and U+FF61 are dots,
//     fullwidth digits and letters are ASCII, upper case is lower case;
//   - the IDNA 2003 reading (Python's "idna" codec, which urllib and
//     requests use) maps transitionally: ß is ss, ς is σ. A host the two
//     mappings spell differently (faß.de) is refused;
//   - a host that ends in a number is an IPv4 address in every spelling
//     WHATWG and inet_aton accept: decimal (2130706433), octal (0177.1),
//     hex (0x7f.1), and one to four parts (127.1). IPv6 literals are read
//     with net/netip; IPv4-mapped (::ffff:127.0.0.1), IPv4-compatible
//     (::127.0.0.1), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses
//     are judged by the IPv4 address they carry.
//
// Spellings on which the parsers disagree are refused outright, whatever the
// host: a backslash before the path (WHATWG reads it as '/', Python as part
// of the user info, so http://a.com\@127.0.0.1/ has two hosts), anything
// other than exactly two slashes after the scheme (http:/x, http:\\x,
// http:///x), whitespace and control characters anywhere (WHATWG drops
// tabs and newlines), percent-encoding in the host (WHATWG decodes it,
// Python does not), an IPv6 zone id (WHATWG refuses it), a port that is not
// a number up to 65535, and host characters other than letters, digits, '-',
// '_' and '.' once mapped. User info is allowed: every parser reads the host
// after the last '@'.
//
// The check never resolves names. A public name whose DNS answer is a
// private address (DNS rebinding), and redirects the server follows, are
// outside what it can see.
package urlcheck

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// Options configure a Check.
type Options struct {
	// Schemes allowed, lower case; empty means http and https. Only the
	// schemes WHATWG calls special (http, https, ws, wss, ftp) have a host
	// every parser reads alike, so only those are accepted.
	Schemes []string
	// AllowHosts, if not empty, are the only hosts allowed: globs in
	// path.Match syntax ('*' spans dots) over the host as read (lower
	// case, IDNA in punycode, IPv4 dotted decimal, IPv6 without brackets).
	AllowHosts []string
	// DenyHosts are refused, in the same syntax.
	DenyHosts []string
	// DenyPrivate refuses hosts that are not the public internet: see
	// Private.
	DenyPrivate bool
}

// Check is the compiled url check. It is immutable and safe for concurrent
// use.
type Check struct {
	schemes     []string
	allow, deny []string
	denyPrivate bool
}

var specialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

// New compiles o.
func New(o Options) (*Check, error) {
	c := &Check{allow: o.AllowHosts, deny: o.DenyHosts, denyPrivate: o.DenyPrivate}
	c.schemes = o.Schemes
	if len(c.schemes) == 0 {
		c.schemes = []string{"http", "https"}
	}
	for _, s := range c.schemes {
		if !specialSchemes[s] {
			return nil, fmt.Errorf("scheme %q: want one of http, https, ws, wss, ftp (lower case)", s)
		}
	}
	for _, g := range append(append([]string{}, c.allow...), c.deny...) {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return nil, fmt.Errorf("host glob %q: not a valid glob", g)
		}
		if g != strings.ToLower(g) {
			return nil, fmt.Errorf("host glob %q: write hosts in lower case", g)
		}
	}
	return c, nil
}

const remediation = "Pass an absolute http(s) URL to a public host, written plainly: no backslashes, whitespace, percent-encoding or IP zone in the host."

func finding(reason string) *rules.Finding {
	return &rules.Finding{Code: codes.URL, Reason: reason, Remediation: remediation}
}

// Check rejects value unless it is a URL whose scheme and host the check
// allows under every reading.
func (c *Check) Check(value string) *rules.Finding {
	var url URL
	u := &url
	if err := u.parse(value); err != nil {
		return finding("URL refused: " + err.Error())
	}
	if !contains(c.schemes, u.Scheme) {
		return finding("URL scheme " + u.Scheme + " is not allowed here (allowed: " + strings.Join(c.schemes, ", ") + ")")
	}
	if globsMatch(c.deny, u.Host) {
		return finding("URL host is on the policy's deny_hosts list")
	}
	if len(c.allow) > 0 && !globsMatch(c.allow, u.Host) {
		return finding("URL host is not on the policy's allow_hosts list")
	}
	if c.denyPrivate {
		if why := Private(u); why != "" {
			return finding("URL host is " + why + ", not the public internet")
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func globsMatch(globs []string, host string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, host); ok {
			return true
		}
	}
	return false
}

// URL is what Parse reads.
type URL struct {
	Scheme string     // lower case
	Host   string     // lower case ASCII, no trailing dot; an IP in canonical form, IPv6 without brackets
	Addr   netip.Addr // the host's address when it is an IP literal in any spelling
	Port   int        // -1 when absent
}

// Parse reads the scheme and host of raw under every reading described in
// the package doc, or says why the readings may differ.
func Parse(raw string) (*URL, error) {
	u := new(URL)
	if err := u.parse(raw); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *URL) parse(raw string) error {
	if !utf8.ValidString(raw) {
		return errors.New("not valid UTF-8")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7F {
			return errors.New("whitespace or control character in the URL (parsers drop or keep them differently)")
		}
	}
	colon := strings.IndexByte(raw, ':')
	if colon <= 0 || !validScheme(raw[:colon]) {
		return errors.New("not an absolute URL with a scheme")
	}
	*u = URL{Scheme: strings.ToLower(raw[:colon]), Port: -1}
	rest := raw[colon+1:]
	if !specialSchemes[u.Scheme] {
		return errNoHost(u.Scheme)
	}
	if !strings.HasPrefix(rest, "//") || strings.HasPrefix(rest, "///") {
		return errors.New("want exactly two slashes after the scheme (WHATWG and Python read other forms differently)")
	}
	rest = rest[2:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if strings.IndexByte(authority, '\\') >= 0 {
		return errors.New("backslash before the path (WHATWG reads it as '/', Python does not)")
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	hostport := authority
	var host, port string
	if strings.HasPrefix(hostport, "[") {
		close := strings.IndexByte(hostport, ']')
		if close < 0 {
			return errors.New("IPv6 literal without ']'")
		}
		host, port = hostport[1:close], hostport[close+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return errors.New("text after an IPv6 literal")
		}
		port = strings.TrimPrefix(port, ":")
		if err := u.setIPv6(host); err != nil {
			return err
		}
	} else {
		host, port, _ = strings.Cut(hostport, ":")
		if strings.IndexByte(port, ':') >= 0 {
			return errors.New("more than one ':' in the host and port")
		}
		if err := u.setHost(host); err != nil {
			return err
		}
	}
	if strings.HasPrefix(hostport, "[") || strings.Contains(hostport, ":") {
		if port == "" {
			// "http://h:/" is the default port to WHATWG and an
			// error to some Python versions: refuse it.
			if strings.HasSuffix(hostport, ":") {
				return errors.New("empty port")
			}
		} else {
			p, err := strconv.Atoi(port)
			if err != nil || p < 0 || p > 65535 || port[0] == '+' || port[0] == '-' {
				return errors.New("port is not a number from 0 to 65535")
			}
			u.Port = p
		}
	}
	return nil
}

func errNoHost(scheme string) error {
	return fmt.Errorf("scheme %s has no host that every parser reads alike", scheme)
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// setIPv6 reads the inside of [...].
func (u *URL) setIPv6(s string) error {
	if strings.IndexByte(s, '%') >= 0 {
		return errors.New("IPv6 zone id or percent-encoding in the host (WHATWG refuses it, others read it)")
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return errors.New("not an IPv6 address inside [ ]")
	}
	u.Addr = a
	u.Host = a.String()
	return nil
}

// The two UTS-46 readings: WHATWG (non-transitional, no STD3 rules, as
// Node's domainToASCII) and IDNA 2003 (transitional, as Python's codec).
var (
	whatwgIDNA = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false),
		idna.BidiRule(), idna.CheckJoiners(true), idna.CheckHyphens(false), idna.VerifyDNSLength(false))
	idna2003 = idna.New(idna.MapForLookup(), idna.Transitional(true), idna.StrictDomainName(false),
		idna.CheckHyphens(false), idna.VerifyDNSLength(false))
)

// setHost reads a host that is not an IPv6 literal.
func (u *URL) setHost(s string) error {
	if s == "" {
		return errors.New("empty host")
	}
	if strings.IndexByte(s, '%') >= 0 {
		return errors.New("percent-encoding in the host (WHATWG decodes it, Python does not)")
	}
	h, err := whatwgIDNA.ToASCII(s)
	if err != nil {
		return errors.New("host is not a valid international domain name")
	}
	if !isASCII(s) {
		h2, err := idna2003.ToASCII(s)
		if err != nil || h2 != h {
			return errors.New("host is read differently under IDNA 2003 and UTS-46 (such as ß, ς or joiners)")
		}
	}
	h = strings.ToLower(h)
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return errors.New("host holds characters other than letters, digits, '-', '_' and '.'")
		}
	}
	trimmed := strings.TrimSuffix(h, ".")
	if trimmed == "" || strings.HasPrefix(trimmed, ".") || strings.HasSuffix(trimmed, ".") || strings.Contains(trimmed, "..") {
		return errors.New("empty label in the host")
	}
	if endsInNumber(trimmed) {
		a, ok := parseIPv4(trimmed)
		if !ok {
			return errors.New("host ends in a number but is not an IPv4 address")
		}
		u.Addr = a
		u.Host = a.String()
		return nil
	}
	u.Host = trimmed
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// endsInNumber is WHATWG's "ends in a number" test: the last label (after
// one trailing dot is dropped) is decimal digits, or 0x and hex digits.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if allDigits(last, 10) {
		return true
	}
	return (strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X")) && allDigits(last[2:], 16)
}

func allDigits(s string, base int) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= '0' && c <= '9'
		if base == 16 {
			ok = ok || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
		}
		if base == 8 {
			ok = c >= '0' && c <= '7'
		}
		if !ok {
			return false
		}
	}
	return true
}

// parseIPv4 is WHATWG's IPv4 parser, which accepts what inet_aton does:
// one to four parts, each decimal, octal (leading 0) or hex (0x); the last
// part fills the remaining bytes.
func parseIPv4(h string) (netip.Addr, bool) {
	var buf [4]uint64
	nums := buf[:0]
	for p := range strings.SplitSeq(h, ".") {
		n, ok := parseIPv4Number(p)
		if !ok || len(nums) == 4 {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	if !allDigits(p, base) {
		return 0, false
	}
	if len(p) > 16 {
		return 0, false // beyond any IPv4 part; WHATWG fails too
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil
}
