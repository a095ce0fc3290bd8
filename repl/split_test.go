package repl

import (
	"context"
	"github.com/flowq/flowq/lang"
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		src   string
		stmts []string // the statements' texts
		rest  string
		open  bool
	}{
		{"empty", "", nil, "", false},
		{"one word is open", "find", nil, "find", true},
		{"closed", "find;", []string{"find;"}, "", false},
		{"two on a line", "find limit 1; count by verdict;", []string{"find limit 1;", " count by verdict;"}, "", false},
		{"one closed then one open", "find; count", []string{"find;"}, " count", true},
		{"over lines", "find arbitrages\n  where pools > 2\n  limit 3;", []string{"find arbitrages\n  where pools > 2\n  limit 3;"}, "", false},
		{"dash comment hides ;", "find -- not the end;", nil, "find -- not the end;", true},
		{"hash comment hides ;", "find # not the end;", nil, "find # not the end;", true},
		{"comment ends at the line", "find -- a comment;\n;", []string{"find -- a comment;\n;"}, "", false},
		{"; after a comment line", "-- top\nfind;", []string{"-- top\nfind;"}, "", false},
		{"only a comment is not open", "-- just this", nil, "-- just this", false},
		{"comment after the last ;", "find; -- trailing ; comment", []string{"find;"}, " -- trailing ; comment", false},
		{"string hides ;", `show "a;b`, nil, `show "a;b`, true},
		{"closed string", `show "a;b";`, []string{`show "a;b";`}, "", false},
		{"escaped quote", `show "a\";b";x`, []string{`show "a\";b";`}, "x", true},
		{"one dash is code", "find -x;", []string{"find -x;"}, "", false},
		{"empty statements", " ; ;", []string{" ;", " ;"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, rest, _ := split(tc.src)
			var got []string
			for _, p := range ps {
				got = append(got, p.Text)
				if tc.src[p.Offset:p.Offset+len(p.Text)] != p.Text {
					t.Errorf("piece %q: offset %d does not point at it", p.Text, p.Offset)
				}
			}
			if !reflect.DeepEqual(got, tc.stmts) {
				t.Errorf("statements %q, want %q", got, tc.stmts)
			}
			if rest != tc.rest {
				t.Errorf("rest %q, want %q", rest, tc.rest)
			}
			if o := open(tc.src); o != tc.open {
				t.Errorf("open = %v, want %v", o, tc.open)
			}
			// The REPL, which scans its input a line at a time, cuts the
			// same statements (those with more than comments) and leaves
			// the same one open.
			r := New(Options{})
			var ran []string
			r.history = func(e string) { ran = append(ran, e) }
			for _, line := range strings.Split(tc.src, "\n") {
				r.Feed(context.Background(), line)
			}
			var want []string
			for _, st := range tc.stmts {
				if !blank(st) {
					want = append(want, historyEntry(st))
				}
			}
			if !reflect.DeepEqual(ran, want) {
				t.Errorf("the REPL ran %q, want %q", ran, want)
			}
			if r.Pending() != tc.open {
				t.Errorf("the REPL has an open statement: %v, want %v", r.Pending(), tc.open)
			}
		})
	}
}

func TestSplitState(t *testing.T) {
	for src, want := range map[string]lang.LexState{
		"find":          lang.InCode,
		"find -- x":     lang.InComment,
		"find -- x\n":   lang.InCode,
		"find # x":      lang.InComment,
		`show "a`:       lang.InString,
		`show "a\`:      lang.InEscape,
		`show "a" -- "`: lang.InComment,
	} {
		if _, _, got := split(src); got != want {
			t.Errorf("split(%q) ends in state %d, want %d", src, got, want)
		}
	}
}

func TestHistoryEntry(t *testing.T) {
	for in, want := range map[string]string{
		"find arbitrages\n  where pools > 2 -- big ones\n  limit 3;": "find arbitrages where pools > 2 limit 3;",
		"  find;  ":                             "find;",
		"-- why\n# and how\ncount\tby verdict;": "count by verdict;",
		`show "a  b -- c";`:                     `show "a  b -- c";`,
		"show \"a\nb\";":                        `show "a b";`,
		"find -- only a comment\n;":             "find ;",
	} {
		if got := historyEntry(in); got != want {
			t.Errorf("historyEntry(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBlank(t *testing.T) {
	for src, want := range map[string]bool{
		"":               true,
		" \n\t":          true,
		"-- c\n# d":      true,
		";":              true,
		"find":           false,
		"-- c\nfind":     false,
		`""`:             false,
		"# ; \n -- ; \n": true,
	} {
		if got := blank(src); got != want {
			t.Errorf("blank(%q) = %v, want %v", src, got, want)
		}
	}
}
