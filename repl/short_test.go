package repl

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Two bots that share a 4+4 short form (0xbfee…db74): the scenario bot and
// a lookalike that keeps its first and last four digits. Every table that
// lists both names them apart; a table with one of them keeps the 4+4 form.
func TestTableNamesCollidingBotsApart(t *testing.T) {
	dir := t.TempDir()
	orig, err := os.ReadFile("../examples/scenarios/geth/two_pool_arb.json")
	if err != nil {
		t.Fatal(err)
	}
	tri, err := os.ReadFile("../examples/scenarios/geth/triangular_arb.json")
	if err != nil {
		t.Fatal(err)
	}
	bot := regexp.MustCompile(`(?i)bfee84ce47c0376b79c579b36ff80ac3c5f6db74`)
	look := bot.ReplaceAll(tri, []byte("bfee"+strings.Repeat("0", 32)+"db74"))
	if string(look) == string(tri) {
		t.Fatal("the triangular scenario does not name the bot")
	}
	for name, data := range map[string][]byte{"orig.json": orig, "look.json": look} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, Options{Index: testIndex(t, dir)})
	for _, q := range []string{"find arbitrages;", "find arbitrages; count by bot;"} {
		out, errs := h.feed(q)
		if errs != "" {
			t.Fatalf("%s: %s", q, errs)
		}
		if strings.Contains(out, "0xbfee…db74") || !strings.Contains(out, "0xbfee8…6db74") || !strings.Contains(out, "0xbfee0…0db74") {
			t.Errorf("%s: the two bots are not named apart:\n%s", q, out)
		}
	}
	// One bot in the table: nothing to widen.
	out, errs := h.feed("find arbitrages where pools = 2;")
	if errs != "" || !strings.Contains(out, " 0xbfee…db74\n") {
		t.Errorf("one bot: want its 4+4 form, got %q (stderr %q)", out, errs)
	}
	// Machine output keeps whole addresses.
	h.feed(".mode csv")
	out, _ = h.feed("find arbitrages;")
	if !strings.Contains(out, "0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74") || !strings.Contains(out, "0xbfee"+strings.Repeat("0", 32)+"db74") {
		t.Errorf("csv: %s", out)
	}
}
