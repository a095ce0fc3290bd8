package repl

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

func TestComplete(t *testing.T) {
	c := &completer{symbols: symbols(normalform.DefaultConfig()), keywords: append(lang.Keywords(), levels()...)}
	for _, tc := range []struct {
		pending, text string
		prefix        string
		want          []string // nil: no candidates; else exactly these
		has           []string // or: at least these
	}{
		{text: "fi", prefix: "fi", want: []string{"nd "}},
		{text: "FI", prefix: "FI", want: []string{"ND "}},
		{text: "  ", want: []string{"anomalies ", "count ", "explain ", "find ", "match ", "same ", "show "}},
		{text: "explain f", prefix: "f", want: []string{"ind "}},
		{text: "find ", has: []string{"arbitrages ", "warnings ", "where ", "order ", "limit "}},
		{text: "find arbitrages wh", prefix: "wh", want: []string{"ere "}},
		{text: "find where reason le", prefix: "le", want: []string{"ftovers "}},
		{text: "find where reason ", has: []string{"no_cycles ", "builder_payment ", "costs_unknown "}},
		{text: "find where verdict = ", want: []string{"arbitrage ", "none ", "warning "}},
		{text: "find where tier is p", prefix: "p", want: []string{"robable "}},
		{text: "find order by p", prefix: "p", want: []string{"ools "}},
		{text: "count by fa", prefix: "fa", want: []string{"mily "}},
		{text: "count ", has: []string{"bots ", "by ", "sandwiches ", "backruns "}},
		{text: "find sa", prefix: "sa", want: []string{"ndwiches "}},
		{text: "find b", prefix: "b", want: []string{"ackruns "}},
		{text: "count sandwiches by ", want: []string{"block ", "bot ", "sender "}},
		{text: "count backruns by s", prefix: "s", want: []string{"ender "}},
		{text: "show ", want: []string{"block "}},
		{text: "explain show bl", prefix: "bl", want: []string{"ock "}},
		{text: "same 0xab 0xcd at s", prefix: "s", want: []string{"hape "}},
		{text: "show 0xab as tree, st", prefix: "st", want: []string{"eps "}},
		{text: "find where net profit in US", prefix: "US", want: []string{"DC ", "DT "}},
		{text: "find where net profit > 0.5 we", prefix: "we", want: []string{"th "}},
		{text: "find where touches d", prefix: "d", want: []string{"ai "}},
		{text: "find; cou", prefix: "cou", want: []string{"nt "}},
		{pending: "find arbitrages\n", text: "  order ", has: []string{"by "}},
		{pending: "find arbitrages\n", text: "  fi", prefix: "fi", has: []string{"nd "}}, // not a statement start: any keyword
		{pending: "count", text: "by ", has: []string{"family ", "tier "}},
		{text: "find -- a comm", want: nil},
		{text: `show "a st`, want: nil},
		{text: "find zz", prefix: "zz", want: nil},
		{text: ".ti", prefix: ".ti", want: []string{"mer "}},
		{text: ".", prefix: ".", has: []string{"help ", "quit ", "exit ", "tables "}},
		{text: ".mode j", prefix: "j", want: []string{"son "}},
		{text: ".mode ", want: []string{"box ", "csv ", "json ", "line ", "markdown ", "table "}},
		{text: ".timer o", prefix: "o", want: []string{"ff ", "n "}},
		{text: ".help .gr", prefix: ".gr", want: []string{"ammar "}},
		{text: ".nope x", want: nil},
		{pending: "find\n", text: ".ti", prefix: "ti", want: nil}, // inside a statement a dot is not a command
	} {
		t.Run(tc.pending+tc.text, func(t *testing.T) {
			prefix, got := c.complete(tc.pending, tc.text)
			if prefix != tc.prefix {
				t.Errorf("prefix %q, want %q", prefix, tc.prefix)
			}
			switch {
			case tc.has != nil:
				for _, w := range tc.has {
					if !slices.Contains(got, w) {
						t.Errorf("candidates %q lack %q", got, w)
					}
				}
			case !reflect.DeepEqual(got, tc.want):
				t.Errorf("candidates %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompletePaths(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"query.fq", "quux/", ".hidden"} {
		p := filepath.Join(dir, f)
		if strings.HasSuffix(f, "/") {
			os.Mkdir(p, 0o755)
		} else {
			os.WriteFile(p, nil, 0o644)
		}
	}
	c := &completer{}
	prefix, got := c.complete("", ".read "+dir+"/qu")
	if prefix != dir+"/qu" || !reflect.DeepEqual(got, []string{"ery.fq ", "ux/"}) {
		t.Errorf("prefix %q, candidates %q", prefix, got)
	}
	_, got = c.complete("", ".output "+dir+"/")
	if !reflect.DeepEqual(got, []string{"query.fq ", "quux/"}) {
		t.Errorf("hidden files should not be offered: %q", got)
	}
}

// TestCompletionNames checks the completer's lists against the parser
// and the engine, so that they cannot drift apart.
func TestCompletionNames(t *testing.T) {
	kw := lang.Keywords()
	if len(kw) < 40 || !slices.Contains(kw, "find") || !slices.Contains(kw, "order") {
		t.Fatalf("lang.Keywords() = %q", kw)
	}
	for _, s := range starters {
		if !slices.Contains(kw, s) {
			t.Errorf("statement word %q is not a keyword", s)
		}
	}
	const h = "0x" + "3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa"
	parses := func(what string, list []string, tmpl string) {
		for _, w := range list {
			src := strings.ReplaceAll(tmpl, "W", w)
			if _, err := lang.Parse("t", src); err != nil {
				t.Errorf("%s %q: %q does not parse: %v", what, w, src, err)
			}
		}
	}
	parses("statement word", []string{"find"}, "explain W")
	parses("find kind", findKinds, "find W")
	parses("count", countWhat, "count W by bot")
	parses("group", groups, "count by W")
	parses("grouping of sandwiches", findingGroups, "count sandwiches by W")
	parses("grouping of back-runs", findingGroups, "count backruns by W")
	parses("show", showWhat, "show W 137")
	for _, m := range metrics {
		if m == "gross" || m == "net" {
			m += " profit"
		}
		parses("metric", []string{m}, "find order by W")
	}
	parses("view", views, "show "+h+" as W")
	parses("level", levels(), "same "+h+" "+h+" at W")
	parses("verdict", verdicts(), "find where verdict = W")
	parses("tier", tiers(), "find where tier = W")
	parses("path", paths(), "find where path = W")
	parses("mode", modeNames(), "find where mode = W")
	parses("reason", reasons, "find where reason W")
	cfg := normalform.DefaultConfig()
	syms := symbols(cfg)
	for _, want := range []string{"ETH", "WETH", "USDC"} {
		if !slices.Contains(syms, want) {
			t.Errorf("symbols %q lack %s", syms, want)
		}
	}
	for _, s := range syms {
		if _, ok := cfg.TokenBySymbol(s); !ok {
			t.Errorf("symbol %s does not resolve", s)
		}
	}
}

// TestCompleteOpenLake: .open offers --lake as its first argument, beside
// the paths, and after --lake the paths only.
func TestCompleteOpenLake(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "lake"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &completer{}
	for _, tc := range []struct {
		text, prefix string
		want         []string
	}{
		{".open --", "--", []string{"lake "}},
		{".open -", "-", []string{"-lake "}},
		{".open --lake " + dir + "/la", dir + "/la", []string{"ke/"}},
		{".open " + dir + "/", dir + "/", []string{"lake/"}},
		{".open --lake --", "--", nil}, // --lake comes once
	} {
		prefix, got := c.complete("", tc.text)
		if prefix != tc.prefix || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: prefix %q, candidates %q; want %q, %q", tc.text, prefix, got, tc.prefix, tc.want)
		}
	}
	// With nothing typed after .open, --lake is offered among the paths.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	if _, got := c.complete("", ".open "); !reflect.DeepEqual(got, []string{"--lake ", "lake/"}) {
		t.Errorf(".open with no argument: candidates %q, want --lake and the paths", got)
	}
}
