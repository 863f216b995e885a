package canon

import "testing"

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
