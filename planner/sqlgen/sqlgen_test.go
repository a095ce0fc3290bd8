package sqlgen

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

var update = flag.Bool("update", false, "rewrite testdata/*.sql")

// goldenStatements cover every statement kind and condition the backend
// compiles.
var goldenStatements = []string{
	"find arbitrages where net profit > 0.05 WETH order by net profit desc limit 5",
	"find where gross profit in 0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2 >= 1000 and pools >= 3 and not has reason leftovers",
	"find where touches USDC or touches 0x31ff89753286d7a7284086ad1ee2d98594ab31a0",
	"find where sender != 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 and bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 and blocks 70..80",
	"find where tier = attempted and mode = receipts and path = rotation and flashloan order by block desc",
	"find where family = 0xa009e979e2fbd1edc8c7caedfb704dddf9181cfca18dd04059547acf8de47527 and block < 100",
	"count shapes by bot where verdict = arbitrage limit 3",
	"count by block",
	"match 0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa at family where pools >= 2",
	"anomalies for bot 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74",
	"anomalies for bot 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 since block 75 limit 2",
	"anomalies for bot 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 baseline blocks 70..74",
	"same 0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa 0x68b13bc05b6e29566d5e8148af022d9d38fd35f8ea342b403ff3e4fdc4011f06 at shape",
	"show 0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa",
}

// TestSQLGolden compiles goldenStatements in both dialects and compares
// the text with testdata/DIALECT.sql (ClickHouse is not installable here:
// its dialect is tested by this text only; DuckDB's also runs, in
// cmd/flowq's TestLakeSameAnswersAsBadger).
func TestSQLGolden(t *testing.T) {
	for _, d := range []Dialect{DuckDB, ClickHouse} {
		c := &Compiler{Cfg: normalform.DefaultConfig(), Dialect: d}
		var b strings.Builder
		for _, src := range goldenStatements {
			sts, err := lang.Parse("golden", src)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			q, err := c.Compile(sts[0])
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			b.WriteString("-- " + src + "\n")
			if q.RefSQL != "" {
				b.WriteString(q.RefSQL + ";\n")
			}
			b.WriteString(q.SQL + ";\n\n")
		}
		path := "testdata/" + d.String() + ".sql"
		if *update {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(want) {
			t.Errorf("%s differs from the compiled SQL (go test ./planner/sqlgen -update rewrites it):\n%s", path, b.String())
		}
	}
}

// TestSQLDialectsDiffer: lists, blobs and casts are spelled per dialect.
func TestSQLDialectsDiffer(t *testing.T) {
	sts, _ := lang.Parse("x", "find where touches USDC and gross profit > 1 WETH")
	duck, _ := (&Compiler{Cfg: normalform.DefaultConfig(), Dialect: DuckDB}).Compile(sts[0])
	ch, _ := (&Compiler{Cfg: normalform.DefaultConfig(), Dialect: ClickHouse}).Compile(sts[0])
	for _, w := range []string{"list_contains(tokens, ", "from_hex('", "list_filter(gross"} {
		if !strings.Contains(duck.SQL, w) || strings.Contains(ch.SQL, w) {
			t.Errorf("%q: duckdb %s\nclickhouse %s", w, duck.SQL, ch.SQL)
		}
	}
	for _, w := range []string{"has(tokens, ", "unhex('", "indexOf(gross.token"} {
		if !strings.Contains(ch.SQL, w) {
			t.Errorf("clickhouse lacks %q: %s", w, ch.SQL)
		}
	}
}

// TestSQLFindingsNotSupported: block findings are not in the lake; the
// error says so, for every statement over them.
func TestSQLFindingsNotSupported(t *testing.T) {
	for _, src := range []string{"find sandwiches", "count backruns by block", "show block 5", "explain find backruns"} {
		sts, err := lang.Parse("x", src)
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&Compiler{Cfg: normalform.DefaultConfig()}).Compile(sts[0])
		var u *UnsupportedError
		if !errors.As(err, &u) || !strings.HasPrefix(err.Error(), "not supported on the lake: ") {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// TestSQLPlannerErrors: a statement the planner refuses fails with the
// planner's error, not with SQL.
func TestSQLPlannerErrors(t *testing.T) {
	sts, err := lang.Parse("x", "find where gross profit > 1 NOSUCHTOKEN")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Compiler{Cfg: normalform.DefaultConfig()}).Compile(sts[0]); err == nil || !strings.Contains(err.Error(), "NOSUCHTOKEN") {
		t.Errorf("got %v, want the planner's unknown-token error", err)
	}
}

// TestResolveSQL: a shortened reference reads the column holding the
// value whole, by a range over its hex text (and a suffix test), in both
// dialects; bad digits get the index's messages.
func TestResolveSQL(t *testing.T) {
	c := &Compiler{}
	got, err := c.ResolveSQL(layout.KindTxHash, 0, "3db1", "dcfa", 100)
	if want := "SELECT DISTINCT tx_hash FROM lake WHERE tx_hash >= '0x3db1' AND tx_hash < '0x3db1g' AND ends_with(tx_hash, 'dcfa') ORDER BY tx_hash LIMIT 100"; err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
	ch := &Compiler{Dialect: ClickHouse}
	if got, _ := ch.ResolveSQL(layout.KindHash, normalform.Shape, "abcdef", "01", 5); !strings.Contains(got, "hash_shape >= '0xabcdef' AND hash_shape < '0xabcdefg' AND endsWith(hash_shape, '01')") || !strings.HasSuffix(got, "LIMIT 5") {
		t.Errorf("clickhouse: %q", got)
	}
	if got, _ := c.ResolveSQL(layout.KindFirst, 0, "bfee84", "", 0); !strings.Contains(got, "DISTINCT bot FROM lake WHERE bot >= '0xbfee84'") {
		t.Errorf("bots: %q", got)
	}
	for _, bad := range []struct{ prefix, suffix, want string }{
		{"3db1a", "", "0x3db1a: a prefix needs at least 6 hex digits"},
		{"3db", "dcfa", "0x3db…dcfa: a shortened value needs at least 4 hex digits before the …"},
		{"3db1a'", "", `"3db1a'…" is not lowercase hex digits`},
		{strings.Repeat("a", 41), "", "41 hex digits given, and the value has 40"},
	} {
		if _, err := c.ResolveSQL(layout.KindFirst, 0, bad.prefix, bad.suffix, 0); err == nil || err.Error() != bad.want {
			t.Errorf("%s…%s: %v, want %q", bad.prefix, bad.suffix, err, bad.want)
		}
	}
}
