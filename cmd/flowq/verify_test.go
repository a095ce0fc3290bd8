package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index"
)

// TestVerifyFindsMissingKey: flowq verify passes a fresh index and fails,
// naming the transaction, once one of its verdict keys is gone.
func TestVerifyFindsMissingKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", dir, "../../examples/mainnet"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	out, errs, code := flowq(t, nil, "", "verify", "--index", dir)
	if code != 0 || !strings.Contains(out, "4 transactions, every key consistent with its record") {
		t.Fatalf("verify of a fresh index: exit %d: %s%s", code, out, errs)
	}

	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	var gone []byte
	err = db.Update(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{byte(index.KindVerdict)}})
		it.Rewind()
		if !it.Valid() {
			it.Close()
			t.Fatal("no verdict key")
		}
		gone = it.Item().KeyCopy(nil)
		it.Close()
		return txn.Delete(gone)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	_, errs, code = flowq(t, nil, "", "verify", "--index", dir)
	if code != 1 || !strings.Contains(errs, "missing key") {
		t.Fatalf("verify without the key %x: exit %d: %s", gone, code, errs)
	}
}

// TestVerifyBlockFindings: flowq verify recomputes the scenario block's
// findings and passes, then fails naming block 137 once a record of it
// is deleted (its findings wait to be computed), and passes again after
// an ingest computes them.
func TestVerifyBlockFindings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	geth := filepath.Join("..", "..", "examples", "scenarios", "geth")
	var files []string
	for _, n := range []string{"sandwich_front", "sandwich_victim", "sandwich_back"} {
		files = append(files, filepath.Join(geth, n+".json"))
	}
	if _, errs, code := flowq(t, nil, "", append([]string{"ingest", "--index", dir}, files...)...); code != 0 || !strings.Contains(errs, "findings of 1 blocks computed") {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	out, errs, code := flowq(t, nil, "", "verify", "--index", dir)
	if code != 0 || !strings.Contains(out, "3 transactions, every key consistent with its record; 1 blocks, their findings equal to their records'") {
		t.Fatalf("verify of a fresh index: exit %d: %s%s", code, out, errs)
	}

	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := ix.Block(137)
	if err != nil || !ok {
		t.Fatalf("block 137: %v %v", ok, err)
	}
	if err := ix.Delete(common.HexToHash(r.Txs[1].Tx)); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	_, errs, code = flowq(t, nil, "", "verify", "--index", dir)
	if code != 1 || !strings.Contains(errs, "block 137: dirty: its findings wait to be computed") {
		t.Fatalf("verify with a record deleted: exit %d: %s", code, errs)
	}
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", dir, "--force", files[1]); code != 0 {
		t.Fatalf("ingest again: exit %d: %s", code, errs)
	}
	if out, errs, code := flowq(t, nil, "", "verify", "--index", dir); code != 0 {
		t.Fatalf("verify after the ingest: exit %d: %s%s", code, out, errs)
	}
}
