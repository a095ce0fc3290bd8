package lang

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the grammar block of README.md")

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
	want := Grammar()
	if strings.TrimSpace(got) == strings.TrimSpace(want) {
		return
	}
	if *updateReadme {
		at := i + len(marker)
		out := string(b[:at]) + strings.TrimSpace(want) + "\n" + string(b[at+len(got):])
		if err := os.WriteFile("../README.md", []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's grammar is stale (go test ./lang -run README -update-readme rewrites it):\n%s", want)
}
