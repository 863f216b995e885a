package secrets

import (
	"encoding/base64"
	"strings"
)

// publicFixture reports whether a finding is a credential-shaped value that
// grants nothing, which documentation and test suites are full of: an
// unsigned JWT (alg none, or no signature) and the RFC 7519 / jwt.io
// example token, signed with a published key.
func publicFixture(rule, secret string) bool {
	if rule != "jwt" {
		return false
	}
	parts := strings.Split(strings.TrimRight(secret, "\n"), ".")
	if len(parts) < 3 || parts[2] == "" {
		return true
	}
	if parts[2] == "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c" {
		return true
	}
	header, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[0], "="))
	if err != nil {
		return false
	}
	h := strings.ReplaceAll(strings.ToLower(string(header)), " ", "")
	return strings.Contains(h, `"alg":"none"`)
}
