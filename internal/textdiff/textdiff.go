// Package textdiff shows where two texts first differ, for tests that
// compare output with a golden file.
package textdiff

import (
	"fmt"
	"strings"
)

// FirstLine returns the first line where got differs from want, both
// quoted, with its number; "(equal)" when they do not differ.
func FirstLine(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, a, b)
		}
	}
	return "(equal)"
}
