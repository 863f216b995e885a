package secrets

import (
	"strings"
	"testing"
)

func TestRT2Fold(t *testing.T) {
	sc, _ := New(Options{})
	for _, s := range []string{
		`asana_client_id = "5565625988071529"`,
		`aſana_client_id = "5565625988071529"`,
		`session_token = s8Zq3vXk2LmN9pQ4rT7wY1bC6dF0gH5jK8mN2pR4tV7xZ9aB3cE6fH8jL1nP4qS7uW0yA2dG5hK8mP1rT4vX7zC0eG3iL6oR9uX2aD5gJ8lO1`,
		`ſeſſion_token = s8Zq3vXk2LmN9pQ4rT7wY1bC6dF0gH5jK8mN2pR4tV7xZ9aB3cE6fH8jL1nP4qS7uW0yA2dG5hK8mP1rT4vX7zC0eG3iL6oR9uX2aD5gJ8lO1`,
		`session_to` + "\u212a" + `en = s8Zq3vXk2LmN9pQ4rT7wY1bC6dF0gH5jK8mN2pR4tV7xZ9aB3cE6fH8jL1nP4qS7uW0yA2dG5hK8mP1rT4vX7zC0eG3iL6oR9uX2aD5gJ8lO1`,
		`Authorization: Bearer ` + strings.Repeat("aB3x", 8),
		`Authorization: Bearer ` + strings.Repeat("aB3x", 8),
	} {
		t.Logf("%q -> %v", s[:20], sc.Find(s))
	}
}
