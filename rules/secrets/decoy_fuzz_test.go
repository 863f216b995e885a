package secrets

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzDecoyPrefix: text before a credential, on lines of its own, does
// not hide it: whenever Find finds something in a sample s of a rule's
// regex, Find of prefix+"\n"+s finds something that reaches into s, and
// RawClean of it as a JSON string is false. The fuzzer chooses the
// prefix (a 0 byte stands for the rule's keyword, so decoys come
// cheap) and the rule.
func FuzzDecoyPrefix(f *testing.F) {
	sc, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(7, 8))
	var samples []string
	var keywords []string
	for _, r := range sc.rules {
		for _, s := range quickCorpus(f, r, rnd)[:1] {
			if len(sc.Find(s)) > 0 && !strings.Contains(s, "\n") {
				samples, keywords = append(samples, s), append(keywords, r.keywords[0])
			}
		}
	}
	for i := range samples {
		if raceEnabled && i%3 != 0 {
			continue // under -race, a third of the seeds (as TestQuickIsSound)
		}
		f.Add(uint16(i), "\x00 "+strings.Repeat("q", 440))
		f.Add(uint16(i), strings.Repeat("\x00=", 30))
	}
	f.Fuzz(func(t *testing.T, which uint16, prefix string) {
		i := int(which) % len(samples)
		s := samples[i]
		prefix = strings.ReplaceAll(prefix, "\x00", keywords[i])
		text := prefix + "\n" + s
		at := len(prefix) + 1
		if !slices.ContainsFunc(sc.Find(text), func(f Finding) bool { return f.End > at }) {
			t.Fatalf("Find passes over %q after %q", s, prefix)
		}
		q, err := jsontext.AppendQuote(nil, text)
		if err == nil && sc.RawClean([]byte(`{"t":`+string(q)+`}`)) {
			t.Fatalf("RawClean passes over %q after %q", s, prefix)
		}
	})
}
