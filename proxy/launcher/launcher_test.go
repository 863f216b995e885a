package launcher

import "testing"

// TestRunning: the forms a launcher has at run time are launchers, and an
// agent (a binary, a script run by an interpreter or a shell, a package
// manager running anything but a package) is not: walking past it would
// join sessions that are not one.
func TestRunning(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"sh", "-c", "mcpguard --policy p.yaml -- server"}, true},
		{[]string{"/bin/bash", "-lc", "exec mcpguard"}, true},
		{[]string{"/usr/bin/env", "-u", "X", "A=1", "mcpguard"}, true},
		{[]string{"npx", "-y", "mcpguard"}, true},
		{[]string{"npm exec mcpguard --policy p.yaml"}, true},
		{[]string{"node", "/usr/bin/npx", "-y", "mcpguard"}, true},
		{[]string{"/usr/local/bin/node", "/usr/lib/node_modules/npm/bin/npx-cli.js", "mcpguard"}, true},
		{[]string{"node", "/usr/lib/node_modules/npm/bin/npm-cli.js", "exec", "mcpguard"}, true},
		{[]string{"python3", "/usr/bin/pipx", "run", "mcpguard"}, true},
		{[]string{"uv", "tool", "run", "mcpguard"}, true},
		{[]string{"claude", "-p", "hi"}, false},
		{[]string{"node", "/opt/claude-code/cli.js"}, false},
		{[]string{"node", "--max-old-space-size=4096", "npx"}, false},
		{[]string{"bash", "agent.sh"}, false},
		{[]string{"sh"}, false},
		{[]string{"npm", "start"}, false},
		{[]string{"npx"}, false},
		{[]string{"/Applications/My Agent.app/Contents/MacOS/agent"}, false},
		{[]string{"my agent"}, false},
		{nil, false},
		{[]string{""}, false},
	} {
		if got := Running(tc.argv); got != tc.want {
			t.Errorf("Running(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}
