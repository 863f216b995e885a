package pins

import (
	"crypto/sha256"
	"sync"

	"github.com/mcpguard/mcpguard/rules/lint"
)

// LintCache remembers lint.Item's findings by the SHA-256 of the item's
// exact bytes, for every session of one policy: a server that lists the
// same tools to each new session is linted once. The key is the whole
// item, _meta included, so an item that differs in any byte is linted
// afresh. It holds at most 4×maxItems entries (bounded memory against a
// server that invents new items); past that, items are linted uncached.
// Safe for concurrent use.
type LintCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte][]lint.Finding
}

// NewLintCache returns an empty cache.
func NewLintCache() *LintCache {
	return &LintCache{m: map[[sha256.Size]byte][]lint.Finding{}}
}

// Item is lint.Item(raw), from the cache when raw was linted before.
// Callers must not modify the returned slice.
func (c *LintCache) Item(raw []byte) []lint.Finding {
	key := sha256.Sum256(raw)
	c.mu.Lock()
	findings, done := c.m[key]
	c.mu.Unlock()
	if done {
		return findings
	}
	findings = lint.Item(raw)
	c.mu.Lock()
	if len(c.m) < 4*maxItems {
		c.m[key] = findings
	}
	c.mu.Unlock()
	return findings
}
