package canon

import (
	"strings"
	"testing"
)

func TestLoose(t *testing.T) {
	for _, same := range []string{"SEND_EMAIL", "Send_Email", "send_email ", "\tsend_email", "s\u0435nd_email", "ｓｅｎｄ_ｅｍａｉｌ", "send\u200b_email", "send_\u0435mail\x1b[0m"} {
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
