package index_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

var (
	txHashField = regexp.MustCompile(`("transactionHash":\s*"0x)([0-9a-f]{8})`)
	blockDec    = regexp.MustCompile(`("blockNumber":\s*)11017338\b`)
	blockHex    = regexp.MustCompile(`("blockNumber":\s*")0xa81c7a"`)
)

// syntheticBlocks makes n copies of mainnet block 11017338 (124
// transactions, Parity traces and logs) as blocks first, first+1, ...,
// with their transaction hashes changed (the first 4 bytes of each hash
// carry the copy number): n×124 distinct transactions of real shapes.
// With first = 11017338 and rename false the copies keep the real
// block number (every position taken n times).
func syntheticBlocks(t testing.TB, n int, first uint64, rename bool) []ingest.Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, "mev-inspect-rs/res/11017338.data.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]ingest.Input, n)
	for k := range n {
		b := first + uint64(k)
		if !rename {
			b = 11017338
		}
		d := txHashField.ReplaceAll(data, []byte(fmt.Sprintf("${1}%08x", uint32(k)^0x5a5a5a5a)))
		d = blockDec.ReplaceAll(d, []byte("${1}"+strconv.FormatUint(b, 10)))
		d = blockHex.ReplaceAll(d, []byte(fmt.Sprintf(`${1}0x%x"`, b)))
		out[k] = ingest.BundleInput(fmt.Sprintf("synthetic:block:%d:%d", b, k), d)
	}
	return out
}

// TestPositionConflict: two transactions claiming one position: the
// second is a failure of its input, the first keeps its keys.
func TestPositionConflict(t *testing.T) {
	ix := openTemp(t)
	in := syntheticBlocks(t, 2, 11017338, false)
	sum, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{BatchTxs: 50})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stored != 124 || sum.Failed != 124 {
		t.Errorf("%+v", sum)
	}
	n := 0
	ix.Failures(context.Background(), func(f index.Failure) error {
		if f.Stage != index.StageIndex || f.Source != in[1].Name {
			t.Errorf("failure %v", f)
		}
		n++
		return nil
	})
	if n != 124 {
		t.Errorf("%d failures", n)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, _ := index.NewRecord(analyseCorpus(t)[0], 0)
	rec.Loc = index.Loc{Block: 11017338, Index: 0}
	if err := ix.PutRecord(rec); err == nil {
		t.Error("PutRecord at a taken position succeeded")
	}
}

// TestDelete: deleting transactions removes every key they had (the
// first-seen keys follow), and putting them back restores the index.
func TestDelete(t *testing.T) {
	ix := openTemp(t)
	ingestCorpus(t, ix, ingest.Options{})
	ctx := context.Background()
	before := index.Dump(t, ix)
	var recs []*index.Record
	ix.Records(ctx, index.Blocks(11017338, 11017338), func(r *index.Record) error { recs = append(recs, r); return nil })
	for _, r := range recs[:60] {
		if err := ix.Delete(r.Hash); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.Count(ctx); n != corpusDistinct-60 {
		t.Errorf("Count after deleting 60: %d", n)
	}
	if err := ix.Delete(recs[0].Hash); err == nil {
		t.Error("second Delete succeeded")
	}
	for _, r := range recs[:60] {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ix.RefreshBlocks(ctx, nil); err != nil { // the block's findings, computed again
		t.Fatal(err)
	}
	if after := index.Dump(t, ix); len(diff(before, after)) != 0 {
		t.Errorf("put back:\n%s", diff(before, after))
	}
}

// diskUsage is the space the files under dir occupy (allocated blocks
// where the system says, apparent sizes otherwise).
func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil
		}
		if v := reflect.ValueOf(st.Sys()); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
			if b := v.Elem().FieldByName("Blocks"); b.IsValid() && b.CanInt() {
				n += b.Int() * 512
				return nil
			}
		}
		n += st.Size()
		return nil
	})
	return n
}

// BenchmarkIngest ingests 40 synthetic copies of mainnet block 11017338
// (4960 transactions, Parity traces and logs, given in memory) into a
// fresh index on all cores, and reports the rate, the bytes of keys and
// values per transaction, and the size of the index directory per
// transaction after Close (Badger's files, compressed; the value log is
// preallocated and sparse, so apparent sizes overstate it).
//
//	go test ./index -run '^$' -bench Ingest -benchtime 5x
func BenchmarkIngest(b *testing.B) {
	in := syntheticBlocks(b, 40, 20_000_000, true)
	txs := 40 * 124
	var total time.Duration
	var logical, disk int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "index")
		ix, err := index.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		sum, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{})
		total += time.Since(start)
		b.StopTimer()
		if err != nil || sum.Stored != txs {
			b.Fatalf("%+v %v", sum, err)
		}
		st, err := ix.Stats(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		logical = 0
		for _, s := range st {
			logical += s.KeyBytes + s.ValueBytes
		}
		ix.Close()
		disk = diskUsage(dir)
		b.StartTimer()
	}
	b.ReportMetric(float64(txs*b.N)/total.Seconds(), "tx/s")
	b.ReportMetric(float64(logical)/float64(txs), "kv-bytes/tx")
	b.ReportMetric(float64(disk)/float64(txs), "disk-bytes/tx")
	b.ReportMetric(0, "ns/op")
}

// TestIngestSplitsBigBatches: a batch larger than one Badger transaction
// can hold is split, and everything is written.
func TestIngestSplitsBigBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 4960 transactions")
	}
	ix := openTemp(t)
	in := syntheticBlocks(t, 40, 20_000_000, true)
	sum, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{BatchTxs: 1 << 20})
	if err != nil || sum.Stored != 40*124 || sum.Failed != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	if n, _ := ix.Count(context.Background()); n != 40*124 {
		t.Errorf("Count = %d", n)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}
