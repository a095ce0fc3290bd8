package lang

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEGrammar keeps the grammar printed in README.md the parser's.
func TestREADMEGrammar(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "The grammar, as the parser prints it:\n\n```\n"
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("README.md has no %q block", strings.TrimSpace(marker))
	}
	s = s[i+len(marker):]
	got := s[:strings.Index(s, "```")]
	if want := Grammar(); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("README.md's grammar is stale; replace it with:\n%s", want)
	}
}
