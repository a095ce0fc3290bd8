package export_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/export"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// triangular is mev-inspect-rs's triangular_arb (README.md's example).
const triangular = "0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc"

func TestExportCSV(t *testing.T) {
	ix := openTemp(t)
	ingestCorpus(t, ix, ingest.Options{})
	var buf bytes.Buffer
	n, err := export.Export(context.Background(), ix, &buf, export.CSV, index.AllBlocks)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows[0], export.Columns) {
		t.Errorf("header %v", rows[0])
	}
	if want := []string{"hash", "block", "verdict", "reasons", "cycles", "latency_ms"}; !reflect.DeepEqual(export.Columns[:6], want) {
		t.Errorf("the paper's columns come first: %v", export.Columns[:6])
	}
	if n != corpusDistinct || len(rows) != corpusDistinct+1 {
		t.Fatalf("%d records, %d rows", n, len(rows))
	}
	var row map[string]string
	for _, r := range rows[1:] {
		if r[0] == triangular {
			row = map[string]string{}
			for i, c := range export.Columns {
				row[c] = r[i]
			}
		}
	}
	if row == nil {
		t.Fatal("triangular_arb not exported")
	}
	hh, _ := normalform.ParseHash(triangular)
	rec, err := ix.Get(hh)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"hash": triangular, "block": "11117996", "verdict": "warning", "reasons": "costs_unknown",
		"cycles": "1", "latency_ms": "0.000", "index": "12", "tier": "probable",
		"from": "0x05f761b4260102b195c0d541d946a0302b76b28e", "to": "0x7a250d5630b4cf539739df2c5dacb4c659f2488d",
		"costs_known": "false", "gross": "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2=9196963592118237", "net": "",
		"pools": strconv.Itoa(rec.Counts.Pools), "hops": "5", "leftovers": "0",
		"hash_exact": rec.Hashes.Exact.Hex(), "hash_shape": rec.Hashes.Shape.Hex(), "hash_tokens": rec.Hashes.Tokens.Hex(), "hash_family": rec.Hashes.Family.Hex()}
	if !reflect.DeepEqual(row, want) {
		for _, c := range export.Columns {
			if row[c] != want[c] {
				t.Errorf("%s = %q, want %q", c, row[c], want[c])
			}
		}
	}
	// Rows are in position order; a block range exports its blocks only.
	buf.Reset()
	if n, err := export.Export(context.Background(), ix, &buf, export.CSV, index.Blocks(11017338, 11017338)); err != nil || n != 124 {
		t.Errorf("block 11017338: %d rows, %v", n, err)
	}
}

func TestExportJSONL(t *testing.T) {
	ix := openTemp(t)
	ingestCorpus(t, ix, ingest.Options{})
	var buf bytes.Buffer
	n, err := export.Export(context.Background(), ix, &buf, export.JSONL, index.AllBlocks)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if n != corpusDistinct || len(lines) != corpusDistinct {
		t.Fatalf("%d records, %d lines", n, len(lines))
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := []string{"block", "costs_known", "cycles", "from", "gross", "hashes", "hops", "index", "latency_ms", "leftovers", "net", "path", "pools", "reasons", "tier", "to", "tx", "verdict"}
		if !reflect.DeepEqual(keys, want) {
			t.Fatalf("keys %v", keys)
		}
		if m["tx"] != triangular {
			continue
		}
		var j export.ExportJSON
		json.Unmarshal([]byte(l), &j)
		if *j.Block != 11117996 || *j.Index != 12 || j.Verdict != "warning" || j.Tier != "probable" || j.Cycles != 1 ||
			!reflect.DeepEqual(j.Reasons, []string{"costs_unknown"}) || j.Net != nil || m["net"] != nil ||
			j.Gross["0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"] != "9196963592118237" ||
			j.Hops != 5 || j.Leftovers != 0 || j.Hashes.Family == "" || j.LatencyMS != "0.000" {
			t.Errorf("triangular_arb: %s", l)
		}
	}
	if _, err := export.ParseFormat("xml"); err == nil {
		t.Error("xml accepted")
	}
}

// corpusDistinct is the number of distinct transactions of the corpus
// (index's tests say why it is one less than the transactions).
const corpusDistinct = 148

func openTemp(t testing.TB) *index.Index {
	t.Helper()
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// ingestCorpus ingests the decoder's corpus, every latency zero.
func ingestCorpus(t testing.TB, ix *index.Index, opt ingest.Options) {
	t.Helper()
	in, err := ingest.Files("../../normalform/trace/testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	opt.Clock = func() time.Time { return time.Unix(0, 0) }
	if _, err := ingest.Ingest(context.Background(), ix, in, opt); err != nil {
		t.Fatal(err)
	}
}
