package urlcheck

import (
	"strings"
	"testing"

	"github.com/mcpguard/mcpguard/rules/codes"
)

// ssrf are spellings of hosts that are not the public internet, from the
// red-team rounds against the URL check and the usual SSRF lists.
var ssrf = []string{
	"http://127.0.0.1/", "http://127.1/", "http://127.0.1/", "http://0x7f.1/", "http://0x7f000001/",
	"http://2130706433/", "http://017700000001/", "http://0177.0.0.1/", "http://0177.1/",
	"http://0x7F.0x0.0x0.0x1/", "http://127.000.000.001/", "http://0/", "http://0.0.0.0:22/",
	"http://127。0。0。1:8080/", "http://127．0．0．1/", "http://127｡0｡0｡1/", "http://１２７.０.０.１/",
	"http://169。254。169。254/latest/meta-data/", "http://169.254.169.254/", "http://0xa9fea9fe/",
	"http://2852039166/", "http://0251.0376.0251.0376/", "http://169.254.43518/",
	"http://metadata.google.internal/computeMetadata/v1/", "http://metadata。google。internal/",
	"http://METADATA.GOOGLE.INTERNAL./", "http://metadata/", "http://instance-data/",
	"http://100.100.100.200/", "http://[fd00:ec2::254]/", "http://[::1]/", "http://[::]/",
	"http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[::ffff:a9fe:a9fe]/",
	"http://[0:0:0:0:0:ffff:127.0.0.1]/", "http://[::127.0.0.1]/", "http://[64:ff9b::7f00:1]/",
	"http://[2002:a9fe:a9fe::]/", "http://[fe80::1]/", "http://localhost/", "http://LOCALHOST./",
	"http://localhost:8080/admin", "http://ｌｏｃａｌｈｏｓｔ/", "http://app.localhost/", "http://a.b.localhost./",
	"http://10.0.0.1/", "http://10.1/", "http://192.168.1.1/", "http://192.168.257/", "http://172.16.0.1/",
	"http://172.31.255.255/", "http://100.64.0.1/", "http://printer.local/", "http://vault.corp/",
	"http://router.lan/", "http://h.home.arpa/", "https://user:pass@127.0.0.1:443/",
	"http://example.com@127.0.0.1/", "http://a@example.com@10.0.0.1/", "http://224.0.0.1/",
	"http://255.255.255.255/", "http://[ff02::1]/", "http://198.18.0.1/", "http://192.0.0.170/",
	"ws://127.0.0.1/", "HTTP://127.0.0.1/", "http://127.0.0.1.:80/", "http://0x7f.0.0.1/",
	"http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", "http://①②⑦.0.0.1/", "http://127.0.0.1\u3002/", "http://[::ffff:169.254.169.254]/",
	"http://0x7f.0x00.0x00.0x01/", "http://0000177.1/",
}

// differential are spellings on which parsers disagree; Parse refuses them.
var differential = []string{
	"http://example.com\\@127.0.0.1/", "http:\\\\127.0.0.1/", "http:/127.0.0.1/", "http:127.0.0.1/",
	"http:///127.0.0.1/", "http://%6c%6f%63%61%6c%68%6f%73%74/", "http://127.0.0.%31/",
	"http://[::1%25eth0]/", "http://[fe80::1%eth0]/", "http://exa mple.com/", "http://example.com\t@127.0.0.1/",
	"http://example.com/\r\nHost: 127.0.0.1", " http://example.com/", "http://faß.de/", "http://ς.gr/",
	"http://1.2.3.4.5/", "http://256.1.1.1/", "http://0x100000000/", "http://08.0.0.1/", "http://example.com:65536/",
	"http://example.com:-1/", "http://example.com:+80/", "http://example.com:/", "http://a..b/", "http://.a.b/", "http://localhost../", "http://metadata.google.internal../", "http://example.com../",
	"http://a_b!.com/", "http://a*b.com/", "http://[::1]x/", "http://[1.2.3.4]/", "//example.com/", "example.com",
	"javascript:alert(1)", "file:///etc/passwd", "gopher://127.0.0.1:6379/_x", "data:text/plain,x",
	"http://example.com\uff03@127.0.0.1/",
	"http://\xff/",
}

// public are ordinary URLs that must pass with deny_private.
var public = []string{
	"https://example.com/", "https://example.com/docs?q=1#x", "http://example.org:8080/a",
	"https://93.184.216.34/", "https://1password.com/", "http://172.32.0.1/", "https://127.0.0.1@example.com/",
	"https://example.com/localhost", "https://EXAMPLE.COM/", "https://example.com./", "https://münchen.de/",
	"https://xn--mnchen-3ya.de/", "https://例え.jp/", "https://sub_domain.example.com/", "http://8.8.8.8/",
	"https://[2606:4700:4700::1111]/", "https://example.com:443/a\\b", "https://user@example.com/",
	"https://example.com/@127.0.0.1", "https://example.com?u=http://127.0.0.1/", "https://a-b.example.co.uk/x",
	"https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md",
	// UTS-46 and IDNA 2003 both map these invisible characters to nothing;
	// Node and Python read example.com (control_chars refuses them where
	// a policy says so).
	"http://\u200bexample.com/", "http://ex\u00adample.com/",
}

func mustNew(t testing.TB, o Options) *Check {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCheckDenyPrivate(t *testing.T) {
	c := mustNew(t, Options{DenyPrivate: true, Schemes: []string{"http", "https"}})
	for _, v := range append(append([]string{}, ssrf...), differential...) {
		if strings.HasPrefix(v, "ws:") {
			continue
		}
		f := c.Check(v)
		if f == nil {
			t.Errorf("%q passed", v)
			continue
		}
		if f.Code != codes.URL || f.Reason == "" || f.Remediation == "" {
			t.Errorf("%q: finding %+v", v, f)
		}
		if len(v) >= 8 && (strings.Contains(f.Reason, v) || strings.Contains(f.Remediation, v)) {
			t.Errorf("%q: finding echoes the value", v)
		}
	}
	for _, v := range public {
		if f := c.Check(v); f != nil {
			t.Errorf("%q refused: %s", v, f.Reason)
		}
	}
}

func TestCheckSchemesAndGlobs(t *testing.T) {
	c := mustNew(t, Options{})
	for v, want := range map[string]bool{
		"https://example.com/": true, "http://127.0.0.1/": true, "ws://example.com/": false,
		"ftp://example.com/": false, "file:///etc/passwd": false, "mailto:a@example.com": false,
	} {
		if got := c.Check(v) == nil; got != want {
			t.Errorf("default schemes: %q passed=%v, want %v", v, got, want)
		}
	}
	c = mustNew(t, Options{AllowHosts: []string{"*.github.com", "github.com", "api.github.com"}, DenyHosts: []string{"gist.github.com"}})
	for v, want := range map[string]bool{
		"https://github.com/x": true, "https://api.github.com/repos": true, "https://raw.github.com/": true,
		"https://GITHUB.COM./": true, "https://gist.github.com/": false, "https://github.com.evil.com/": false,
		"https://evilgithub.com/": false, "https://ｇｉｔｈｕｂ.com/": true, "https://github。com/": true,
		"https://github.com@evil.com/": false, "https://evil.com\\@github.com/": false,
	} {
		if got := c.Check(v) == nil; got != want {
			t.Errorf("globs: %q passed=%v, want %v", v, got, want)
		}
	}
	for _, o := range []Options{
		{Schemes: []string{"file"}}, {Schemes: []string{"HTTP"}}, {AllowHosts: []string{"["}},
		{DenyHosts: []string{"Example.com"}}, {AllowHosts: []string{""}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// TestAgainstNode holds Parse to Node's WHATWG URL, the parser a Node
// server fetching the URL uses: every URL Parse accepts, Node accepts with
// the same scheme and host; every SSRF spelling Parse reads as a private
// address, Node reads as that address too.
func TestAgainstNode(t *testing.T) {
	node := startNode(t)
	compareReader(t, "node", node, true)
}

// TestAgainstPython holds Parse to Python's urllib (urlsplit, the idna
// codec and inet_aton), what mcp-server-fetch's stack reads.
func TestAgainstPython(t *testing.T) {
	py := startPython(t)
	compareReader(t, "python", py, false)
}

func compareReader(t *testing.T, name string, r *reader, strict bool) {
	corpus := append(append(append([]string{}, ssrf...), differential...), public...)
	checked := 0
	for _, v := range corpus {
		u, err := Parse(v)
		if err != nil {
			continue // refused: stricter than any reader is fine
		}
		got := r.read(t, v)
		if !specialSchemes[u.Scheme] {
			continue
		}
		checked++
		if !got.OK {
			if strict {
				t.Errorf("%s refuses %q, which Parse reads as host %q", name, v, u.Host)
			}
			continue
		}
		if !sameHost(u, got.Hostname) {
			t.Errorf("%q: Parse reads host %q, %s reads %q", v, u.Host, name, got.Hostname)
		}
	}
	if checked < len(ssrf) {
		t.Fatalf("only %d URLs compared", checked)
	}
	t.Logf("%d URLs read alike by Parse and %s", checked, name)
}

// FuzzURL: Parse never panics; a URL the check allows with deny_private is
// read by Node as the same host, and that host is public under net/netip's
// own classification.
func FuzzURL(f *testing.F) {
	for _, s := range append(append(append([]string{}, ssrf...), differential...), public...) {
		f.Add(s)
	}
	c := mustNew(f, Options{DenyPrivate: true, Schemes: []string{"http", "https", "ws", "wss", "ftp"}})
	node := startNode(f)
	f.Fuzz(func(t *testing.T, v string) {
		u, _ := Parse(v)
		if c.Check(v) != nil {
			return
		}
		got := node.read(t, v)
		if !got.OK || got.Scheme != u.Scheme || !sameHost(u, got.Hostname) {
			t.Fatalf("%q allowed as %s://%s, Node reads %+v", v, u.Scheme, u.Host, got)
		}
		if u.Addr.IsValid() {
			a := u.Addr.Unmap()
			if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() || !a.IsGlobalUnicast() {
				t.Fatalf("%q allowed, but %s is not public", v, a)
			}
		} else if h := strings.TrimRight(u.Host, "."); !strings.Contains(h, ".") || h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".internal") {
			t.Fatalf("%q allowed with the local name %q", v, u.Host)
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	c := mustNew(b, Options{DenyPrivate: true})
	for _, u := range []struct{ name, url string }{
		{"ascii", "https://example.com/docs/page?q=1#x"},
		{"ipv4", "http://93.184.216.34:8080/a"},
		{"idna", "https://münchen.de/straße"},
	} {
		b.Run(u.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if f := c.Check(u.url); f != nil {
					b.Fatal(f.Reason)
				}
			}
		})
	}
}
