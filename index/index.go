package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/ristretto/v2/z"

	"github.com/flowq/flowq/normalform"
)

// Index is an open index directory.
type Index struct {
	db   *badger.DB
	path string
	// hook, when set (tests), is called before every write of put; an
	// error aborts the write transaction.
	hook func(op string, key []byte) error
}

// ErrNotFound reports a transaction that is not in the index.
var ErrNotFound = errors.New("not in the index")

// Open opens the index at path, creating it when missing.
func Open(path string) (*Index, error) { return open(path, false) }

// OpenReadOnly opens an existing index for reading; other processes may
// read it at the same time, none may write it.
func OpenReadOnly(path string) (*Index, error) { return open(path, true) }

func open(path string, readOnly bool) (*Index, error) {
	if readOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no index at %s (run flowq ingest first): %w", path, err)
		}
	}
	opt := badger.DefaultOptions(path).WithLogger(nil).WithReadOnly(readOnly).
		WithMemTableSize(32 << 20).WithBlockCacheSize(64 << 20)
	db, err := badger.Open(opt)
	if err != nil && !readOnly && strings.Contains(err.Error(), z.NewFile.Error()) {
		// A process killed between creating a value-log file and sizing
		// it leaves the file empty. Badger's open then sizes and
		// bootstraps it but reports its "new file" signal as a failure;
		// the file is whole now, so a second open succeeds
		// (TestCrashSafety found it). Badger formats the signal into its
		// error without wrapping it, so only its text can be matched.
		db, err = badger.Open(opt)
	}
	if err != nil {
		return nil, fmt.Errorf("opening index %s: %w", path, err)
	}
	ix := &Index{db: db, path: path}
	if err := ix.checkSchema(readOnly); err != nil {
		db.Close()
		return nil, err
	}
	return ix, nil
}

// Path is the index directory.
func (ix *Index) Path() string { return ix.path }

// Close closes the index.
func (ix *Index) Close() error { return ix.db.Close() }

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
			return fmt.Errorf("index %s has schema %d (records v%d); this flowq uses schema %d (records v%d): ingest into a new directory",
				ix.path, binary.BigEndian.Uint32(have), binary.BigEndian.Uint32(have[4:]), SchemaVersion, RecordVersion)
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
	enc := rec.Encode()
	kvs := rec.keys(enc)
	var err error
	for range 10 {
		err = ix.db.Update(func(txn *badger.Txn) error {
			_, err := ix.put(txn, rec, enc, kvs)
			return err
		})
		if !errors.Is(err, badger.ErrConflict) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("tx %s: %w", rec.Hash.Hex(), err)
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

// put writes rec (encoded as enc, with keys kvs) in txn. It reports
// whether anything changed.
func (ix *Index) put(txn *badger.Txn, rec *Record, enc []byte, kvs []kv) (bool, error) {
	if rec.Loc.Known() {
		item, err := txn.Get(kvs[1].k)
		if err == nil {
			var other normalform.Hash
			if err := item.Value(func(v []byte) error { copy(other[:], v); return nil }); err != nil {
				return false, err
			}
			if other != rec.Hash {
				return false, &PositionError{Tx: rec.Hash, Other: other, Loc: rec.Loc}
			}
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return false, err
		}
	}
	var old *Record
	item, err := txn.Get(kvs[0].k)
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
	case err != nil:
		return false, err
	default:
		prev, err := item.ValueCopy(nil)
		if err != nil {
			return false, err
		}
		if sameContent(prev, enc) {
			return false, nil
		}
		if old, err = DecodeRecord(rec.Hash, prev); err != nil {
			return false, err
		}
		keep := make(map[string]bool, len(kvs))
		for _, x := range kvs {
			keep[string(x.k)] = true
		}
		for _, x := range old.keys(prev) {
			if !keep[string(x.k)] {
				if err := ix.del(txn, x.k); err != nil {
					return false, err
				}
			}
		}
	}
	for _, x := range kvs {
		if err := ix.set(txn, x.k, x.v); err != nil {
			return false, err
		}
	}
	if err := ix.firstAfter(txn, old, rec); err != nil {
		return false, err
	}
	return true, nil
}

// firstAfter maintains the first-seen keys after old (nil: none) was
// replaced by rec (nil: deleted).
func (ix *Index) firstAfter(txn *badger.Txn, old, rec *Record) error {
	// The bot's first-seen key: the least location under bot|shape. A new
	// transaction can only lower it; a replaced one may have been it.
	if old != nil && (rec == nil || old.Recipient != rec.Recipient || old.Hashes.Shape != rec.Hashes.Shape) {
		if err := ix.refreshFirst(txn, old.Recipient, old.Hashes.Shape, old.Hash); err != nil {
			return err
		}
	}
	if rec == nil {
		return nil
	}
	return ix.lowerFirst(txn, rec)
}

// Delete removes a transaction's record and all its keys (ErrNotFound
// when it is not there).
func (ix *Index) Delete(tx normalform.Hash) error {
	return ix.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(TxKey(tx).Bytes())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("tx %s: %w", tx.Hex(), ErrNotFound)
		} else if err != nil {
			return err
		}
		enc, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		old, err := DecodeRecord(tx, enc)
		if err != nil {
			return err
		}
		for _, x := range old.keys(enc) {
			if err := ix.del(txn, x.k); err != nil {
				return err
			}
		}
		return ix.firstAfter(txn, old, nil)
	})
}

// firstValue is the value of a first-seen key: u64 block, u32 index, and
// the transaction's hash.
func firstValue(l Loc, tx normalform.Hash) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 44), l.Block)
	b = binary.BigEndian.AppendUint32(b, l.Index)
	return append(b, tx[:]...)
}

func parseFirstValue(v []byte) (Ref, error) {
	if len(v) != 44 {
		return Ref{}, fmt.Errorf("bad first-seen value %x", v)
	}
	r := Ref{Loc: Loc{Block: binary.BigEndian.Uint64(v), Index: binary.BigEndian.Uint32(v[8:])}}
	copy(r.Hash[:], v[12:])
	if !r.Loc.Known() {
		r.Loc.Tx = r.Hash
	}
	return r, nil
}

func (ix *Index) lowerFirst(txn *badger.Txn, rec *Record) error {
	key := FirstKey(rec.Recipient, rec.Hashes.Shape).Bytes()
	item, err := txn.Get(key)
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		return ix.set(txn, key, firstValue(rec.Loc, rec.Hash))
	case err != nil:
		return err
	}
	var cur Ref
	if err := item.Value(func(v []byte) (err error) { cur, err = parseFirstValue(v); return }); err != nil {
		return err
	}
	if cur.Hash == rec.Hash && cur.Loc != rec.Loc {
		// This transaction was the first and has moved: recompute.
		return ix.refreshFirst(txn, rec.Recipient, rec.Hashes.Shape, rec.Hash)
	}
	if rec.Loc.Less(cur.Loc) {
		return ix.set(txn, key, firstValue(rec.Loc, rec.Hash))
	}
	return nil
}

// refreshFirst recomputes a first-seen key from the bot keys (as txn sees
// them) when it may have named tx.
func (ix *Index) refreshFirst(txn *badger.Txn, bot normalform.Address, shape normalform.Hash, tx normalform.Hash) error {
	key := FirstKey(bot, shape).Bytes()
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	var cur Ref
	if err := item.Value(func(v []byte) (err error) { cur, err = parseFirstValue(v); return }); err != nil {
		return err
	}
	if cur.Hash != tx {
		return nil
	}
	prefix := botShapePrefix(bot, shape)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	it.Seek(prefix)
	var first *Ref
	if it.ValidForPrefix(prefix) {
		var r Ref
		err := it.Item().Value(func(v []byte) (err error) { r, err = refOf(txn, it.Item().Key(), v); return err })
		if err == nil {
			first = &r
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	it.Close()
	if first == nil {
		return ix.del(txn, key)
	}
	return ix.set(txn, key, firstValue(first.Loc, first.Hash))
}

// Get returns the record of a transaction, or ErrNotFound.
func (ix *Index) Get(tx normalform.Hash) (*Record, error) {
	var rec *Record
	err := ix.db.View(func(txn *badger.Txn) (err error) {
		rec, err = getRecord(txn, tx)
		return err
	})
	return rec, err
}

func getRecord(txn *badger.Txn, tx normalform.Hash) (*Record, error) {
	item, err := txn.Get(TxKey(tx).Bytes())
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("tx %s: %w", tx.Hex(), ErrNotFound)
	} else if err != nil {
		return nil, err
	}
	var rec *Record
	err = item.Value(func(v []byte) (err error) { rec, err = DecodeRecord(tx, v); return })
	return rec, err
}
