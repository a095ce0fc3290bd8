package index

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// Test helpers of the package's own tests (records, keys, fuzz seeds),
// exported below to its external tests (package index_test), which fill
// indexes through index/ingest.

const corpusDir = "../normalform/trace/testdata/corpus"

// analyseCorpus decodes and analyses every corpus transaction (the
// corpus's JSON files in lexical order, as ingest.Files lists them).
func analyseCorpus(t testing.TB) []*normalform.Analysis {
	t.Helper()
	return analyseDir(t, corpusDir)
}

// gethScenarios is the directory of the geth-shaped scenario bundles.
var gethScenarios = filepath.Join("..", "examples", "scenarios", "geth")

// scenarioAnalysis decodes and analyses the one transaction of the geth
// scenario name.
func scenarioAnalysis(t testing.TB, name string) *normalform.Analysis {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(gethScenarios, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := normalform.DefaultConfig()
	res := trace.Decode(data, trace.Options{Config: cfg, Source: name})
	if len(res.Txs) != 1 {
		t.Fatalf("%s: %d txs %v", name, len(res.Txs), res.Errors)
	}
	a, err := normalform.Analyze(res.Txs[0], cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// analyseDir decodes and analyses every transaction of the JSON files
// under dir, in lexical order.
func analyseDir(t testing.TB, dir string) []*normalform.Analysis {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	cfg := normalform.DefaultConfig()
	var out []*normalform.Analysis
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		abs, _ := filepath.Abs(p)
		res := trace.Decode(data, trace.Options{Config: cfg, Source: abs})
		for _, tx := range res.Txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
		}
	}
	return out
}

// AnalyseCorpus is analyseCorpus, for the external tests.
var AnalyseCorpus = analyseCorpus

// What the external tests reach inside the index: its Badger handle, raw
// writes, the write hooks, the scan's tuning, the space estimate, the
// dictionary.

func DB(ix *Index) *badger.DB { return ix.db }

// ValueThreshold is the size from which Badger keeps a value in its value
// log (index.go).
const ValueThreshold = valueThreshold

// putAll opens an index in a temporary directory (closed when the test
// ends) and puts every analysis.
func putAll(t testing.TB, as []*normalform.Analysis) *Index {
	t.Helper()
	ix, err := Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	for _, a := range as {
		if err := ix.Put(a, time.Microsecond); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

// Dump reads every key and value of the index.
func Dump(t testing.TB, ix *Index) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := ix.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out[string(it.Item().KeyCopy(nil))] = string(v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
func Set(ix *Index, txn *badger.Txn, k, v []byte) error      { return ix.set(txn, k, v) }
func Del(ix *Index, txn *badger.Txn, k []byte) error         { return ix.del(txn, k) }
func SetHook(ix *Index, f func(op string, key []byte) error) { ix.hook = f }
func SetHookSpace(ix *Index, f func(batch uint64) error)     { ix.hookSpace = f }

var (
	EncodeBlockValue = encodeBlockValue
	ContentOf        = contentOf
	H, Ad            = h, ad
)

// KeyCount is the number of keys rec's record writes (its value's aside).
func KeyCount(rec *Record) int { return len(keysOf(rec, nil, nil, ids{})) }

// NeedEmpty is the space a batch needs on an empty store.
func NeedEmpty(batch uint64) uint64 { return need(batch, 0, 0, lsm{}) }

// SetScan sets the parallel scan's goroutines and chunk size; restore
// puts them back.
func SetScan(workers int, per int64) (restore func()) {
	oldW, oldC := scanWorkers, chunkRecords
	scanWorkers = func() int { return workers }
	chunkRecords = per
	return func() { scanWorkers, chunkRecords = oldW, oldC }
}

// ShapeID assigns (or finds) the dictionary id of a shape hash in txn.
func ShapeID(ix *Index, txn *badger.Txn, shape normalform.Hash) (uint32, error) {
	return ix.newWtx(txn).id(normalform.Shape, shape)
}

// DictIDs calls fn with every id of the dictionary.
func DictIDs(ctx context.Context, ix *Index, fn func(id uint32)) error {
	return ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(ctx, txn, kindPrefix(KindDict), nil, true, func(k, v []byte) ([]byte, bool, error) {
			id, err := parseID(v)
			if err == nil {
				fn(id)
			}
			return nil, false, err
		})
	})
}

// SetRawRecord writes v as the record at l, through its page (or its
// own key when l's index is unknown), as a damaged or hand-made record.
func SetRawRecord(ix *Index, l Loc, v []byte) error {
	return ix.db.Update(func(txn *badger.Txn) error {
		w := ix.newWtx(txn)
		if err := w.setRecord(l, v); err != nil {
			return err
		}
		return w.flush()
	})
}

// RawRecord reads the bytes of the record at l (found: it is there).
func RawRecord(ix *Index, l Loc) (v []byte, found bool, err error) {
	err = ix.db.View(func(txn *badger.Txn) error {
		return recordValue(txn, l, func(b []byte) error { v = append([]byte(nil), b...); return nil })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// RecordsUnder counts the records under one tx key (a page's, or 1).
func RecordsUnder(k, v []byte) (int, error) {
	n := 0
	err := walkTxKey(k, v, func(Loc, []byte) error { n++; return nil })
	return n, err
}

// PositionsUnder is the number of transactions a secondary key (k, v)
// stands for: the positions its posting lists, or one (postings.go).
func PositionsUnder(k, v []byte) (int, error) {
	n := 0
	err := positionsOf(k, v, func(Loc) error { n++; return nil })
	return n, err
}

var (
	layoutSplitPosting = layout.SplitPosting
	ParsePostingValue  = func(k, v []byte) ([]uint32, error) { return layout.ParsePosting(k, v, nil) }
	AppendPostingValue = layout.AppendPosting
)
