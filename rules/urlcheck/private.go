package urlcheck

import (
	"net/netip"
	"strings"
)

// Private says why u's host is not the public internet, or "" when it is:
//
//   - IPv4: this network and unspecified 0.0.0.0/8, loopback 127/8, private
//     10/8, 172.16/12, 192.168/16, shared CGNAT 100.64/10 (Alibaba's
//     metadata 100.100.100.200 is in it), link-local 169.254/16 (the
//     AWS, GCP and Azure metadata 169.254.169.254 is in it), IETF 192.0.0/24,
//     documentation, benchmarking 198.18/15, multicast, reserved 240/4 and
//     broadcast;
//   - IPv6: unspecified, loopback, unique local fc00::/7 (AWS's metadata
//     fd00:ec2::254 is in it), link-local, site-local, multicast,
//     documentation, discard 100::/64, Teredo 2001::/32, local NAT64
//     64:ff9b:1::/48; addresses that carry an IPv4 address (mapped, compatible,
//     IPv4-translated ::ffff:0:0/96 of SIIT, NAT64 64:ff9b::/96, 6to4
//     2002::/16) are judged by it;
//   - names: localhost and every name under it (app.localhost), names with
//     no dot (a resolver's search list makes "metadata" or "vault" an
//     internal host), and the internal suffixes .local (mDNS), .internal
//     (metadata.google.internal), .localdomain, .home.arpa, .lan,
//     .intranet, .corp, .private, and .svc (kubernetes.default.svc, the
//     cluster's API server: a pod's search list completes it).
func Private(u *URL) string {
	if u.Addr.IsValid() {
		return privateAddr(u.Addr)
	}
	h := u.Host
	if !strings.Contains(h, ".") {
		return "a single-label name, which resolves inside the local network"
	}
	for _, suffix := range internalSuffixes {
		if h == suffix || strings.HasSuffix(h, "."+suffix) {
			return "an internal name (." + suffix + ")"
		}
	}
	return ""
}

var internalSuffixes = []string{"localhost", "local", "internal", "localdomain", "home.arpa", "lan", "intranet", "corp", "private", "svc"}

var privateV4 = mustPrefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
	"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
)

var privateV6 = mustPrefixes(
	"::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	"2001:db8::/32", "3fff::/20", "100::/64", "2001::/32", "64:ff9b:1::/48",
)

func mustPrefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	compat    = netip.MustParsePrefix("::/96")
	siit      = netip.MustParsePrefix("::ffff:0:0:0/96")
)

func privateAddr(a netip.Addr) string {
	if a.Is4In6() {
		return privateAddr(a.Unmap())
	}
	if a.Is4() {
		for _, p := range privateV4 {
			if p.Contains(a) {
				return "a loopback, private, link-local, metadata or reserved address"
			}
		}
		return ""
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), siit.Contains(a), compat.Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
		return privateAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixToFour.Contains(a):
		return privateAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	for _, p := range privateV6 {
		if p.Contains(a) {
			return "a loopback, unique-local, link-local, metadata or reserved IPv6 address"
		}
	}
	return ""
}
