//go:build duckdb

package duck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/flowq/flowq/index/lake"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

func sources(t testing.TB) []lake.Source {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..", "examples")
	var out []lake.Source
	for _, d := range []string{"mainnet", "scenarios/geth"} {
		ms, _ := filepath.Glob(filepath.Join(root, d, "*.json"))
		if len(ms) == 0 {
			t.Fatalf("no bundles under %s", d)
		}
		for _, p := range ms {
			out = append(out, lake.Source{Name: p, Load: func(int) ([]byte, error) { return os.ReadFile(p) }})
		}
	}
	return out
}

// analysed is what flowq finds for each transaction, by hash.
func analysed(t testing.TB, srcs []lake.Source) map[string]*normalform.Analysis {
	out := map[string]*normalform.Analysis{}
	for _, s := range srcs {
		b, _ := s.Load(0)
		for _, tx := range trace.Decode(b, trace.Options{Source: s.Name}).Txs {
			a, err := normalform.Analyze(tx, normalform.DefaultConfig())
			if err == nil && tx.Meta.HasHash && tx.Meta.HasBlock {
				out[tx.Meta.Hash.Hex()] = a
			}
		}
	}
	return out
}

func build(t testing.TB, size uint64) (string, lake.Summary, map[string]*normalform.Analysis) {
	srcs := sources(t)
	dir := t.TempDir()
	sum, err := lake.Ingest(context.Background(), lake.Layout{Dir: dir, Chain: "mainnet", RangeSize: size}, srcs, lake.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, sum, analysed(t, srcs)
}

func TestDuckDBReadsWhatFlowqAnalysed(t *testing.T) {
	dir, sum, want := build(t, 1000)
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var n int64
	if _, err := db.Query(ctx, "SELECT count(*) FROM lake", func(_ []string, v []any) error { n = v[0].(int64); return nil }); err != nil {
		t.Fatal(err)
	}
	if int(n) != len(want) || int(n) != sum.Rows {
		t.Fatalf("DuckDB counts %d rows, flowq analysed %d and wrote %d", n, len(want), sum.Rows)
	}
	// Every gross and net amount, exact, with the hashes and the block.
	got := map[string]map[string]string{}
	blocks := map[string]uint64{}
	_, err = db.Query(ctx, `SELECT tx_hash, block, chain, hash_family, 'gross:' || g.token, g.amount, g.amount_key
		FROM lake, unnest(gross) AS u(g)
		UNION ALL
		SELECT tx_hash, block, chain, hash_family, 'net:' || g.token, g.amount, g.amount_key
		FROM lake, unnest(net) AS u(g)`, func(_ []string, v []any) error {
		h := v[0].(string)
		a := want[h]
		if a == nil {
			t.Fatalf("DuckDB gives tx %s, which flowq did not analyse", h)
		}
		if fam := a.Hashes().Family.Hex(); v[3].(string) != fam {
			t.Errorf("tx %s: family %s, want %s", h, v[3], fam)
		}
		if v[2].(string) != "mainnet" {
			t.Errorf("tx %s: chain %v", h, v[2])
		}
		if got[h] == nil {
			got[h] = map[string]string{}
		}
		got[h][v[4].(string)] = v[5].(string)
		blocks[h] = v[1].(uint64)
		if k, ok := lake.AmountFromKey(v[6].([]byte)); !ok || k.String() != v[5].(string) {
			t.Errorf("tx %s: amount_key %x is not %s", h, v[6], v[5])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	amounts := 0
	for h, a := range want {
		for _, e := range a.Gross {
			amounts++
			if g := got[h]["gross:"+e.Token.Key()]; g != e.Amount.String() {
				t.Errorf("tx %s gross %s: DuckDB %q, flowq %s", h, e.Token.Key(), g, e.Amount.String())
			}
		}
		if a.Costs.Known {
			for _, e := range a.Net {
				if g := got[h]["net:"+e.Token.Key()]; g != e.Amount.String() {
					t.Errorf("tx %s net %s: DuckDB %q, flowq %s", h, e.Token.Key(), g, e.Amount.String())
				}
			}
		}
		if len(a.Gross) > 0 && blocks[h] != a.Tx.Meta.Block {
			t.Errorf("tx %s: block %d, want %d", h, blocks[h], a.Tx.Meta.Block)
		}
	}
	if amounts == 0 {
		t.Fatal("no amounts compared")
	}
}

func TestCorruptFileNamedOthersAnswer(t *testing.T) {
	dir, sum, _ := build(t, 10)
	if len(sum.Files) < 3 {
		t.Fatalf("%d files: want several ranges", len(sum.Files))
	}
	bad := sum.Files[0] // the first: DuckDB binds the view's columns from it
	rs, err := lake.ReadRange(bad)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(bad)
	if err := os.WriteFile(bad, b[:len(b)/2], 0o644); err != nil { // a torn copy: no footer
		t.Fatal(err)
	}
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	res, err := db.Query(context.Background(), "SELECT count(*) FROM lake WHERE verdict IS NOT NULL", func(_ []string, v []any) error { n = v[0].(int64); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Path != bad || !strings.Contains(res.Skipped[0].Error(), filepath.Base(bad)) {
		t.Fatalf("skipped %v, want %s named", res.Skipped, bad)
	}
	if int(n) != sum.Rows-len(rs) {
		t.Fatalf("the other ranges give %d rows, want %d", n, sum.Rows-len(rs))
	}
	// The view is the whole lake again afterwards: the next query sees the
	// corrupt file again and names it again.
	res, err = db.Query(context.Background(), "SELECT count(*) FROM lake", func(_ []string, v []any) error { n = v[0].(int64); return nil })
	if err != nil || len(res.Skipped) != 1 {
		t.Fatalf("second query: %v, skipped %v", err, res.Skipped)
	}
}

// The hash and address columns carry Bloom filters that DuckDB uses: a
// hash in the file is not excluded, one not in it is.
func TestBloomFiltersOnHashAndAddressColumns(t *testing.T) {
	dir, sum, _ := build(t, 1000)
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := sum.Files[len(sum.Files)-1]
	rows, err := lake.ReadRange(f)
	if err != nil || len(rows) == 0 {
		t.Fatal(err)
	}
	in, bot := rows[0].TxHash, rows[len(rows)-1].Bot
	absent := "0x" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		col, val string
		excluded bool
	}{
		{"tx_hash", in, false}, {"tx_hash", absent, true},
		{"hash_shape", rows[0].HashShape, false}, {"hash_family", absent, true},
		{"bot", bot, false}, {"bot", "0x" + strings.Repeat("cd", 20), true},
	} {
		q := fmt.Sprintf("SELECT bool_and(bloom_filter_excludes) FROM parquet_bloom_probe('%s', '%s', '%s')", f, c.col, c.val)
		var got any
		if _, err := db.Query(context.Background(), q, func(_ []string, v []any) error { got = v[0]; return nil }); err != nil {
			t.Fatal(err)
		}
		if got != c.excluded {
			t.Errorf("%s %s…: bloom_filter_excludes %v, want %v", c.col, c.val[:10], got, c.excluded)
		}
	}
}

// Equality on a hash column finds its row through DuckDB (with BLOB
// columns and Bloom filters, DuckDB 1.5.6 pruned the row group holding the
// value and answered nothing).
func TestEqualityOnHashColumnsFindsTheRow(t *testing.T) {
	dir, sum, _ := build(t, 1000)
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checked := 0
	for _, f := range sum.Files {
		rows, err := lake.ReadRange(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			q := fmt.Sprintf("SELECT count(*) FROM lake WHERE tx_hash = '%s' AND hash_shape = '%s' AND bot = '%s' AND list_contains(addresses, '%s')",
				r.TxHash, r.HashShape, r.Bot, r.Addresses[0])
			var n int64
			if _, err := db.Query(context.Background(), q, func(_ []string, v []any) error { n = v[0].(int64); return nil }); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("tx %s: %d rows by equality, want 1", r.TxHash, n)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

// TestEarlierLakeSchemaRefused: a range file written with another lake
// schema than this flowq reads (schema 1 had no token standard in the
// balances), or with none, refuses the statement with an error naming the
// file and the schemas; the lake as written answers.
func TestEarlierLakeSchemaRefused(t *testing.T) {
	dir, _, _ := build(t, 1_000_000)
	files, err := lake.Files(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("files %v, %v", files, err)
	}
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func() error {
		_, err := db.Query(context.Background(), "SELECT count(*) FROM lake", func([]string, []any) error { return nil })
		return err
	}
	if err := count(); err != nil {
		t.Fatalf("the lake as written: %v", err)
	}
	rows, err := parquet.ReadFile[lake.Row](files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts []parquet.WriterOption
		want string
	}{
		{[]parquet.WriterOption{parquet.KeyValueMetadata("flowq.lake.schema", "1")}, "has lake schema 1; this flowq reads schema " + lake.SchemaVersion},
		{nil, "its metadata names no flowq.lake.schema"},
	} {
		if err := parquet.WriteFile(files[0], rows, tc.opts...); err != nil {
			t.Fatal(err)
		}
		err := count()
		var se *SchemaError
		if !errors.As(err, &se) || se.Path != files[0] || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want a SchemaError naming %s: %q", err, files[0], tc.want)
		}
	}
}
