package repl

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/planner"
)

// TestBareWords: exit, quit, \q (with or without ";") leave and help
// helps, with no dot, as a sqlite3 or psql user types them; inside an
// open statement they are the statement's words.
func TestBareWords(t *testing.T) {
	for _, w := range []string{"exit", "quit", `\q`, "EXIT;", " quit ; "} {
		h := newHarness(t, Options{})
		if !h.r.Feed(context.Background(), w) {
			t.Errorf("%q did not leave", w)
		}
	}
	h := newHarness(t, Options{})
	out, errs := h.feed("help")
	if errs != "" || !strings.Contains(out, ".schema") || !strings.Contains(out, ".quit, .exit") {
		t.Errorf("help: %q %q", out, errs)
	}
	// inside a statement, "quit" is not a command: the statement goes on
	// (and fails to parse, naming the word)
	out, errs = h.feed("find arbitrages", "quit", ";")
	if !strings.Contains(errs, `unexpected "quit"`) {
		t.Errorf("quit inside a statement: %q %q", out, errs)
	}
}

// TestTableModes: box, markdown and line print the same rows as table;
// .headers off leaves the header out; .nullvalue fills empty cells.
func TestTableModes(t *testing.T) {
	h := newHarness(t, Options{})
	q := "count by verdict;"
	table, _ := h.feed(q)
	if !strings.HasPrefix(table, "verdict ") {
		t.Fatalf("table: %q", table)
	}
	for _, tc := range []struct {
		lines []string
		re    string
	}{
		{[]string{".mode box", q}, `^┌─+┬─+┬─+┐\n│ verdict +│ transactions │ example +│\n├─+┼─+┼─+┤\n(│ (none|warning|arbitrage) +│ +[0-9]+ +│ 0x[0-9a-f]{64} │\n){3}└─+┴─+┴─+┘\n$`},
		{[]string{".mode markdown", q}, `^\| verdict \| transactions \| example \|\n\| --- \| --- \| --- \|\n(\| (none|warning|arbitrage) \| [0-9]+ \| 0x[0-9a-f]{64} \|\n){3}$`},
		{[]string{".mode line", q}, `^     verdict = (none|warning|arbitrage)\ntransactions = [0-9]+\n     example = 0x[0-9a-f]{64}\n\n`},
		{[]string{".mode table", ".headers off", q}, `^(none|warning|arbitrage) +[0-9]+ +0x[0-9a-f]{64}\n`},
		{[]string{".headers", ".headers on"}, `^off\n$`},
		{[]string{".mode box", ".headers off", q, ".headers on"}, `^┌─+┬─+┬─+┐\n│ (none|warning|arbitrage) `},
		// a transaction with no profit has empty cells: .nullvalue fills them
		{[]string{".mode table", ".nullvalue NULL", "find where bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74;", ".nullvalue"}, `\bnone +NULL +NULL +0 `},
		{[]string{"find where bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74;"}, `\bnone {20,}0 `},
	} {
		out, errs := h.feed(tc.lines...)
		if errs != "" || !regexp.MustCompile(tc.re).MatchString(out) {
			t.Errorf("%q:\n%s(stderr %q)\nwant /%s/", tc.lines, out, errs, tc.re)
		}
	}
	h.feed(".mode table")
	if again, _ := h.feed(q); again != table {
		t.Errorf("back to table: %q, was %q", again, table)
	}
}

// TestFitWidth: a table fitted to a width cuts its widest cells with
// "…" until each line fits; markdown and line keep every value whole.
func TestFitWidth(t *testing.T) {
	long := strings.Repeat("ab", 40)
	rows := func() []planner.Row {
		return []planner.Row{
			{{Name: "tx", Human: long}, {Name: "n", Human: "1"}, {Name: "note", Human: "short"}},
			{{Name: "tx", Human: "x"}, {Name: "n", Human: "22"}, {Name: "note", Human: strings.Repeat("z", 30)}},
		}
	}
	for _, mode := range []string{"table", "box"} {
		var b strings.Builder
		writeTable(&b, mode, rows(), TableStyle{Width: 40})
		for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if n := runes(line); n > 40 {
				t.Errorf("%s: a line of %d runes, over the width 40: %q", mode, n, line)
			}
		}
		if !strings.Contains(b.String(), "…") || strings.Contains(b.String(), long) {
			t.Errorf("%s: the long cell is not cut:\n%s", mode, b.String())
		}
		var whole strings.Builder
		writeTable(&whole, mode, rows(), TableStyle{})
		if !strings.Contains(whole.String(), long) {
			t.Errorf("%s with no width: the long cell is cut:\n%s", mode, whole.String())
		}
	}
	for _, mode := range []string{"markdown", "line"} {
		var b strings.Builder
		writeTable(&b, mode, rows(), TableStyle{Width: 40})
		if !strings.Contains(b.String(), long) {
			t.Errorf("%s: cut a value, it should print them whole:\n%s", mode, b.String())
		}
	}
	if got := cut("abcdef", 4); got != "abc…" {
		t.Errorf("cut: %q", got)
	}
}

// TestOnce: .once FILE sends one statement's result to FILE, and the
// next one to standard output again.
func TestOnce(t *testing.T) {
	h := newHarness(t, Options{})
	f := filepath.Join(t.TempDir(), "once.txt")
	out, errs := h.feed(".once "+f, "count by verdict;", "count by mode;")
	if errs != "" || strings.Contains(out, "verdict") || !strings.HasPrefix(out, "mode ") {
		t.Fatalf("stdout %q stderr %q", out, errs)
	}
	b, err := os.ReadFile(f)
	if err != nil || !strings.HasPrefix(string(b), "verdict ") || strings.Contains(string(b), "mode") {
		t.Fatalf(".once file: %q %v", b, err)
	}
	// a script may not write files
	h.r.script = true
	_, errs = h.feed(".once " + f)
	h.r.script = false
	if !strings.Contains(errs, ".once refused") {
		t.Errorf("a script's .once: %q", errs)
	}
}

// TestSchema: .schema lists every condition of the vocabulary, each with
// a type; the fields over a class list that class's words.
func TestSchema(t *testing.T) {
	h := newHarness(t, Options{})
	out, errs := h.feed(".schema")
	if errs != "" {
		t.Fatal(errs)
	}
	for _, d := range lang.Vocab.Decls(lang.ClassCondition) {
		if d.Alias {
			continue
		}
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(d.Word) + ` +(.+?)  `).FindStringSubmatch(out)
		if m == nil || m[1] == "-" {
			t.Errorf(".schema has no type for %s:\n%s", d.Word, out)
		}
	}
	for _, want := range []string{
		`verdict +` + regexp.QuoteMeta(strings.Join(lang.Vocab.Words(lang.ClassVerdict, lang.Anywhere), "|")) + ` `,
		`pools +integer `,
		`bot +address `,
		`shape +structural hash `,
		`profit +amount of a token `,
		`reason +a reason \([0-9]+ of them`,
	} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(out) {
			t.Errorf(".schema lacks %q:\n%s", want, out)
		}
	}
}

// TestImplicitOrder: a find without order by says in what order its rows
// come, in explain and under a REPL table; with order by, or for a count,
// it says nothing.
func TestImplicitOrder(t *testing.T) {
	h := newHarness(t, Options{})
	for _, tc := range []struct{ line, re string }{
		{"explain find where pools > 2;", `full scan.*\n\(rows in index order: by block, then position in the block; order by METRIC chooses another\)\n$`},
		{"explain find arbitrages;", `\(rows in index order: by tier, then block and position;`},
		{"explain find where profit > 0.01 WETH;", `\(rows in index order: by profit, lowest first;`},
		{"find limit 2;", `\n\(rows in index order: by block, then position in the block; order by METRIC chooses another\)\n$`},
		{"explain find sandwiches;", `\(rows in block order; `},
	} {
		out, errs := h.feed(tc.line)
		if errs != "" || !regexp.MustCompile(tc.re).MatchString(out) {
			t.Errorf("%s:\n%s(stderr %q)\nwant /%s/", tc.line, out, errs, tc.re)
		}
	}
	for _, line := range []string{"explain find order by pools;", "find order by pools limit 2;", "count by verdict;", "find limit 1;", ".mode csv", "find limit 2;"} {
		if out, _ := h.feed(line); strings.Contains(out, "(rows in") {
			t.Errorf("%s states an order:\n%s", line, out)
		}
	}
}

// TestEmptyBaseline: anomalies against a baseline where the bot has no
// transaction says so; with a baseline that holds its transactions it
// does not.
func TestEmptyBaseline(t *testing.T) {
	h := newHarness(t, Options{})
	bot := "0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74"
	out, errs := h.feed("anomalies for bot " + bot + " baseline blocks 1..2;")
	if errs != "" || !strings.Contains(out, "(the baseline, blocks 1..2, holds no transaction of bot "+bot+": every one of its shapes counts as new)") {
		t.Errorf("empty baseline:\n%s%s", out, errs)
	}
	out, _ = h.feed("anomalies for bot " + bot + " baseline blocks 72..74;")
	if strings.Contains(out, "holds no transaction") {
		t.Errorf("a baseline with the bot's transactions:\n%s", out)
	}
}

// TestOnceRead: .once applies to a .read script's results too.
func TestOnceRead(t *testing.T) {
	h := newHarness(t, Options{})
	dir := t.TempDir()
	script := filepath.Join(dir, "s.fq")
	if err := os.WriteFile(script, []byte("count by verdict;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "once.txt")
	out, errs := h.feed(".once "+f, ".read "+script)
	b, _ := os.ReadFile(f)
	if out != "" || errs != "" || !strings.HasPrefix(string(b), "verdict ") {
		t.Errorf("stdout %q stderr %q file %q", out, errs, b)
	}
}
