package links

import (
	"net/url"
	"strings"
)

// An image is an exfiltration channel when someone who can read its
// request learns what the URL carries: the host is the attacker's, or a
// service that fetches a URL the image names on the attacker's behalf.
// A status badge (build, coverage, version) from a badge service is
// neither: the service is not the attacker, and it draws the badge from
// public project metadata. So a README's badges come back unchanged,
// while a badge that names another URL for the service to fetch
// (shields.io's endpoint and dynamic badges, ?url=...) is removed like
// any other image.

// badgeOnly are services whose every image is a badge.
var badgeOnly = newHostSet([]string{"img.shields.io", "badgen.net", "flat.badgen.net", "badge.fury.io",
	"packagephobia.com", "badges.gitter.im", "deepwiki.com", "travis-ci.org", "travis-ci.com", "api.travis-ci.org", "api.travis-ci.com"})

// badgePaths are services that serve badges under a path with "badge"
// in it among other pages (a GitHub Actions workflow's badge.svg,
// codecov's /graph/badge.svg).
var badgePaths = newHostSet([]string{"github.com", "codecov.io", "coveralls.io", "circleci.com", "dl.circleci.com", "ci.appveyor.com", "app.codacy.com",
	"api.codacy.com", "snyk.io", "pkg.go.dev", "goreportcard.com", "readthedocs.org", "sonarcloud.io",
	"gitlab.com", "dev.azure.com", "api.scorecard.dev", "api.securityscorecards.dev", "api.netlify.com", "www.bestpractices.dev", "bestpractices.coreinfrastructure.org"})

// isBadge reports whether raw, a URL whose target is t, is a badge of a
// badge service that names no other URL.
func isBadge(raw string, t target) bool {
	if !t.external || t.host == "" {
		return false
	}
	if !badgeOnly.allows(t) && !(badgePaths.allows(t) && strings.Contains(strings.ToLower(raw), "badge")) {
		return false
	}
	return !namesURL(raw)
}

// namesURL reports whether a URL carries another URL or an address for
// its server to fetch: a second "//" or a url-like parameter, after up to
// three rounds of percent-decoding.
func namesURL(raw string) bool {
	u := strings.ToLower(raw)
	if i := strings.Index(u, "//"); i >= 0 {
		u = u[i+2:]
	}
	for range 4 {
		if strings.Contains(u, "//") || strings.Contains(u, "\\") ||
			strings.Contains(u, "url=") || strings.Contains(u, "/endpoint") || strings.Contains(u, "/dynamic/") ||
			strings.Contains(u, "uri=") || strings.Contains(u, "src=") {
			return true
		}
		d, err := url.PathUnescape(u)
		if err != nil {
			return true
		}
		if d == u {
			return false
		}
		u = d
	}
	return true
}

// allowsImage reports whether an image at raw may load, and its target.
func (f *Filter) allowsImage(raw string) (target, bool) {
	t := targetOf(raw)
	return t, f.imageHosts.allows(t) || isBadge(raw, t)
}
