package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

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
