package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// Index is an open index directory.
type Index struct {
	db       *badger.DB
	path     string
	dict     *dictCache
	readOnly bool
	// lock and viewDir, when set, are the shared lock held on the
	// directory of an index opened through a view (view.go) and the
	// view, which Close releases and removes.
	lock    *os.File
	viewDir string
	// holder: this process wrote the directory's holder file
	// (holder.go), which Close removes.
	holder bool
	// hook, when set (tests), is called before every write of put; an
	// error aborts the write transaction.
	hook func(op string, key []byte) error
	// hookSpace, when set (tests), is called by roomFor before it
	// measures the free space; an error is returned as roomFor's.
	hookSpace func(batch uint64) error
	// recMu serialises the writes of records (PutRecord, Delete, a
	// batch's transaction); recWrites counts PutRecord's and Delete's,
	// which a batch writing without reads watches (absent.go).
	recMu     sync.Mutex
	recWrites uint64
}

// Open opens the index at path, creating it when missing. It refuses
// (NoSpaceError) when the filesystem lacks the space Badger may need
// (space.go).
func Open(path string) (*Index, error) { return open(path, false) }

// OpenReadOnly opens an existing index for reading; other processes may
// read it at the same time, none may write it. It writes nothing to the
// index's directory, needs no free space there, and opens an index a
// crash left without a clean close (view.go).
func OpenReadOnly(path string) (*Index, error) { return open(path, true) }

// OpenSnapshot opens for reading an index that another process holds
// for writing (OpenReadOnly's LockedError): the state of its last
// committed write when it is called, through a view (view.go) that
// takes no lock. Later writes are not seen.
func OpenSnapshot(path string) (*Index, error) {
	db, _, view, err := openView(path, func(dir string) badger.Options { return badgerOptions(dir, true) }, true)
	if err != nil {
		return nil, fmt.Errorf("reading a snapshot of index %s: %w", path, err)
	}
	ix := &Index{db: db, path: path, dict: newDictCache(), readOnly: true, viewDir: view}
	if err := ix.checkSchema(true); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// memTableSize is Badger's memtable size: the unit of its flushes to
// level-0 tables. The space check (space.go) counts what the memtables
// hold, not their size, so it need not be small.
const memTableSize = 32 << 20

// baseLevelSize is the size of Badger's first level below level 0
// (Badger's default is 10 MB). Each level is ten times the one above, so
// a larger base means fewer levels for the same index and each key
// rewritten by fewer compactions: at a million synthetic transactions
// (about 1 GB) the ingest's CPU fell 9% and a key-only walk (count by
// family) 25% (BENCHMARKS.md, "Issue 22: where the targets stood after
// session 5", "Badger's base level at 256 MB").
const baseLevelSize = 256 << 20

// level0Tables and level0Stall are how many level-0 tables Badger lets
// pile up before it compacts them into the base level, and before it
// stops the writes until it has (its defaults are 5 and 15). Level 0's
// compaction is one goroutine's work, and each rewrites the base
// level's tables that the level-0 tables overlap: the secondary keys,
// in tag order, overlap all of them. With the defaults an ingest of a
// million synthetic transactions waited on it (the process used 1.3 of
// its 2 cores: 10,900 tx/s); compacting twice as many tables at a time
// rewrites the base level half as often, and the writes did not wait
// (1.65 cores, 15,600 tx/s, 13% less CPU: BENCHMARKS.md, "Issue 22:
// where the targets stood after session 7"). A lookup reads up to this
// many more tables' bloom filters meanwhile.
const (
	level0Tables = 10
	level0Stall  = 30
)

// valueThreshold is the value size from which Badger keeps a value in
// its value log (*.vlog), the LSM tree holding a 12-byte pointer to it;
// smaller values stay in the tree (Badger's default keeps every value up
// to 1 MB there). Values of this size or more are the record pages (about
// 3.5 kB for 16 transactions) and the NF pages (a block's normal forms,
// 13 kB for 100 synthetic transactions): 344 of the 504 bytes a
// transaction stores. In the tree they were written again by the flush of
// every memtable and by every compaction that moved their keys; in the
// value log they are written once, and memtables of pointers flush and
// compact a fraction of the bytes. The postings, dictionary entries and
// block findings stay in the tree, where the scans that read their values
// find them beside their keys. At a million synthetic transactions the
// ingest took about a tenth less CPU (medians of five interleaved runs:
// 154.0 against 174.3 µs a transaction) and 1.2 GB at its peak against
// 1.7-1.9 (BENCHMARKS.md, "Session 14"). A page's earlier versions,
// which the tree's compactions dropped, stay in the value log: flowq
// writes a page once a batch (pages.go, nfpages.go) and cuts batches at
// the ends of blocks (ingest's writer.full), so an ingest leaves few
// (TestPagesInValueLog); Badger's value-log collection is not run, as
// it deletes files that another process's view links to (view.go).
const valueThreshold = 1 << 10

// badgerOptions are the index's Badger options for a directory.
//
// Tables are not compressed, and so need no block cache: scans read
// every record, and on this workload Snappy's decoding and the block
// cache's churn cost a scan of a million records more than its reads
// (BENCHMARKS.md); the tables take about half as much disk again.
func badgerOptions(dir string, readOnly bool) badger.Options {
	return badger.DefaultOptions(dir).WithLogger(nil).WithReadOnly(readOnly).
		WithMemTableSize(memTableSize).WithCompression(options.None).WithBlockCacheSize(0).
		WithValueThreshold(valueThreshold).
		WithBaseLevelSize(baseLevelSize).WithNumLevelZeroTables(level0Tables).WithNumLevelZeroTablesStall(level0Stall)
}

func open(path string, readOnly bool) (*Index, error) {
	if readOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no index at %s (run flowq ingest first): %w", path, err)
		}
	}
	var db *badger.DB
	var lock *os.File
	var view string
	var err error
	switch {
	case readOnly && needsView(path):
		db, lock, view, err = openView(path, func(dir string) badger.Options { return badgerOptions(dir, true) }, false)
	case readOnly:
		db, err = openBadger(badgerOptions(path, true))
	default:
		if err := roomToOpen(path); err != nil {
			return nil, err
		}
		opt := badgerOptions(path, false)
		db, err = openBadger(opt)
		if err != nil && strings.Contains(err.Error(), z.NewFile.Error()) {
			// A process killed between creating a value-log file and sizing
			// it leaves the file empty. Badger's open then sizes and
			// bootstraps it but reports its "new file" signal as a failure;
			// the file is whole now, so a second open succeeds
			// (TestCrashSafety found it). Badger formats the signal into its
			// error without wrapping it, so only its text can be matched.
			db, err = openBadger(opt)
		}
	}
	if err != nil {
		if le := lockedError(path, err); le != nil {
			return nil, le
		}
		return nil, fmt.Errorf("opening index %s: %w", path, err)
	}
	ix := &Index{db: db, path: path, dict: newDictCache(), readOnly: readOnly, lock: lock, viewDir: view}
	if err := ix.checkSchema(readOnly); err != nil {
		ix.Close()
		return nil, err
	}
	if !readOnly {
		if err := writeHolder(path); err != nil {
			ix.Close()
			return nil, fmt.Errorf("opening index %s: writing its holder file: %w", path, err)
		}
		ix.holder = true
	}
	return ix, nil
}

// needsView reports whether a read-only open of dir must go through a
// view (view.go): a crash left memtable logs, or an empty value log
// (killed between creating and sizing it), which Badger opened read-only
// would have to size.
func needsView(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false // Badger's open reports it
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".mem") {
			return true
		}
		if strings.HasSuffix(e.Name(), ".vlog") {
			if fi, err := e.Info(); err == nil && fi.Size() == 0 {
				return true
			}
		}
	}
	return false
}

// openBadger is badger.Open, with a fault while it reads its memory-mapped
// files (a page of a sparse file that a full tmpfs cannot give, a file
// cut short by another program) reported as an error instead of killing
// the process.
func openBadger(opt badger.Options) (db *badger.DB, err error) {
	if err := checkTables(opt.Dir); err != nil {
		return nil, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if f, ok := p.(interface{ Addr() uintptr }); ok {
				db, err = nil, fmt.Errorf("a memory-mapped file of the index faulted at %#x while opening it (a full disk, or a file cut short?)", f.Addr())
				return
			}
			db, err = nil, &DamageError{Cause: "opening it: " + oneLine(p)}
		}
	}()
	return badger.Open(opt)
}

// checkTables opens each table file of dir as Badger's open will, on
// this goroutine: Badger opens them on goroutines of its own, reading a
// table's last block to learn its largest key, and a block whose
// lengths were damaged made it panic there, which ended the process (a
// goroutine dump, whatever the caller recovers). A table that panics or
// fails here with every compression Badger writes is a *DamageError
// naming it; Badger's open reports the failures it returns itself. The
// files are mapped read-only and closed, never changed.
func checkTables(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		return nil // Badger's open says what is wrong with dir
	}
	for _, f := range files {
		var panicked *DamageError
		for _, c := range []options.CompressionType{options.None, options.Snappy, options.ZSTD} {
			err := openTable(f, c)
			if err == nil {
				panicked = nil
				break
			}
			if de := (*DamageError)(nil); errors.As(err, &de) && panicked == nil {
				panicked = de
			}
		}
		if panicked != nil { // no compression opened it, and one made Badger panic
			return &DamageError{Cause: filepath.Base(f) + ": " + panicked.Cause}
		}
	}
	return nil
}

// openTable opens and closes one table file with a compression, a panic
// its *DamageError.
func openTable(path string, c options.CompressionType) error {
	return guarded(func() error {
		mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
		if err != nil {
			if mf != nil { // an empty file: mapped, and z's "new file" signal
				mf.Close(-1)
			}
			return nil // not this check's to report
		}
		t, err := table.OpenTable(mf, table.Options{Compression: c, BlockSize: 4 << 10, ChkMode: options.NoVerification})
		if err != nil {
			mf.Close(-1)
			return err
		}
		return t.Close(-1) // the file's mapping, not the file (DecrRef would delete it)
	})
}

func oneLine(p any) string {
	s := strings.Join(strings.Fields(fmt.Sprint(p)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// DamageError is an open or a read of the index that panicked inside
// Badger or faulted in a memory-mapped file: a damaged file (a byte
// changed: Badger does not check a table's blocks as it reads them, and
// one with a bad length panics) or a file cut short. It is returned
// instead of ending the process (a panic on another goroutine than the
// caller's, a scan's worker or Badger's own, cannot be recovered by the
// caller). The scans recover what their callbacks do too, so a bug there
// is reported the same way: the cause says which.
type DamageError struct{ Cause string }

func (e *DamageError) Error() string {
	return "reading the index failed (" + e.Cause + "): a file of the index may be damaged; flowq verify checks it"
}

// guarded runs f, a read of the index on a scan's own goroutine, with a
// panic or a fault of a memory-mapped file returned as a *DamageError.
func guarded(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &DamageError{Cause: oneLine(p)}
		}
	}()
	return f()
}

// SchemaError is Open's error for an index written by a flowq of
// another schema (layout/keys.go's SchemaVersion, RecordVersion).
type SchemaError struct {
	Path            string
	Schema, Records uint32 // the index's
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("index %s has schema %d (records v%d); this flowq uses schema %d (records v%d): ingest into a new directory",
		e.Path, e.Schema, e.Records, SchemaVersion, RecordVersion)
}

// Path is the index directory.
func (ix *Index) Path() string { return ix.path }

// Close closes the index.
func (ix *Index) Close() error {
	err := ix.db.Close()
	if ix.holder {
		removeHolder(ix.path)
		ix.holder = false
	}
	if ix.viewDir != "" {
		os.RemoveAll(ix.viewDir)
		ix.viewDir = ""
	}
	if ix.lock != nil {
		ix.lock.Close()
		ix.lock = nil
	}
	return err
}

func schemaValue() []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, SchemaVersion), RecordVersion)
}

func (ix *Index) checkSchema(readOnly bool) error {
	key := SchemaKey().Bytes()
	var have []byte
	err := ix.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(key)
		if err != nil {
			return err
		}
		have, err = it.ValueCopy(nil)
		return err
	})
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		if readOnly {
			return fmt.Errorf("%s is not a flowq index (no schema key)", ix.path)
		}
		return ix.db.Update(func(txn *badger.Txn) error { return txn.Set(key, schemaValue()) })
	case err != nil:
		return fmt.Errorf("reading index %s: %w", ix.path, err)
	case !bytes.Equal(have, schemaValue()):
		if len(have) == 8 {
			return &SchemaError{Path: ix.path, Schema: binary.BigEndian.Uint32(have), Records: binary.BigEndian.Uint32(have[4:])}
		}
		return fmt.Errorf("index %s: bad schema key %x", ix.path, have)
	}
	return nil
}

// Put stores one analysed transaction: its record and every secondary key,
// in one Badger transaction (all or nothing). latency is the time the
// analysis took. Putting a transaction again with the same analysis
// changes nothing (the first latency is kept); with a different analysis
// it replaces the record and its keys.
func (ix *Index) Put(a *normalform.Analysis, latency time.Duration) error {
	rec, err := NewRecord(a, latency)
	if err != nil {
		return err
	}
	return ix.PutRecord(rec)
}

// PutRecord stores a record and its keys, as Put does.
func (ix *Index) PutRecord(rec *Record) error {
	e := encodeRecord(rec)
	if err := ix.roomFor(writeSize(rec, e)); err != nil {
		return err
	}
	ix.recMu.Lock()
	defer ix.recMu.Unlock()
	ix.recWrites++
	var err error
	for range 10 {
		var w *wtx
		err = ix.db.Update(func(txn *badger.Txn) error {
			w = ix.newWtx(txn)
			if _, err := w.put(rec, e); err != nil {
				return err
			}
			return w.flush() // the postings and pages it changed (wtx.flush)
		})
		if err == nil {
			w.committed()
		}
		if !errors.Is(err, badger.ErrConflict) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("tx %s: %w", rec.Hash.Hex(), ix.noSpace(err))
	}
	return nil
}

func (ix *Index) set(txn *badger.Txn, k, v []byte) error {
	if ix.hook != nil {
		if err := ix.hook("set", k); err != nil {
			return err
		}
	}
	return txn.Set(k, v)
}

func (ix *Index) del(txn *badger.Txn, k []byte) error {
	if ix.hook != nil {
		if err := ix.hook("delete", k); err != nil {
			return err
		}
	}
	return txn.Delete(k)
}

// PositionError reports a transaction whose position (block, index) is
// already another transaction's: the index holds one chain, and a
// position names one transaction (after a reorganisation, Delete the
// transactions of the block that was replaced).
type PositionError struct {
	Tx, Other normalform.Hash
	Loc       Loc
}

func (e *PositionError) Error() string {
	return fmt.Sprintf("tx %s: block %d index %d already holds tx %s (another chain, or a reorganised block? delete it first)",
		e.Tx.Hex(), e.Loc.Block, e.Loc.Index, e.Other.Hex())
}

// put writes rec (encoded as e) in the write transaction. It reports
// whether anything changed. A record that knows less than the one the
// index holds for the transaction (knowsLess) is not written: put
// reports no change, and sets w.kept.
func (w *wtx) put(rec *Record, e *encoded) (bool, error) { return w.putAbsent(rec, e, nil) }

// putAbsent is put, without the reads that abs says can only miss
// (absent.go; nil: every read made), and noting in abs what it writes.
func (w *wtx) putAbsent(rec *Record, e *encoded, abs *absent) (bool, error) {
	w.kept, w.wrote = false, nil
	w.abs = abs // its page reads (pages.go)
	// The record at this position, or this transaction's elsewhere.
	var oldEnc []byte
	var oldLoc Loc
	var locs []Loc // the txhash key's positions, when read
	samePos := false
	err := w.record(rec.Loc, func(v []byte) error { oldEnc = append([]byte(nil), v...); return nil })
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		if !abs.hashAbsent(rec.Hash) {
			if locs, err = locsOf(w.txn, rec.Hash); err != nil {
				return false, err
			}
		}
		if locs == nil {
			locs = []Loc{} // read, and none: txHashAdd need not read them again
		}
		if oldLoc, oldEnc, err = recordAmong(w, rec.Hash, locs); err != nil {
			return false, err
		}
	case err != nil:
		return false, err
	default:
		if h, ok := hashOf(oldEnc); !ok {
			return false, fmt.Errorf("record at %s: %w", rec.Loc, ErrBadRecord)
		} else if h != rec.Hash {
			return false, &PositionError{Tx: rec.Hash, Other: h, Loc: rec.Loc}
		}
		oldLoc, samePos = rec.Loc, true
	}
	if oldEnc != nil {
		// Decided on the old record's header, before the new record's
		// dictionary ids are assigned: a record not written assigns none.
		head, err := decodeRecord(oldLoc, oldEnc, w.resolve(), depthHeader)
		if err != nil {
			return false, err
		}
		if knowsLess(rec, head) {
			w.kept = true
			return false, nil
		}
	}
	id, err := w.ids(rec)
	if err != nil {
		return false, err
	}
	var aidBuf [8]uint32
	aid, err := w.addrIDs(e.Dict, aidBuf[:0])
	if err != nil {
		return false, err
	}
	enc := e.Join(id, aid)
	if samePos && sameContent(oldEnc, enc) {
		w.wrote = oldEnc
		return false, nil
	}
	kvs := keysOf(rec, e.Fixed, enc, id)
	abs.wrote(rec.Hash, rec.Loc) // before any write: a key written is never taken for absent
	var old *Record
	var oldID ids
	if oldEnc != nil {
		if old, oldID, err = decodeRecordIDs(oldLoc, oldEnc, w.resolve(), depthFull); err != nil {
			return false, err
		}
	}
	if old != nil {
		keep := make(map[string]bool, len(kvs))
		for _, x := range kvs {
			keep[string(x.K)] = true
		}
		for _, x := range keysOf(old, nil, oldEnc, oldID) {
			if !keep[string(x.K)] {
				if err := w.delKey(x.K); err != nil {
					return false, err
				}
			}
		}
	}
	for _, x := range kvs {
		if err := w.setKey(x.K, x.V); err != nil {
			return false, err
		}
	}
	if old == nil || old.Loc != rec.Loc {
		if err := w.txHashAdd(rec.Hash, rec.Loc, old, locs); err != nil {
			return false, err
		}
	}
	if err := w.firstAfter(old, oldID[normalform.Shape], rec, id[normalform.Shape], abs); err != nil {
		return false, err
	}
	if err := w.markDirty(rec.Loc); err != nil { // blocks.go
		return false, err
	}
	if old != nil && old.Loc.Block != rec.Loc.Block {
		if err := w.markDirty(old.Loc); err != nil {
			return false, err
		}
	}
	w.wrote = enc
	return true, nil
}

// What a record knows of its transaction, besides its analysis: whether
// its costs are known (the input gave a receipt with the gas price),
// its status (a receipt), its block and its index in the block, its
// sender, and its trace. An input without a receipt, or without its block,
// gives less; so does a receipts-only analysis of a transaction the index
// holds from its trace.
func knows(r *Record) [6]bool {
	return [6]bool{r.CostsKnown, r.Status != normalform.StatusUnknown, r.Loc.Block != UnknownBlock, r.Loc.Index != UnknownIndex, r.HasFrom,
		r.Mode == normalform.ModeTraces}
}

// knowsLess reports whether rec knows strictly less than old: nothing
// old does not, and not everything it does. Such a record never replaces
// old (an input without the receipt the index's record was made with, a
// retry of an input that has since been given whole); any other
// difference is a new analysis, and the later input wins.
func knowsLess(rec, old *Record) bool {
	n, o := knows(rec), knows(old)
	less := false
	for i := range n {
		if n[i] && !o[i] {
			return false
		}
		if o[i] && !n[i] {
			less = true
		}
	}
	return less
}

// ids returns the dictionary ids of a record's hashes, assigning those
// it lacks.
func (w *wtx) ids(rec *Record) (ids, error) {
	var id ids
	for l := normalform.Shape; l <= normalform.Family; l++ {
		x, err := w.id(l, rec.Hashes.Of(l))
		if err != nil {
			return id, err
		}
		id[l] = x
	}
	return id, nil
}

// locsOf reads the positions of the transactions whose hash begins as
// tx's does (nil: none).
func locsOf(txn *badger.Txn, tx normalform.Hash) ([]Loc, error) {
	item, err := txn.Get(TxHashKey(tx).Bytes())
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var locs []Loc
	err = item.Value(func(v []byte) (err error) { locs, err = parseLocs(v); return })
	return locs, err
}

// recordOf reads the record of a transaction by hash: its encoding and
// position (nil: not in the index).
func recordOf(txn *badger.Txn, tx normalform.Hash) (Loc, []byte, error) {
	locs, err := locsOf(txn, tx)
	if err != nil {
		return Loc{}, nil, err
	}
	return recordAmong(newTxnRecs(txn), tx, locs)
}

// recordAmong reads the record of a transaction among the positions of
// its txhash key.
func recordAmong(src recSource, tx normalform.Hash, locs []Loc) (Loc, []byte, error) {
	for _, l := range locs {
		var enc []byte
		if err := src.record(l, func(v []byte) error {
			if h, ok := hashOf(v); ok && h == tx {
				enc = append([]byte(nil), v...)
			}
			return nil
		}); err != nil {
			return Loc{}, nil, fmt.Errorf("txhash key of %s: its record at %s: %w", tx.Hex(), l, err)
		}
		if enc != nil {
			return l, enc, nil
		}
	}
	return Loc{}, nil, nil
}

// find reads a transaction's record by hash (nil: none).
func (w *wtx) find(tx normalform.Hash) (*Record, ids, []byte, error) {
	locs, err := locsOf(w.txn, tx)
	if err != nil {
		return nil, ids{}, nil, err
	}
	return w.findIn(tx, locs)
}

// findIn reads a transaction's record among the positions of its txhash
// key (nil: none).
func (w *wtx) findIn(tx normalform.Hash, locs []Loc) (*Record, ids, []byte, error) {
	l, enc, err := recordAmong(w, tx, locs)
	if err != nil || enc == nil {
		return nil, ids{}, nil, err
	}
	rec, id, err := decodeRecordIDs(l, enc, w.resolve(), depthFull)
	return rec, id, enc, err
}

// txHashAdd records tx at l in its txhash key, and removes old's position
// (the transaction moved). locs are the key's positions when the caller
// read them (nil: read them).
func (w *wtx) txHashAdd(tx normalform.Hash, l Loc, old *Record, locs []Loc) error {
	if locs == nil {
		var err error
		if locs, err = locsOf(w.txn, tx); err != nil {
			return err
		}
	}
	out := make([]Loc, 0, len(locs)+1)
	for _, x := range locs {
		if x != l && (old == nil || x != old.Loc) {
			out = append(out, x)
		}
	}
	return w.setLocs(tx, append(out, l))
}

// txHashRemove removes a position from tx's txhash key.
func (w *wtx) txHashRemove(tx normalform.Hash, l Loc) error {
	locs, err := locsOf(w.txn, tx)
	if err != nil {
		return err
	}
	out := make([]Loc, 0, len(locs))
	for _, x := range locs {
		if x != l {
			out = append(out, x)
		}
	}
	return w.setLocs(tx, out)
}

// setLocs writes a txhash key's positions, in key order (or deletes it
// when there are none).
func (w *wtx) setLocs(tx normalform.Hash, locs []Loc) error {
	k := TxHashKey(tx).Bytes()
	if len(locs) == 0 {
		return w.ix.del(w.txn, k)
	}
	sort.Slice(locs, func(i, j int) bool { return locs[i].Less(locs[j]) })
	var v []byte
	for _, l := range locs {
		v = l.Append(v)
	}
	return w.ix.set(w.txn, k, v)
}

// firstAfter maintains the first-seen keys after old (nil: none) was
// replaced by rec (nil: deleted).
// oldShape and shape are their shapes' ids. abs, when set, knows the
// keys' values without reading them (absent.go).
func (w *wtx) firstAfter(old *Record, oldShape uint32, rec *Record, shape uint32, abs *absent) error {
	// The bot's first-seen key: the least location under bot|shape. A new
	// transaction can only lower it; a replaced one may have been it.
	if old != nil && (rec == nil || old.Recipient != rec.Recipient || oldShape != shape) {
		abs.forgetFirst()
		if err := w.refreshFirst(old.Recipient, oldShape, old.Loc); err != nil {
			return err
		}
	}
	if rec == nil {
		return nil
	}
	var moved *Loc
	if old != nil && old.Loc != rec.Loc {
		moved = &old.Loc
	}
	return w.lowerFirst(rec, shape, moved, abs)
}

// Delete removes a transaction's record and all its keys (ErrNotFound
// when it is not there).
func (ix *Index) Delete(tx normalform.Hash) error {
	if err := ix.roomFor(128 << 10); err != nil { // its keys, and its page rewritten (pages.go)
		return err
	}
	ix.recMu.Lock()
	defer ix.recMu.Unlock()
	ix.recWrites++
	return ix.db.Update(func(txn *badger.Txn) error {
		w := ix.newWtx(txn)
		old, id, enc, err := w.find(tx)
		if err != nil {
			return err
		}
		if old == nil {
			return fmt.Errorf("tx %s: %w", tx.Hex(), ErrNotFound)
		}
		for _, x := range keysOf(old, nil, enc, id) {
			if err := w.delKey(x.K); err != nil {
				return err
			}
		}
		if err := w.txHashRemove(tx, old.Loc); err != nil {
			return err
		}
		if err := w.markDirty(old.Loc); err != nil { // blocks.go
			return err
		}
		if err := w.firstAfter(old, id[normalform.Shape], nil, 0, nil); err != nil {
			return err
		}
		return w.flush() // the postings and pages it changed (wtx.flush)
	})
}

// firstValue is the value of a first-seen key: the loc of the
// transaction, as keys hold it (8 bytes; 40, the hash in them, when the
// index is unknown). Its hash is the record's at that loc (firstRef).
func firstValue(l Loc) []byte { return l.Append(make([]byte, 0, layout.LocWidth)) }

// parseFirstLoc reads a first-seen key's value.
func parseFirstLoc(v []byte) (Loc, error) {
	l, rest, err := layout.ReadLoc(v)
	if err != nil || len(rest) != 0 {
		return Loc{}, fmt.Errorf("bad first-seen value %x: not a position", v)
	}
	return l, nil
}

// firstRef reads a first-seen key's value (k, v) and the hash of the
// transaction it names: the record's at its loc (one more point read,
// but for a position without index, whose loc holds the hash).
func firstRef(txn *badger.Txn, k, v []byte) (Ref, error) {
	l, err := parseFirstLoc(v)
	if err != nil {
		return Ref{}, fmt.Errorf("first-seen key %x: %w", k, err)
	}
	if !l.Known() {
		return Ref{Hash: l.Tx, Loc: l}, nil
	}
	r := Ref{Loc: l}
	err = recordValue(txn, l, func(enc []byte) error {
		h, ok := hashOf(enc)
		if !ok {
			return fmt.Errorf("first-seen key %x: record at %s: %w", k, l, ErrBadRecord)
		}
		r.Hash = h
		return nil
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return Ref{}, fmt.Errorf("first-seen key %x: no record at %s: %w", k, l, ErrBadRecord)
	}
	return r, err
}

// lowerFirst lowers the first-seen key of rec's bot and shape to rec
// when rec comes first. moved is the position rec's transaction held
// before this write, when it was elsewhere (nil: none).
func (w *wtx) lowerFirst(rec *Record, shape uint32, moved *Loc, abs *absent) error {
	key := FirstKey(rec.Recipient, shape).Bytes()
	cur, found, known := abs.firstOf(key)
	if !known {
		item, err := w.txn.Get(key)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return err
		default:
			found = true
			if err := item.Value(func(v []byte) (err error) { cur, err = parseFirstLoc(v); return }); err != nil {
				return fmt.Errorf("first-seen key %x: %w", key, err)
			}
		}
	}
	if found && moved != nil && cur == *moved {
		// This transaction was the first and has moved: recompute.
		abs.forgetFirst()
		return w.refreshFirst(rec.Recipient, shape, *moved)
	}
	if !found || rec.Loc.Less(cur) {
		abs.setFirst(key, rec.Loc)
		return w.ix.set(w.txn, key, firstValue(rec.Loc))
	}
	return nil
}

// refreshFirst recomputes a first-seen key from the bot keys (as txn sees
// them) when it may have named the transaction that was at l.
func (w *wtx) refreshFirst(bot normalform.Address, shape uint32, l Loc) error {
	txn := w.txn
	key := FirstKey(bot, shape).Bytes()
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	var cur Loc
	if err := item.Value(func(v []byte) (err error) { cur, err = parseFirstLoc(v); return }); err != nil {
		return fmt.Errorf("first-seen key %x: %w", key, err)
	}
	if cur != l {
		return nil
	}
	if err := w.flushPostings(); err != nil { // the bot keys as changed so far (postings.go)
		return err
	}
	first, err := leastOfBot(txn, w, w.resolve(), bot, shape)
	if err != nil {
		return err
	}
	if first == nil {
		return w.ix.del(txn, key)
	}
	return w.ix.set(txn, key, firstValue(first.Loc))
}

// leastOfBot is the bot's first transaction of a shape (id), from its
// bot keys (nil: none): the first whose record's recipient is the bot
// (another bot may share its tag).
func leastOfBot(txn *badger.Txn, src recSource, names Names, bot normalform.Address, shape uint32) (*Ref, error) {
	prefix := botShapePrefix(bot, shape)
	it := newPostIter(txn, prefix) // position by position (postings.go)
	defer it.Close()
	for it.Seek(prefix); it.Valid(); it.Next() {
		l, err := locOf(it.Key())
		if err != nil {
			return nil, err
		}
		rec, err := recordFrom(src, txn, l, names, depthAddrs)
		if err != nil {
			return nil, err
		}
		if rec.Recipient == bot {
			return &Ref{Hash: rec.Hash, Loc: rec.Loc}, nil
		}
	}
	return nil, it.Err()
}

// Get returns the record of a transaction, or ErrNotFound.
func (ix *Index) Get(tx normalform.Hash) (*Record, error) {
	var rec *Record
	err := ix.db.View(func(txn *badger.Txn) error {
		l, enc, err := recordOf(txn, tx)
		if err != nil {
			return err
		}
		if enc == nil {
			return fmt.Errorf("tx %s: %w", tx.Hex(), ErrNotFound)
		}
		if rec, err = decodeRecord(l, enc, ix.namesIn(txn), depthFull); err != nil {
			return err
		}
		return nfIn(txn, rec)
	})
	return rec, err
}

// GetAt returns the record of the transaction at a position, or
// ErrNotFound.
func (ix *Index) GetAt(l Loc) (*Record, error) {
	var rec *Record
	err := ix.db.View(func(txn *badger.Txn) (err error) {
		rec, err = ix.recordAt(txn, l, depthWhole)
		return err
	})
	return rec, err
}

func (ix *Index) recordAt(txn *badger.Txn, l Loc, d depth) (*Record, error) {
	return recordIn(txn, l, ix.namesIn(txn), d)
}

// setKey writes one of a record's keys: the record itself into its page
// (pages.go), any other key as it is.
func (w *wtx) setKey(k, v []byte) error {
	if ok, err := w.nfKey(k, v, false); ok { // an NF into its page (nfpages.go)
		return err
	}
	if ok, err := w.postKey(k, true); ok { // a posting's (postings.go)
		return err
	}
	if len(k) > 0 && k[0] == byte(KindTx) {
		l, err := layout.TxLoc(k)
		if err != nil {
			return err
		}
		return w.setRecord(l, v)
	}
	return w.ix.set(w.txn, k, v)
}

// delKey deletes one of a record's keys, as setKey writes them.
func (w *wtx) delKey(k []byte) error {
	if ok, err := w.nfKey(k, nil, true); ok { // an NF out of its page (nfpages.go)
		return err
	}
	if ok, err := w.postKey(k, false); ok {
		return err
	}
	if len(k) > 0 && k[0] == byte(KindTx) {
		l, err := layout.TxLoc(k)
		if err != nil {
			return err
		}
		return w.delRecord(l)
	}
	return w.ix.del(w.txn, k)
}
