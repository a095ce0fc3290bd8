package index_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

const corpusDir = "../normalform/trace/testdata/corpus"

// corpusTxs is the number of transactions in the corpus (26 files), and
// corpusDistinct the number of distinct hashes: go-ethereum's calldata.json
// and with_onlyTopCall.json trace one transaction, with and without its
// inner calls (the later input wins).
const (
	corpusTxs      = 149
	corpusDistinct = 148
)

func openTemp(t testing.TB) *index.Index {
	t.Helper()
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func corpusInputs(t testing.TB) []ingest.Input {
	t.Helper()
	in, err := ingest.Files(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 26 {
		t.Fatalf("%d corpus files, want 26", len(in))
	}
	return in
}

// fixedClock makes every latency zero, so that two ingests can be compared
// byte for byte.
func fixedClock() time.Time { return time.Unix(0, 0) }

// withoutLatency zeroes the latency of every record.
func withoutLatency(d map[string]string) map[string]string {
	out := make(map[string]string, len(d))
	for k, v := range d {
		if k[0] == byte(index.KindTx) {
			v = v[:2] + string(index.ContentOf([]byte(v)))
		}
		out[k] = v
	}
	return out
}

// diff describes how two dumps differ (at most a few keys).
func diff(a, b map[string]string) string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, fmt.Sprintf("only before: %s", describe(k)))
		} else if v != w {
			d = append(d, fmt.Sprintf("value of %s: %x -> %x", describe(k), v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, fmt.Sprintf("only after: %s", describe(k)))
		}
	}
	sort.Strings(d)
	if len(d) > 8 {
		d = append(d[:8], fmt.Sprintf("... %d differences", len(d)))
	}
	return strings.Join(d, "\n")
}

func describe(k string) string {
	key, err := index.ParseKey([]byte(k))
	if err != nil {
		return fmt.Sprintf("%x (%v)", k, err)
	}
	return fmt.Sprintf("%s %x", key.Kind, k)
}

func ingestCorpus(t testing.TB, ix *index.Index, opt ingest.Options) ingest.Summary {
	t.Helper()
	if opt.Clock == nil {
		opt.Clock = fixedClock
	}
	sum, err := ingest.Ingest(context.Background(), ix, corpusInputs(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// analyseCorpus decodes and analyses every corpus transaction.
var analyseCorpus = index.AnalyseCorpus

// TestIngestCorpus: every corpus transaction ingests; each record reads
// back as built from a fresh analysis, its normal form decodes and
// re-encodes to the same bytes, and the index verifies.
func TestIngestCorpus(t *testing.T) {
	ix := openTemp(t)
	var failures []index.Failure
	sum := ingestCorpus(t, ix, ingest.Options{OnFailure: func(f index.Failure) { failures = append(failures, f) }})
	if sum.Stored != corpusTxs || sum.Failed != 0 || sum.Inputs != 26 || sum.Skipped != 0 {
		t.Fatalf("summary %+v, failures %v", sum, failures)
	}
	if n, err := ix.Count(context.Background()); err != nil || n != corpusDistinct {
		t.Fatalf("Count = %d, %v", n, err)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	last := map[normalform.Hash]*normalform.Analysis{}
	for _, a := range analyseCorpus(t) {
		last[a.Tx.Meta.Hash] = a
	}
	for _, a := range last {
		want, err := index.NewRecord(a, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ix.Get(a.Tx.Meta.Hash)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("tx %s: record read back\n%+v\nwant\n%+v", a.Tx.Meta.Hash.Hex(), got, want)
		}
		nf, err := got.Analysis()
		if err != nil {
			t.Fatalf("tx %s: DecodeNF: %v", a.Tx.Meta.Hash.Hex(), err)
		}
		if !bytes.Equal(normalform.EncodeNF(nf), got.NF) {
			t.Errorf("tx %s: the normal form read back does not re-encode to the same bytes", a.Tx.Meta.Hash.Hex())
		}
		if nf.Hashes() != got.Hashes || nf.Verdict != got.Verdict {
			t.Errorf("tx %s: the normal form read back hashes or classifies differently", a.Tx.Meta.Hash.Hex())
		}
	}
	var marks int
	ix.Inputs(context.Background(), func(m index.InputMark) error {
		marks++
		if m.Schema != index.SchemaVersion || m.Failures != 0 || !filepath.IsAbs(m.Name) {
			t.Errorf("marker %+v", m)
		}
		return nil
	})
	if marks != 26 {
		t.Errorf("%d input markers, want 26", marks)
	}
}

// TestIngestTwiceSameContent: a second ingest of the same inputs leaves
// every key and value as it was: skipped by their markers, and again when
// forced to analyse everything anew (with real, different latencies).
func TestIngestTwiceSameContent(t *testing.T) {
	ix := openTemp(t)
	ingestCorpus(t, ix, ingest.Options{Clock: time.Now})
	before := index.Dump(t, ix)
	sum := ingestCorpus(t, ix, ingest.Options{Clock: time.Now})
	if sum.InputsSkipped != 26 || sum.Skipped != corpusTxs || sum.Stored != 0 {
		t.Errorf("second ingest: %+v", sum)
	}
	if after := index.Dump(t, ix); !reflect.DeepEqual(before, after) {
		t.Errorf("second ingest changed the index:\n%s", diff(before, after))
	}
	// Forced: every transaction is analysed again and found unchanged
	// (its first latency kept), except the one two inputs disagree on,
	// written twice again (the later input wins): its content is the same.
	sum = ingestCorpus(t, ix, ingest.Options{Clock: time.Now, Force: true, Workers: 3, BatchTxs: 7})
	if sum.InputsSkipped != 0 || sum.Unchanged != corpusTxs-2 || sum.Stored != 2 {
		t.Errorf("forced ingest: %+v", sum)
	}
	if after := index.Dump(t, ix); !reflect.DeepEqual(withoutLatency(before), withoutLatency(after)) {
		t.Errorf("forced ingest changed the index:\n%s", diff(before, after))
	}
	// Put of the same analyses directly (the later of the two that
	// disagree): nothing changes either, not even the latencies.
	before = index.Dump(t, ix)
	last := map[normalform.Hash]*normalform.Analysis{}
	for _, a := range analyseCorpus(t) {
		last[a.Tx.Meta.Hash] = a
	}
	for _, a := range last {
		if err := ix.Put(a, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if after := index.Dump(t, ix); !reflect.DeepEqual(before, after) {
		t.Errorf("Put of the same analyses changed the index:\n%s", diff(before, after))
	}
}

// TestIngestDeterministic: the index's content does not depend on the
// number of workers or the batch size.
func TestIngestDeterministic(t *testing.T) {
	a, b := openTemp(t), openTemp(t)
	ingestCorpus(t, a, ingest.Options{Workers: 1, BatchTxs: 1000})
	ingestCorpus(t, b, ingest.Options{Workers: 8, BatchTxs: 3})
	if da, db := index.Dump(t, a), index.Dump(t, b); !reflect.DeepEqual(da, db) {
		t.Errorf("1 worker and 8 workers disagree:\n%s", diff(da, db))
	}
}

// TestPutAtomic: a Put that fails at any write inside its transaction
// leaves no key behind, whether it adds a transaction or replaces one.
func TestPutAtomic(t *testing.T) {
	as := analyseCorpus(t)
	var a *normalform.Analysis
	for _, x := range as {
		if x.Verdict != normalform.VerdictNone && len(x.Tx.Transfers) > 3 {
			a = x
			break
		}
	}
	ix := openTemp(t)
	empty := index.Dump(t, ix)
	rec, _ := index.NewRecord(a, time.Millisecond)
	// The record's keys, its txhash and first-seen keys, and the ids of a
	// first record (an id's dict and name keys and the next id): its three
	// hashes' and its dictionary addresses'.
	keys := index.KeyCount(rec) + 2 + 2*(3+len(rec.DictAddrs(nil))) + 1 + 1 // and the block's dirty key (blocks.go)
	n := keys + 2
	boom := errors.New("injected failure")
	for k := 1; k <= n; k++ {
		calls := 0
		index.SetHook(ix, func(string, []byte) error {
			if calls++; calls == k {
				return boom
			}
			return nil
		})
		if err := ix.Put(a, time.Millisecond); !errors.Is(err, boom) {
			t.Fatalf("write %d of %d: Put returned %v", k, n, err)
		}
		if got := index.Dump(t, ix); !reflect.DeepEqual(got, empty) {
			t.Fatalf("failure at write %d of %d left keys:\n%s", k, n, diff(empty, got))
		}
	}
	index.SetHook(ix, nil)
	if err := ix.Put(a, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	full := index.Dump(t, ix)
	if len(full) != len(empty)+keys {
		t.Errorf("%d keys written, want %d", len(full)-len(empty), keys)
	}
	// A replacement (another block, verdict and shape) failing midway.
	moved := *rec
	moved.Loc = index.Loc{Block: rec.Loc.Block + 1, Index: 3}
	moved.Verdict, moved.Tier = normalform.VerdictNone, normalform.TierNone
	moved.Hashes.Shape = index.H(77)
	for k := 1; ; k++ {
		calls := 0
		index.SetHook(ix, func(string, []byte) error {
			if calls++; calls == k {
				return boom
			}
			return nil
		})
		err := ix.PutRecord(&moved)
		if err == nil {
			break
		}
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if got := index.Dump(t, ix); !reflect.DeepEqual(got, full) {
			t.Fatalf("failed replacement at write %d left changes:\n%s", k, diff(full, got))
		}
	}
	index.SetHook(ix, nil)
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestPutReplace: replacing a record removes the keys that no longer hold
// and keeps the first-seen keys exact.
func TestPutReplace(t *testing.T) {
	ix := openTemp(t)
	as := analyseCorpus(t)
	for _, a := range as {
		if err := ix.Put(a, time.Microsecond); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var recs []*index.Record
	ix.Scan(ctx, func(r *index.Record) error { recs = append(recs, r); return nil })
	// Move the first transaction of some bot behind another of the same
	// shape, then change its shape, then put it back.
	var r *index.Record
	for _, x := range recs {
		first, ok, _ := ix.FirstSeen(x.Recipient, x.Hashes.Shape)
		n := 0
		ix.ByBotShape(ctx, x.Recipient, x.Hashes.Shape, index.AllBlocks, func(index.Ref) error { n++; return nil })
		if ok && first.Hash == x.Hash && n > 1 {
			r = x
			break
		}
	}
	if r == nil {
		t.Fatal("no bot with two transactions of one shape in the corpus")
	}
	orig := *r
	steps := []func(*index.Record){
		func(x *index.Record) { x.Loc = index.Loc{Block: 99_000_000, Index: 1} },
		func(x *index.Record) { x.Hashes.Shape = index.H(5); x.Recipient = index.Ad(9) },
		func(x *index.Record) {
			// Keyed by hash now; knowing its costs, it is not a record that
			// knows less (which would not replace it: TestRetryNeverDegrades).
			x.Loc = index.Loc{Block: x.Loc.Block, Index: index.UnknownIndex, Tx: x.Hash}
			x.Addresses = x.Addresses[:1]
			x.CostsKnown, x.Net = true, []index.Amount{}
		},
		func(x *index.Record) { *x = orig },
	}
	cur := orig
	for i, step := range steps {
		step(&cur)
		if err := ix.PutRecord(&cur); err != nil {
			t.Fatal(err)
		}
		if err := ix.Verify(ctx); err != nil {
			t.Fatalf("after step %d: %v", i, err)
		}
		got, _ := ix.Get(cur.Hash)
		if !reflect.DeepEqual(got, &cur) {
			t.Fatalf("after step %d: record %+v", i, got)
		}
	}
	if _, ok, _ := ix.FirstSeen(index.Ad(9), index.H(5)); ok {
		t.Error("first-seen key of a shape no transaction has any more")
	}
	first, _, _ := ix.FirstSeen(orig.Recipient, orig.Hashes.Shape)
	if first.Hash != orig.Hash {
		t.Errorf("first-seen is %s, want %s again", first.Hash.Hex(), orig.Hash.Hex())
	}
}

// TestResume: an ingest interrupted after some inputs, then run again,
// gives the index an uninterrupted ingest gives.
func TestResume(t *testing.T) {
	ref := openTemp(t)
	ingestCorpus(t, ref, ingest.Options{BatchTxs: 5})
	want := index.Dump(t, ref)
	for _, stopAfter := range []int{1, 9, 20} {
		ix := openTemp(t)
		ctx, cancel := context.WithCancel(context.Background())
		opt := ingest.Options{BatchTxs: 5, Clock: fixedClock, AfterCommit: func(n int) {
			if n >= stopAfter {
				cancel()
			}
		}}
		sum, err := ingest.Ingest(ctx, ix, corpusInputs(t), opt)
		cancel()
		// The workers run ahead of the commits, so a late cancel may find
		// every input done: then the ingest may also end without error.
		// Either way what was committed must be whole and resumable.
		switch {
		case errors.Is(err, context.Canceled):
		case err == nil && sum.Inputs == 26:
			t.Logf("stop after %d: every input was done before the cancel", stopAfter)
		default:
			t.Fatalf("interrupted ingest returned %v (%+v)", err, sum)
		}
		if sum.Inputs < stopAfter {
			t.Fatalf("stop after %d: %d inputs finished", stopAfter, sum.Inputs)
		}
		if err := ix.Verify(context.Background()); err != nil {
			t.Fatalf("interrupted index: %v", err)
		}
		sum2 := ingestCorpus(t, ix, ingest.Options{BatchTxs: 5})
		if sum2.InputsSkipped != sum.Inputs {
			t.Errorf("stop after %d: rerun skipped %d inputs, %d were done", stopAfter, sum2.InputsSkipped, sum.Inputs)
		}
		if got := index.Dump(t, ix); !reflect.DeepEqual(got, want) {
			t.Errorf("stop after %d: resumed index differs:\n%s", stopAfter, diff(want, got))
		}
	}
}

// TestFailuresAndRetry: decode and read failures are recorded with their
// error under the input's name; a retry after the input is fixed stores
// its transactions and clears its failures.
func TestFailuresAndRetry(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(corpusDir, "mev-inspect-rs/res/triangular_arb.data.json"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "b.json")
	os.WriteFile(filepath.Join(dir, "a.json"), good, 0o644)
	os.WriteFile(bad, good[:len(good)/2], 0o644) // truncated
	ix := openTemp(t)
	ctx := context.Background()
	in, err := ingest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	in = append(in, ingest.FileInput(filepath.Join(dir, "missing.json")))
	sum, err := ingest.Ingest(ctx, ix, in, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stored != 1 || sum.Failed < 2 {
		t.Errorf("summary %+v", sum)
	}
	var fs []index.Failure
	ix.Failures(ctx, func(f index.Failure) error { fs = append(fs, f); return nil })
	stages := map[index.Stage]string{}
	for _, f := range fs {
		stages[f.Stage] = f.Source
		if f.Msg == "" {
			t.Errorf("failure without a message: %+v", f)
		}
	}
	absBad, _ := filepath.Abs(bad)
	if stages[index.StageDecode] != absBad || !strings.HasSuffix(stages[index.StageRead], "missing.json") {
		t.Errorf("failures %v", fs)
	}
	// A rerun skips the broken input (its failures are recorded), but
	// retries the unreadable one.
	sum, _ = ingest.Ingest(ctx, ix, in, ingest.Options{})
	if sum.InputsSkipped != 2 {
		t.Errorf("rerun: %+v", sum)
	}
	// Fix the input and retry.
	os.WriteFile(bad, good, 0o644)
	os.WriteFile(filepath.Join(dir, "missing.json"), []byte(`{"traces": [`), 0o644)
	sum, err = ingest.RetryFailed(ctx, ix, ingest.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Inputs != 2 || sum.Unchanged != 1 || sum.Failed != 1 {
		t.Errorf("retry: %+v", sum)
	}
	fs = nil
	ix.Failures(ctx, func(f index.Failure) error { fs = append(fs, f); return nil })
	if len(fs) != 1 || fs[0].Stage != index.StageDecode || !strings.HasSuffix(fs[0].Source, "missing.json") {
		t.Errorf("failures after retry: %v", fs)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// adversarialBlock is a debug_traceBlockByNumber result: tx 0x11..11
// moves 2×(2^256−1) of one token to its recipient (its balance leaves 256
// bits: Analyze fails), tx 0x22..22 moves 1.
func adversarialBlock() []byte {
	const transfer = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
	word := func(a string) string { return "0x" + strings.Repeat("0", 24) + a }
	a, b, c, tok := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40), strings.Repeat("d", 40)
	log := func(amount string) string {
		return fmt.Sprintf(`{"address":"0x%s","topics":["%s","%s","%s"],"data":"0x%s","position":"0x0"}`, tok, transfer, word(c), word(b), amount)
	}
	frame := func(logs ...string) string {
		return fmt.Sprintf(`{"type":"CALL","from":"0x%s","to":"0x%s","value":"0x0","gas":"0x0","gasUsed":"0x0","input":"0x","logs":[%s]}`,
			a, b, strings.Join(logs, ","))
	}
	max := strings.Repeat("f", 64)
	return []byte(fmt.Sprintf(`[{"txHash":"0x%s","result":%s},{"txHash":"0x%s","result":%s}]`,
		strings.Repeat("1", 64), frame(log(max), log(max)), strings.Repeat("2", 64), frame(log(strings.Repeat("0", 63)+"1"))))
}

// TestAnalysisAndIndexFailures: a transaction the engine cannot analyse,
// and one without a hash (it cannot be keyed), are recorded as failures
// of their input with their error; the others are stored; bundles given
// in memory are inputs like files.
func TestAnalysisAndIndexFailures(t *testing.T) {
	ix := openTemp(t)
	ctx := context.Background()
	noHash := []byte(`{"type":"CALL","from":"0x` + strings.Repeat("a", 40) + `","to":"0x` + strings.Repeat("b", 40) +
		`","value":"0x1","gas":"0x0","gasUsed":"0x0","input":"0x"}`)
	in := []ingest.Input{ingest.BundleInput("rpc:block:1", adversarialBlock()), ingest.BundleInput("rpc:tx:nohash", noHash)}
	sum, err := ingest.Ingest(ctx, ix, in, ingest.Options{})
	if err != nil || sum.Stored != 1 || sum.Failed != 2 || sum.Inputs != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	var fs []index.Failure
	ix.Failures(ctx, func(f index.Failure) error { fs = append(fs, f); return nil })
	byStage := map[index.Stage]index.Failure{}
	for _, f := range fs {
		byStage[f.Stage] = f
	}
	if f := byStage[index.StageAnalyze]; f.Source != "rpc:block:1" || !f.HasTx || f.Tx[0] != 0x11 || !strings.Contains(f.Msg, "256 bits") {
		t.Errorf("analysis failure %+v", f)
	}
	if f := byStage[index.StageIndex]; f.Source != "rpc:tx:nohash" || f.HasTx || !strings.Contains(f.Msg, "hash") {
		t.Errorf("index failure %+v", f)
	}
	m, ok, err := ix.Input("rpc:block:1")
	if err != nil || !ok || m.Txs != 1 || m.Failures != 1 {
		t.Errorf("marker %+v %v %v", m, ok, err)
	}
	// Retry through a loader (the fetcher's way): the block now without
	// the adversarial transaction.
	fixed := []byte(strings.Replace(string(adversarialBlock()), strings.Repeat("f", 64), strings.Repeat("0", 63)+"7", -1))
	sum, err = ingest.RetryFailed(ctx, ix, ingest.Options{}, func(name string, _ int) ([]byte, error) {
		if name == "rpc:block:1" {
			return fixed, nil
		}
		return nil, fmt.Errorf("%s: gone", name)
	})
	if err != nil || sum.Stored != 1 || sum.Unchanged != 1 || sum.Failed != 1 {
		t.Fatalf("retry: %+v %v", sum, err)
	}
	fs = nil
	ix.Failures(ctx, func(f index.Failure) error { fs = append(fs, f); return nil })
	if len(fs) != 1 || fs[0].Stage != index.StageRead || fs[0].Source != "rpc:tx:nohash" {
		t.Errorf("failures after retry: %v", fs)
	}
}

// TestIterators exercises every planner iterator on the corpus.
func TestIterators(t *testing.T) {
	ix := openTemp(t)
	ingestCorpus(t, ix, ingest.Options{})
	ctx := context.Background()
	var recs []*index.Record
	if err := ix.Scan(ctx, func(r *index.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != corpusDistinct {
		t.Fatalf("Scan: %d records", len(recs))
	}
	collect := func(f func(fn func(index.Ref) error) error) []index.Ref {
		var out []index.Ref
		if err := f(func(r index.Ref) error { out = append(out, r); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(out); i++ {
			if !out[i-1].Loc.Less(out[i].Loc) {
				t.Errorf("not in position order: %+v then %+v", out[i-1].Loc, out[i].Loc)
			}
		}
		return out
	}
	has := func(refs []index.Ref, hh normalform.Hash) bool {
		for _, r := range refs {
			if r.Hash == hh {
				return true
			}
		}
		return false
	}
	// Block range: block 11017338 has 124 transactions.
	if got := collect(func(fn func(index.Ref) error) error { return ix.ByBlocks(ctx, index.Blocks(11017338, 11017338), fn) }); len(got) != 124 {
		t.Errorf("ByBlocks(11017338) = %d transactions", len(got))
	}
	all := collect(func(fn func(index.Ref) error) error { return ix.ByBlocks(ctx, index.AllBlocks, fn) })
	if len(all) != corpusDistinct {
		t.Errorf("ByBlocks(all) = %d", len(all))
	}
	n := 0
	ix.Records(ctx, index.Blocks(0, 11017337), func(r *index.Record) error {
		if r.Loc.Block > 11017337 {
			t.Errorf("Records out of range: %d", r.Loc.Block)
		}
		n++
		return nil
	})
	if n == 0 {
		t.Error("Records(0..11017337) found nothing")
	}
	verdicts := map[normalform.Verdict]int{}
	tiers := map[[2]uint8]int{}
	for _, r := range recs {
		verdicts[r.Verdict]++
		tiers[[2]uint8{uint8(r.Verdict), uint8(r.Tier)}]++
		for l := normalform.Exact; l <= normalform.Family; l++ {
			if got := collect(func(fn func(index.Ref) error) error { return ix.ByHash(ctx, l, r.Hashes.Of(l), index.AllBlocks, fn) }); !has(got, r.Hash) {
				t.Errorf("ByHash(%s) misses %s", l, r.Hash.Hex())
			}
		}
		if got := collect(func(fn func(index.Ref) error) error {
			return ix.ByBotShape(ctx, r.Recipient, r.Hashes.Shape, index.AllBlocks, fn)
		}); !has(got, r.Hash) {
			t.Errorf("ByBotShape misses %s", r.Hash.Hex())
		}
		for _, a := range r.Addresses {
			if got := collect(func(fn func(index.Ref) error) error { return ix.ByAddress(ctx, a, index.AllBlocks, fn) }); !has(got, r.Hash) {
				t.Errorf("ByAddress misses %s", r.Hash.Hex())
			}
		}
		for _, tok := range r.Tokens {
			if got := collect(func(fn func(index.Ref) error) error { return ix.ByToken(ctx, tok, index.AllBlocks, fn) }); !has(got, r.Hash) {
				t.Errorf("ByToken misses %s", r.Hash.Hex())
			}
		}
		if r.Loc.Block != index.UnknownBlock {
			if got := collect(func(fn func(index.Ref) error) error {
				return ix.ByHash(ctx, normalform.Exact, r.Hashes.Exact, index.Blocks(r.Loc.Block, r.Loc.Block), fn)
			}); !has(got, r.Hash) {
				t.Errorf("ByHash in its own block misses %s", r.Hash.Hex())
			}
			if r.Loc.Block > 0 {
				if got := collect(func(fn func(index.Ref) error) error {
					return ix.ByHash(ctx, normalform.Exact, r.Hashes.Exact, index.Blocks(0, r.Loc.Block-1), fn)
				}); has(got, r.Hash) {
					t.Errorf("ByHash before its block finds %s", r.Hash.Hex())
				}
			}
		}
	}
	for v := normalform.VerdictNone; v <= normalform.VerdictArbitrage; v++ {
		n := 0
		ix.ByVerdict(ctx, v, index.AllBlocks, func(tier normalform.Tier, r index.Ref) error {
			n++
			return nil
		})
		if n != verdicts[v] {
			t.Errorf("ByVerdict(%s) = %d, want %d", v, n, verdicts[v])
		}
		for tier := normalform.TierNone; tier <= normalform.TierUncertain; tier++ {
			got := collect(func(fn func(index.Ref) error) error { return ix.ByTier(ctx, v, tier, index.AllBlocks, fn) })
			if len(got) != tiers[[2]uint8{uint8(v), uint8(tier)}] {
				t.Errorf("ByTier(%s, %s) = %d", v, tier, len(got))
			}
		}
	}
	if verdicts[normalform.VerdictWarning] == 0 {
		t.Error("no warning in the corpus?")
	}
	// Bots: ByBot and BotShapes agree with the records.
	bots := map[normalform.Address]map[normalform.Hash]index.Loc{}
	for _, r := range recs {
		if bots[r.Recipient] == nil {
			bots[r.Recipient] = map[normalform.Hash]index.Loc{}
		}
		if l, ok := bots[r.Recipient][r.Hashes.Shape]; !ok || r.Loc.Less(l) {
			bots[r.Recipient][r.Hashes.Shape] = r.Loc
		}
	}
	for bot, shapes := range bots {
		got := map[normalform.Hash]index.Loc{}
		ix.BotShapes(ctx, bot, func(s normalform.Hash, first index.Ref) error { got[s] = first.Loc; return nil })
		if !reflect.DeepEqual(got, shapes) {
			t.Errorf("BotShapes(%x) = %v, want %v", bot, got, shapes)
		}
		n := 0
		ix.ByBot(ctx, bot, index.AllBlocks, func(s normalform.Hash, r index.Ref) error {
			if _, ok := shapes[s]; !ok {
				t.Errorf("ByBot(%x): shape %x", bot, s)
			}
			n++
			return nil
		})
		if n == 0 {
			t.Errorf("ByBot(%x) found nothing", bot)
		}
	}
	// Profit: every gross component is found, in amount order, within
	// bounds.
	weth := normalform.FungibleToken(normalform.Address(mustHex("c02aaa39b223fe8d0a0e5c4f27ead9083c756cc2")))
	var amts []normalform.Signed
	err := ix.ByProfit(ctx, index.Gross, weth, nil, nil, func(a normalform.Signed, r index.Ref) error { amts = append(amts, a); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, r := range recs {
		for _, a := range r.Gross {
			if a.Token == weth {
				want++
			}
		}
	}
	if len(amts) != want || want == 0 {
		t.Errorf("ByProfit(gross, WETH) = %d components, want %d", len(amts), want)
	}
	for i := 1; i < len(amts); i++ {
		if amts[i-1].Cmp(amts[i]) > 0 {
			t.Errorf("ByProfit out of order: %s then %s", amts[i-1], amts[i])
		}
	}
	zero := normalform.Signed{}
	var pos []normalform.Signed
	ix.ByProfit(ctx, index.Gross, weth, &zero, nil, func(a normalform.Signed, r index.Ref) error { pos = append(pos, a); return nil })
	for _, a := range pos {
		if a.Sign() < 0 {
			t.Errorf("ByProfit(>= 0) gave %s", a)
		}
	}
	if len(amts) > 0 {
		lo, hi := amts[0], amts[len(amts)-1]
		var got []normalform.Signed
		ix.ByProfit(ctx, index.Gross, weth, &lo, &hi, func(a normalform.Signed, r index.Ref) error { got = append(got, a); return nil })
		if len(got) != len(amts) {
			t.Errorf("ByProfit([min, max]) = %d, want %d", len(got), len(amts))
		}
	}
	// Cancellation stops an iterator; fn's error stops it too.
	cctx, cancel := context.WithCancel(ctx)
	n = 0
	err = ix.ByBlocks(cctx, index.AllBlocks, func(index.Ref) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n >= corpusTxs {
		t.Errorf("cancelled ByBlocks: %v after %d", err, n)
	}
	stop := errors.New("enough")
	if err := ix.Scan(ctx, func(*index.Record) error { return stop }); err != stop {
		t.Errorf("Scan returned %v", err)
	}
}

func mustHex(s string) [20]byte {
	var a [20]byte
	for i := range a {
		fmt.Sscanf(s[2*i:2*i+2], "%02x", &a[i])
	}
	return a
}

// TestSchemaMismatch: an index written with another schema is refused.
func TestSchemaMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	index.DB(ix).Update(func(txn *badger.Txn) error { return txn.Set(index.SchemaKey().Bytes(), []byte{0, 0, 0, 9, 0, 0, 0, 1}) })
	ix.Close()
	if _, err := index.Open(dir); err == nil || !strings.Contains(err.Error(), "schema 9") {
		t.Errorf("Open = %v", err)
	}
	if _, err := index.OpenReadOnly(filepath.Join(t.TempDir(), "nothing")); err == nil {
		t.Error("OpenReadOnly of a missing directory succeeded")
	}
}

// TestConfigChangeReingests: an input ingested under another
// configuration (chain, wrapped native, routers) is not skipped.
func TestConfigChangeReingests(t *testing.T) {
	ix := openTemp(t)
	ctx := context.Background()
	in, err := ingest.Files(filepath.Join(corpusDir, "mev-inspect-rs/res/triangular_arb.data.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Ingest(ctx, ix, in, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	other := ingest.Options{Config: normalform.NewConfig(normalform.Networks[1], []normalform.Address{}, nil)}
	sum, err := ingest.Ingest(ctx, ix, in, other)
	if err != nil || sum.InputsSkipped != 0 {
		t.Errorf("another configuration: %+v %v", sum, err)
	}
	sum, err = ingest.Ingest(ctx, ix, in, other)
	if err != nil || sum.InputsSkipped != 1 {
		t.Errorf("the same configuration again: %+v %v", sum, err)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestScenariosIngest: every scenario (examples/scenarios, one
// transaction per bundle, in geth and Parity shapes) and every mainnet
// example ingests; both shapes of a scenario give the same record but for
// the encoded normal form, which keeps the input's shape and decode
// statistics (the later, Parity, input is the one kept).
func TestScenariosIngest(t *testing.T) {
	geth, err1 := ingest.Files("../examples/scenarios/geth")
	parity, err2 := ingest.Files("../examples/scenarios/parity")
	mainnet, err3 := ingest.Files("../examples/mainnet")
	if err1 != nil || err2 != nil || err3 != nil {
		t.Skip("examples/scenarios not generated:", err1, err2, err3)
	}
	ctx := context.Background()
	a, b := openTemp(t), openTemp(t)
	sum, err := ingest.Ingest(ctx, a, append(geth, mainnet...), ingest.Options{})
	if err != nil || sum.Failed != 0 || sum.Stored != len(geth)+len(mainnet) {
		t.Fatalf("geth: %+v %v", sum, err)
	}
	sum, err = ingest.Ingest(ctx, b, append(append(geth, parity...), mainnet...), ingest.Options{})
	if err != nil || sum.Failed != 0 || sum.Stored != len(geth)+len(parity)+len(mainnet) {
		t.Fatalf("geth and parity: %+v %v", sum, err)
	}
	for _, ix := range []*index.Index{a, b} {
		if err := ix.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	a.Scan(ctx, func(r *index.Record) error {
		o, err := b.Get(r.Hash)
		if err != nil {
			t.Error(err)
			return nil
		}
		x, y := *r, *o
		x.NF, y.NF, x.NFSum, y.NFSum, x.Latency, y.Latency = nil, nil, 0, 0, 0, 0
		if !reflect.DeepEqual(x, y) {
			t.Errorf("tx %s: geth and Parity records differ:\n%+v\n%+v", r.Hash.Hex(), x, y)
		}
		n++
		return nil
	})
	if n != len(geth)+len(mainnet) {
		t.Errorf("%d records", n)
	}
}
