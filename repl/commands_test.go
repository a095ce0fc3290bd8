package repl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		for _, n := range append([]string{c.name}, c.aliases...) {
			if !regexp.MustCompile(`^\.[a-z]+$`).MatchString(n) {
				t.Errorf("command name %q: want a dot and lower-case letters", n)
			}
			if seen[n] {
				t.Errorf("%s is in the table twice", n)
			}
			seen[n] = true
			if lookup(n) != c || lookup(strings.TrimPrefix(n, ".")) != c {
				t.Errorf("lookup(%q) does not find its command", n)
			}
		}
		if c.help == "" || c.run == nil {
			t.Errorf("%s: no help or no run", c.name)
		}
		if c.min > 0 && c.args == "" {
			t.Errorf("%s takes arguments but does not name them", c.name)
		}
		if c.max >= 0 && c.max < c.min {
			t.Errorf("%s: max %d < min %d", c.name, c.max, c.min)
		}
	}
	// what the brief asks for, at least
	for _, n := range []string{".help", ".mode", ".timer", ".open", ".ingest", ".explain", ".grammar", ".tables", ".stats", ".read", ".output", ".quit", ".exit"} {
		if !seen[n] {
			t.Errorf("%s is missing", n)
		}
	}
}

// TestHelpIsTheTable: .help lists every command of the table, with its
// arguments and help; .help NAME tells about one.
func TestHelpIsTheTable(t *testing.T) {
	h := newHarness(t, Options{})
	out, errs := h.feed(".help")
	if errs != "" {
		t.Fatal(errs)
	}
	for _, c := range commands {
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(c.usage()) + `.*  ` + regexp.QuoteMeta(c.help) + `$`)
		if !line.MatchString(out) {
			t.Errorf(".help lacks a line for %s:\n%s", c.name, out)
		}
		for _, a := range c.aliases {
			if !strings.Contains(out, ", "+a) {
				t.Errorf(".help does not show the alias %s", a)
			}
		}
	}
	for _, w := range []string{"show block N", "find sandwiches|backruns", "count sandwiches|backruns by bot|sender|block"} {
		if !strings.Contains(out, w) {
			t.Errorf(".help does not name the statement %q:\n%s", w, out)
		}
	}
	out, _ = h.feed(".help timer")
	if out != ".timer [on|off]\n    print (or not) each statement's row count and time\n" {
		t.Errorf(".help timer = %q", out)
	}
	out, _ = h.feed(".help .exit")
	if !strings.HasPrefix(out, ".quit\n") || !strings.Contains(out, "also: .exit") {
		t.Errorf(".help .exit = %q", out)
	}
}

// TestHelpWords: .help names a class of the language's words (verdicts,
// tiers, groupings, …) and lists them from lang.Vocab, each with its help.
func TestHelpWords(t *testing.T) {
	h := newHarness(t, Options{})
	out, errs := h.feed(".help tiers")
	if errs != "" {
		t.Fatal(errs)
	}
	for _, w := range []string{"confirmed", "probable", "attempted", "uncertain"} {
		if !regexp.MustCompile(`(?m)^` + w + `  +a (arbitrage|warning) graded ` + w + `$`).MatchString(out) {
			t.Errorf(".help tiers lacks %s:\n%s", w, out)
		}
	}
	out, _ = h.feed(".help groupings")
	if !strings.Contains(out, "sender") || !strings.Contains(out, "the family hash") || !strings.Contains(out, "(also block findings)") {
		t.Errorf(".help groupings = %q", out)
	}
	if _, errs = h.feed(".help nonsense"); !strings.Contains(errs, `unknown command "nonsense"`) {
		t.Errorf(".help nonsense: %q", errs)
	}
}

// starR is the star scenario's transaction (examples/scenarios/geth/star_r.json).
const starR = "0x5e4c49d6b3a48d39d0fa594e1871daf856f678757db5de96f59ad2410248e102"

func TestCommands(t *testing.T) {
	h := newHarness(t, Options{})
	dir := t.TempDir()
	script := filepath.Join(dir, "s.fq")
	if err := os.WriteFile(script, []byte("-- a script\nfind arbitrages limit 1;\ncount by verdict;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.fq")
	if err := os.WriteFile(bad, []byte("find;\nfnd;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resultFile := filepath.Join(dir, "out.csv")
	txs := exampleTxs(t)
	for _, tc := range []struct {
		lines    []string
		out, err string // regexps; empty: nothing printed
	}{
		{lines: []string{".mode"}, out: `^table\n$`},
		{lines: []string{".mode json", "find limit 1;"}, out: `^\{"tx":"0x[0-9a-f]{64}","block":[0-9]+,.*\}\n$`},
		{lines: []string{".mode csv", "find limit 1;"}, out: `^tx,block,verdict,.*\n0x[0-9a-f]{64},[0-9]+,`},
		{lines: []string{".mode table", ".mode"}, out: `^table\n$`},
		{lines: []string{".mode xml"}, err: `^unknown mode "xml": want table, json, csv, box, markdown, line\n$`},
		{lines: []string{".timer on", "find limit 2;", ".timer off"}, out: `\n\(2 rows, [0-9.]+[µnm]?s\)\n$`},
		{lines: []string{".timer"}, out: `^off\n$`},
		{lines: []string{".timer maybe"}, err: `^usage: \.timer on\|off\n$`},
		{lines: []string{".explain find where pools > 2"}, out: `filter: pools > 2\n└─ full scan`},
		{lines: []string{".explain"}, err: `^usage: \.explain QUERY\n$`},
		{lines: []string{".grammar"}, out: `(?m)^Program = .*\n(.*\n)*Statement = `},
		{lines: []string{".stats"}, out: fmt.Sprintf(`^index .*: %[1]d transactions\n.*kind +keys +key bytes +value bytes\n(?s:.*)\n +tx +%[1]d `, txs)},
		{lines: []string{".tables"}, out: fmt.Sprintf(`: %d transactions\n`, txs)},
		{lines: []string{".read " + script}, out: `^tx .*\n0x.*\nverdict +transactions +example\n`},
		{lines: []string{".read " + bad}, err: `^` + regexp.QuoteMeta(bad) + `:2:1: unexpected "fnd"`}, // parsed whole before it runs
		{lines: []string{".read /no/such/file"}, err: `no such file`},
		{lines: []string{".output " + resultFile, "count by verdict;", ".output stdout", "find limit 1;"}, out: `^tx +block`},
		{lines: []string{".nope"}, err: `^unknown command "\.nope": \.help lists the commands\n$`},
		{lines: []string{". mode"}, err: `^unknown command "\.": \.help lists the commands\n$`},
		{lines: []string{".help nope"}, err: `^unknown command "nope"`},
		{lines: []string{".grammar extra"}, err: `^usage: \.grammar\n$`},
		{lines: []string{".open"}, err: `^usage: \.open \[--lake\] PATH\n$`},
		{lines: []string{".open a b"}, err: `^usage: \.open \[--lake\] PATH\n$`},
		{lines: []string{".open --lake " + dir}, err: `^\.open --lake: this REPL cannot open a lake\n$`},
		{lines: []string{".status"}, out: `^index .* \(Badger\)\n$`},
		{lines: []string{".ingest /no/such/dir"}, err: `no such file or directory`},
		{lines: []string{".draw " + starR + " tree " + filepath.Join(dir, "star.dot")}, err: `^reduced tree of 0x5e4c49d6.* written to .*star\.dot\n$`},
		{lines: []string{".draw " + starR + " " + filepath.Join(dir, "graph.dot")}, err: `^transfer graph of 0x5e4c49d6.* written to .*graph\.dot\n$`},
		{lines: []string{".draw " + starR + " tree pic.jpg"}, err: `^pic\.jpg: name the file \.dot, \.svg or \.png\n$`},
		{lines: []string{".draw " + starR + " side x.dot"}, err: `^view "side": want graph or tree\n$`},
		{lines: []string{".draw 0x1234 x.dot"}, err: `^transaction "0x1234": `},
		{lines: []string{".draw 0x" + strings.Repeat("0", 64) + " x.dot"}, err: `^transaction 0x0{64}: `},
	} {
		t.Run(strings.Join(tc.lines, "|"), func(t *testing.T) {
			out, errs := h.feed(tc.lines...)
			if !regexp.MustCompile(tc.out).MatchString(out) || (tc.out == "" && out != "") {
				t.Errorf("stdout:\n%s\nwant /%s/", out, tc.out)
			}
			if !regexp.MustCompile(tc.err).MatchString(errs) || (tc.err == "" && errs != "") {
				t.Errorf("stderr:\n%s\nwant /%s/", errs, tc.err)
			}
		})
	}
	for _, f := range []string{"star.dot", "graph.dot"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.HasPrefix(string(b), "digraph ") || !strings.Contains(string(b), "0x5e4c49d6") {
			t.Errorf(".draw wrote %s: %.80q (%v)", f, b, err)
		}
	}
	b, err := os.ReadFile(resultFile)
	if err != nil || !regexp.MustCompile(`^verdict +transactions +example\n(none|warning|arbitrage) +[0-9]+ +0x[0-9a-f]{64}\n`).Match(b) {
		t.Errorf(".output file holds %q (%v)", b, err)
	}
	if h.r.Feed(context.Background(), ".quit") != true || h.r.Feed(context.Background(), ".exit") != true {
		t.Error(".quit and .exit should stop the REPL")
	}
}

// TestOpenAndIngest: .open a new index, .ingest into it, query it, and
// .open the first one again.
func TestOpenAndIngest(t *testing.T) {
	h := newHarness(t, Options{})
	first := h.r.ix.Path()
	dir := filepath.Join(t.TempDir(), "new")
	out, errs := h.feed(".open " + dir)
	if errs != "" || out != "index "+dir+": new and empty (.ingest FILE|DIR fills it)\n" {
		t.Fatalf(".open: %q %q", out, errs)
	}
	out, _ = h.feed("find;")
	if out != "(no rows)\n" {
		t.Fatalf("a new index should be empty, got %q", out)
	}
	out, errs = h.feed(".ingest ../examples/mainnet")
	if errs != "" || !regexp.MustCompile(`^4 transactions stored, 0 skipped .* into `+regexp.QuoteMeta(dir)+`\n$`).MatchString(out) {
		t.Fatalf(".ingest: %q %q", out, errs)
	}
	out, _ = h.feed(".stats")
	if !strings.Contains(out, ": 4 transactions\n") {
		t.Fatalf("after .ingest: %q", out)
	}
	out, _ = h.feed(".ingest ../examples/mainnet")
	if !strings.HasPrefix(out, "0 transactions stored, 4 skipped") {
		t.Fatalf("a second .ingest should skip: %q", out)
	}
	_, errs = h.feed(".open " + dir)
	if !strings.Contains(errs, "already open") {
		t.Fatalf("opening the open index again: %q", errs)
	}
	h.feed(".open " + first)
	out, _ = h.feed(".stats")
	if !strings.Contains(out, fmt.Sprintf(": %d transactions\n", exampleTxs(t))) {
		t.Fatalf("back to the first index: %q", out)
	}
}
