package index_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// retryBundles writes, under dir, variants of a scenario bundle (a geth
// trace with its block and receipt): whole (good), with one receipt field
// malformed (bad: effectiveGasPrice the number 1.5), and without its
// receipts (bare). It returns their paths and the transaction's hash.
func retryBundles(t *testing.T, dir, scenario string) (good, bad, bare string, tx normalform.Hash) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../examples/scenarios/geth", scenario+".json"))
	if err != nil {
		t.Fatal(err)
	}
	variant := func(name string, edit func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	rc := m["receipts"].([]any)[0].(map[string]any)
	tx, err = normalform.ParseHash(rc["transactionHash"].(string))
	if err != nil {
		t.Fatal(err)
	}
	good = variant(scenario+"-good", func(map[string]any) {})
	bad = variant(scenario+"-bad", func(m map[string]any) {
		m["receipts"].([]any)[0].(map[string]any)["effectiveGasPrice"] = json.Number("1.5")
	})
	bare = variant(scenario+"-bare", func(m map[string]any) { delete(m, "receipts") })
	return good, bad, bare, tx
}

func failuresOf(t *testing.T, ix *index.Index) []index.Failure {
	t.Helper()
	var fs []index.Failure
	if err := ix.Failures(context.Background(), func(f index.Failure) error { fs = append(fs, f); return nil }); err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestRetryNeverDegrades is the sequence issue 15 found: a bundle with one
// malformed receipt field is ingested, then the good bundle, then
// --retry-failed. The retry used to run the bad input again and replace
// the good record with one without costs ("the input has no receipt").
// Now: the bad input fails the transaction, naming the field (it stores
// nothing); the good input stores it and clears that failure, so the
// retry has nothing to do; the bad input ingested again (forced) records
// its failure and leaves the record; an input without the receipt is
// kept out (the index's record knows more), and counted as such.
func TestRetryNeverDegrades(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good, bad, bare, tx := retryBundles(t, dir, "two_pool_arb")
	ix := openTemp(t)
	costsKnown := func(step string) {
		t.Helper()
		rec, err := ix.Get(tx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !rec.CostsKnown || rec.Status == normalform.StatusUnknown {
			t.Fatalf("%s: the record lost its receipt (costs known %v, status %v)", step, rec.CostsKnown, rec.Status)
		}
	}

	sum, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(bad)}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs := failuresOf(t, ix)
	if sum.Stored != 0 || len(fs) != 1 || !fs[0].HasTx || fs[0].Tx != tx || !strings.Contains(fs[0].Msg, "at $.receipts[0].effectiveGasPrice") {
		t.Fatalf("the bad input: %+v, failures %v", sum, fs)
	}
	if _, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(good)}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	costsKnown("after the good input")
	if fs := failuresOf(t, ix); len(fs) != 0 {
		t.Fatalf("the good input stored the transaction, but its failure is still recorded: %v", fs)
	}
	sum, err = ingest.RetryFailed(ctx, ix, ingest.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	costsKnown("after --retry-failed")
	if sum.Inputs != 0 {
		t.Errorf("the retry had nothing to retry, yet ran %d inputs", sum.Inputs)
	}
	// The bad input again: its failure is recorded, the record stays.
	if _, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(bad)}, ingest.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	costsKnown("after the bad input again")
	if fs := failuresOf(t, ix); len(fs) != 1 {
		t.Fatalf("failures: %v", fs)
	}
	// The retry runs it again: nothing changes.
	if _, err := ingest.RetryFailed(ctx, ix, ingest.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	costsKnown("after the second --retry-failed")
	// An input without the receipt never replaces the record made with it.
	sum, err = ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(bare)}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	costsKnown("after an input without the receipt")
	if sum.Kept != 1 || sum.Stored != 0 || !strings.Contains(sum.String(), "1 of them kept as indexed") {
		t.Errorf("the bare input: %+v (%s)", sum, sum)
	}
	// And it clears the bad input's failure: the transaction is indexed.
	if fs := failuresOf(t, ix); len(fs) != 0 {
		t.Errorf("failures after the transaction was ingested again: %v", fs)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestBetterRecordReplaces: an input that knows more than the index's
// record (the receipt) replaces it; one that knows as much replaces it
// too (the later input wins, as for any new analysis).
func TestBetterRecordReplaces(t *testing.T) {
	ctx := context.Background()
	good, _, bare, tx := retryBundles(t, t.TempDir(), "two_pool_arb")
	ix := openTemp(t)
	if _, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(bare)}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if rec, err := ix.Get(tx); err != nil || rec.CostsKnown {
		t.Fatalf("the bare input: %v, %+v", err, rec)
	}
	sum, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(good)}, ingest.Options{})
	if err != nil || sum.Stored != 1 {
		t.Fatalf("the good input after the bare one: %v %+v", err, sum)
	}
	if rec, err := ix.Get(tx); err != nil || !rec.CostsKnown {
		t.Fatalf("the good input did not replace the bare record: %v %+v", err, rec)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestClearedFailureLeavesNoStaleOne: an input with two failures, the
// first of which a later input clears, then ingested again whole: none of
// its failures is left (the cleared one left a gap among them, which the
// cleanup of an input's earlier failures must step over).
func TestClearedFailureLeavesNoStaleOne(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good1, bad1, _, _ := retryBundles(t, dir, "two_pool_arb")
	_, bad2, _, _ := retryBundles(t, dir, "star_r")
	read := func(p string) json.RawMessage {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	both := filepath.Join(dir, "both.json")
	write := func(a, b string) {
		data, err := json.Marshal([]json.RawMessage{read(a), read(b)})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(both, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(bad1, bad2)
	ix := openTemp(t)
	if _, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(both)}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if fs := failuresOf(t, ix); len(fs) != 2 {
		t.Fatalf("failures: %v", fs)
	}
	if _, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(good1)}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if fs := failuresOf(t, ix); len(fs) != 1 || fs[0].Seq != 1 {
		t.Fatalf("after the first transaction was stored: %v", fs)
	}
	good2, _, _, _ := retryBundles(t, t.TempDir(), "star_r")
	write(good1, good2)
	sum, err := ingest.RetryFailed(ctx, ix, ingest.Options{}, nil)
	if err != nil || sum.Failed != 0 {
		t.Fatalf("retry: %v %+v", err, sum)
	}
	if fs := failuresOf(t, ix); len(fs) != 0 {
		t.Fatalf("failures left: %v", fs)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReceiptsRecordNeverReplacesTraced: a transaction's receipts-only
// analysis (its bundle without the trace) is stored with mode receipts;
// its traced analysis then replaces it, and a receipts-only input after
// that is kept out (it knows less: no trace), counted as kept.
func TestReceiptsRecordNeverReplacesTraced(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join("..", "examples", "scenarios", "geth", "two_pool_arb.json")
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	delete(d, "traces")
	stripped, _ := json.Marshal(d)
	rcpt := filepath.Join(dir, "receipts.json")
	if err := os.WriteFile(rcpt, stripped, 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTemp(t)
	if sum, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(rcpt)}, ingest.Options{}); err != nil || sum.Stored != 1 {
		t.Fatalf("the receipts-only input: %v %+v", err, sum)
	}
	var rs []struct {
		Hash normalform.Hash `json:"transactionHash"`
	}
	if err := json.Unmarshal(d["receipts"], &rs); err != nil || len(rs) != 1 {
		t.Fatal(err)
	}
	tx := rs[0].Hash
	if rec, err := ix.Get(tx); err != nil || rec.Mode != normalform.ModeReceipts {
		t.Fatalf("the receipts-only record: %v %+v", err, rec)
	}
	if sum, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(good)}, ingest.Options{}); err != nil || sum.Stored != 1 {
		t.Fatalf("the traced input: %v %+v", err, sum)
	}
	if rec, err := ix.Get(tx); err != nil || rec.Mode != normalform.ModeTraces {
		t.Fatalf("the traced input did not replace the receipts-only record: %v %+v", err, rec)
	}
	if err := os.WriteFile(rcpt, append(stripped, ' '), 0o644); err != nil { // new content: read again
		t.Fatal(err)
	}
	sum, err := ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(rcpt)}, ingest.Options{})
	if err != nil || sum.Stored != 0 || sum.Kept != 1 {
		t.Fatalf("the receipts-only input after the traced one: %v %+v", err, sum)
	}
	if rec, err := ix.Get(tx); err != nil || rec.Mode != normalform.ModeTraces {
		t.Fatalf("a receipts-only record replaced the traced one: %v %+v", err, rec)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}
