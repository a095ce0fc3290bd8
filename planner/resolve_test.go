package planner

import (
	"strings"
	"testing"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// planOn parses and plans a statement with the test index as the
// planner's Source: the explain text, or the error.
func planOn(t *testing.T, src string, withIndex bool) string {
	t.Helper()
	st, err := lang.ParseOne("q", src)
	if err != nil {
		return "error: " + err.Error()
	}
	pl := &Planner{Cfg: normalform.DefaultConfig()}
	if withIndex {
		pl.Src = testIndex
	}
	q, err := pl.Build(st)
	if err != nil {
		return "error: " + err.Error()
	}
	return Explain(q.Plan)
}

// TestResolveShortened: a shortened transaction hash, bot address or
// structural hash is resolved through the index when the statement is
// planned, and explain shows the whole value; an ambiguous one lists its
// candidates with a count, an unknown one says nothing in the index
// starts with it, one without an index asks for the whole value.
func TestResolveShortened(t *testing.T) {
	const (
		tx  = "0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa"
		bot = "0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74"
	)
	for _, c := range []struct{ q, want string }{
		{"explain show 0x3db1…dcfa", "index lookup: tx " + tx},
		{"explain show 0x3db1a77", "index lookup: tx " + tx}, // odd digits
		{"explain same 0x3db1a776c9b6aa721514c… 0x68b1…1f06", "index lookup: tx " + tx},
		{"explain find where bot = 0xbfee…db74", "index scan: bot = " + bot},
		{"explain find where touches 0xbfee84c", "touches " + bot},
		{"explain anomalies for bot 0xbfee…db74", "anomalies: transactions of " + bot},
		{"show 0x3db1…dcfb", "error: q:1:6: no transaction in the index reads 0x3db1…dcfb (starts with 0x3db1 and ends with dcfb)"},
		{"show 0xffffff", "error: q:1:6: no transaction in the index starts with 0xffffff"},
		{"find where sender = 0xffffff", "error: q:1:21: no bot in the index has an address that starts with 0xffffff: the index keeps bots' (recipients') addresses whole, and the addresses a transaction only sends from or touches by a hashed tag"},
		{"find where bot = 0x000000", "error: q:1:18: 0x000000 is ambiguous: 5 bots in the index start with 0x000000: 0x0000000000007f150bd6f54c40a34d7c3d5e9f56, 0x0000000000009480cded7b47d438e73edf0f67e5, "},
		{"find where bot = 0x00000", "error: q:1:18: 0x00000 is too short to name an address"},
		{"find where bot = 0x0000…", "error: q:1:18: 0x0000 is too short to name an address"},
		{"find where family = 0xffffff", "error: q:1:21: no family hash in the index starts with 0xffffff"},
		{"show 0x3db1a", "error: q:1:6: 0x3db1a is too short to name a transaction hash: write at least 6 of its hex digits"},
	} {
		if got := planOn(t, c.q, true); !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
	// a family hash of the index, by its first digits
	var fam string
	for _, line := range strings.Split(run("count by family limit 1"), "\n") {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "family="); ok {
				fam = v
			}
		}
	}
	if len(fam) != 66 {
		t.Fatalf("no family hash in %q", run("count by family limit 1"))
	}
	if got := planOn(t, "explain find where family = "+fam[:10]+"…"+fam[62:], true); !strings.Contains(got, "family hash = "+fam[:18]+"…") {
		t.Errorf("family %s by its short form:\n%s", fam, got)
	}
	if got := planOn(t, "show 0x3db1…dcfa", false); !strings.Contains(got, "0x3db1…dcfa is shortened: it is resolved through an index, and there is none here (write the whole transaction hash)") {
		t.Errorf("without an index: %s", got)
	}
}
