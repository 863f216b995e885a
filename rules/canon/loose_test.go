package canon

import (
	pathpkg "path"
	"strings"
	"testing"
)

func TestLoose(t *testing.T) {
	for _, same := range []string{"SEND_EMAIL", "Send_Email", "send_email ", "\tsend_email", "s\u0435nd_email", "ｓｅｎｄ_ｅｍａｉｌ", "send\u200b_email", "send_\u0435mail\x1b[0m", "S\u0415ND_\u0415MAIL", "\u0405END_EMAIL"} {
		if Loose(same) != Loose("send_email") {
			t.Errorf("Loose(%q) = %q, want %q", same, Loose(same), Loose("send_email"))
		}
	}
	for _, other := range []string{"send_emails", "sendemail", "send-email", "read_email"} {
		if Loose(other) == Loose("send_email") {
			t.Errorf("Loose(%q) reads as send_email", other)
		}
	}
}

// FuzzLoose: a name and its ASCII upper case, with spaces around it, read
// alike; Loose never panics on any input.
func FuzzLoose(f *testing.F) {
	for _, s := range []string{"send_email", "s\u0435nd_email", "ｓｅｎｄ", "wi\u202epe", "\x1b[31mrm\x1b[0m", "", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := Loose(s)
		ascii := true
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] >= 0x7F {
				ascii = false
			}
		}
		if ascii && Loose(" "+strings.ToUpper(s)+" ") != l {
			t.Fatalf("Loose(%q) = %q, but its upper case reads %q", s, l, Loose(" "+strings.ToUpper(s)+" "))
		}
	})
}

// TestLooseGlob: a look-alike of a name a pattern matches matches the
// pattern's LooseGlob; other names do not; metacharacters keep working.
func TestLooseGlob(t *testing.T) {
	for _, c := range []struct {
		pattern string
		match   []string
		not     []string
	}{
		{"git_*", []string{"git_push", "g\u0456t_push", "\u0261it_push", "GIT_PUSH", "gіt_рush", "GIT_PUS\u041d", "\u13c0IT_PUSH"}, []string{"gitpush", "github_push", "xgit_push"}},
		{"*_email", []string{"send_email", "send_\u0435mail", "a_ｅｍａｉｌ"}, []string{"send_emails", "email"}},
		{"rm?", []string{"rmx", "rrnx"}, []string{"rm", "rmxy"}},
		{"[ab]*", []string{"abc", "Bz"}, []string{"cz"}},
		{`a\*b`, []string{"a*b"}, []string{"axb"}},
		{"x[", nil, []string{"x["}},
	} {
		g := LooseGlob(c.pattern)
		for _, n := range c.match {
			if ok, err := pathpkg.Match(g, Loose(n)); !ok || err != nil {
				t.Errorf("%q (LooseGlob %q) does not match %q (Loose %q): %v", c.pattern, g, n, Loose(n), err)
			}
		}
		for _, n := range c.not {
			if ok, _ := pathpkg.Match(g, Loose(n)); ok {
				t.Errorf("%q (LooseGlob %q) matches %q (Loose %q)", c.pattern, g, n, Loose(n))
			}
		}
	}
}

// FuzzLooseGlob: LooseGlob never panics, keeps a good pattern good, and a
// pattern without metacharacters matches its own name under Loose.
func FuzzLooseGlob(f *testing.F) {
	for _, s := range []string{"git_*", "[a-z]*", `a\*`, "x[", "[^]a]?", "ｇｉｔ_*", "\u0261it_[ab]", "m*rn"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		g := LooseGlob(pattern)
		if _, err := pathpkg.Match(Fold(pattern), ""); err == nil {
			if _, err := pathpkg.Match(g, ""); err != nil {
				t.Fatalf("LooseGlob(%q) = %q is a bad pattern: %v", pattern, g, err)
			}
		}
		if !strings.ContainsAny(pattern, `*?[\`) {
			if ok, err := pathpkg.Match(g, Loose(pattern)); !ok || err != nil {
				t.Fatalf("LooseGlob(%q) = %q does not match Loose(%q) = %q", pattern, g, pattern, Loose(pattern))
			}
		}
	})
}
