package agentconfig

import (
	"strings"
	"testing"
)

func TestUnpinned(t *testing.T) {
	for _, argv := range [][]string{
		{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/src"},
		{"npx", "-y", "@playwright/mcp@latest"},
		{"npx", "-y", "pkg@^1.2.0"},
		{"/usr/bin/npx", "--yes", "--package=pkg@latest", "cmd"},
		{"pnpm", "dlx", "pkg"},
		{"bunx", "pkg@next"},
		{"uvx", "mcp-server-fetch"},
		{"uvx", "mcp-server-fetch>=1.0"},
		{"uvx", "--from", "mcp-server-git", "mcp-server-git", "--repository", "."},
		{"uv", "tool", "run", "mcp-server-time"},
		{"pipx", "run", "mcp-server-time"},
		{"docker", "run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/github/github-mcp-server"},
		{"podman", "run", "-i", "mcp/fetch:latest"},
	} {
		if Unpinned(argv) == "" {
			t.Errorf("%q taken for pinned", argv)
		}
	}
	for _, argv := range [][]string{
		{"npx", "-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/src"},
		{"npx", "-y", "pkg@1.2.3"},
		{"npx", "./local/script.js"},
		{"uvx", "mcp-server-fetch==2025.4.7"},
		{"uvx", "mcp-server-fetch@2025.4.7"},
		{"uvx", "--from", "mcp-server-git==1.0.0", "mcp-server-git"},
		{"docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server@sha256:" + strings.Repeat("a", 64)},
		{"node", "server.js"},
		{"/opt/bin/server"},
		{"docker", "ps"},
	} {
		if why := Unpinned(argv); why != "" {
			t.Errorf("%q flagged: %s", argv, why)
		}
	}
}
