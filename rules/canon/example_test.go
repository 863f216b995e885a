package canon_test

import (
	"fmt"

	"github.com/mcpguard/mcpguard/rules/canon"
)

// Text removes what a terminal or a model would read differently from what
// a person sees: escape sequences that recolour or hide text, bidi
// overrides, controls. Ordinary text, in any script, is kept as it is.
func ExampleText() {
	fmt.Printf("%q\n", canon.Text("build \x1b[8mhidden\x1b[0m ok\u202e"))
	fmt.Printf("%q\n", canon.Text("línea 1\n\tçà va, 東京"))
	// Output:
	// "build hidden ok"
	// "línea 1\n\tçà va, 東京"
}

// Path keeps a path to plain characters, so a file name cannot smuggle
// shell or markdown syntax into what the agent reads next.
func ExamplePath() {
	fmt.Println(canon.Path("src/main.go; rm -rf ~"))
	// Output:
	// src/main.go??rm?-rf??
}
