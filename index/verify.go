package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// Verify checks the index's invariants: every key parses; every record
// decodes and has all its secondary keys, with its hash as their value;
// every secondary key belongs to a record that has it; every first-seen
// key names the least position of its bot and shape. It reports the
// first violations it finds (at most ten).
func (ix *Index) Verify(ctx context.Context) error {
	var errs []error
	report := func(format string, a ...any) bool {
		errs = append(errs, fmt.Errorf(format, a...))
		return len(errs) >= 10
	}
	err := ix.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true})
		defer it.Close()
		var cached *Record
		var cachedKeys map[string][]byte
		recordKeys := func(tx [32]byte) (map[string][]byte, error) {
			if cached != nil && cached.Hash == tx {
				return cachedKeys, nil
			}
			item, err := txn.Get(TxKey(tx).Bytes())
			if err != nil {
				return nil, err
			}
			enc, err := item.ValueCopy(nil)
			if err != nil {
				return nil, err
			}
			rec, err := DecodeRecord(tx, enc)
			if err != nil {
				return nil, err
			}
			m := map[string][]byte{}
			for _, x := range rec.keys(enc) {
				m[string(x.k)] = x.v
			}
			cached, cachedKeys = rec, m
			return m, nil
		}
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			k := item.KeyCopy(nil)
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			key, err := ParseKey(k)
			if err != nil {
				if report("%v", err) {
					return nil
				}
				continue
			}
			switch key.Kind {
			case KindTx:
				m, err := recordKeys(key.Tx)
				if err != nil {
					if report("record %x: %v", key.Tx, err) {
						return nil
					}
					continue
				}
				for sk, sv := range m {
					item, err := txn.Get([]byte(sk))
					if errors.Is(err, badger.ErrKeyNotFound) {
						if report("tx %s: missing key %x", key.Tx.Hex(), sk) {
							return nil
						}
						continue
					} else if err != nil {
						return err
					}
					got, err := item.ValueCopy(nil)
					if err != nil {
						return err
					}
					if !bytes.Equal(got, sv) {
						if report("tx %s: key %x has value %x", key.Tx.Hex(), sk, got) {
							return nil
						}
					}
				}
				first := FirstKey(cached.Recipient, cached.Hashes.Shape).Bytes()
				if _, err := txn.Get(first); err != nil {
					if report("tx %s: first-seen key %x: %v", key.Tx.Hex(), first, err) {
						return nil
					}
				}
			case KindPos, KindHash, KindBot, KindVerdict, KindProfit, KindAddr, KindToken:
				ref, err := refOf(txn, k, v)
				if err != nil {
					if report("key %x: %v", k, err) {
						return nil
					}
					continue
				}
				tx := ref.Hash
				m, err := recordKeys(tx)
				if err != nil {
					if report("key %x: its record: %v", k, err) {
						return nil
					}
					continue
				}
				if _, ok := m[string(k)]; !ok {
					if report("key %x: not a key of its record %x (stale)", k, tx) {
						return nil
					}
				}
			case KindFirst:
				got, err := parseFirstValue(v)
				if err != nil {
					if report("key %x: %v", k, err) {
						return nil
					}
					continue
				}
				var least *Ref
				err = scanTxn(ctx, txn, botShapePrefix(key.Addr, key.Struct), nil, true, func(k, v []byte) ([]byte, bool, error) {
					r, err := refOf(txn, k, v)
					least = &r
					return nil, true, err
				})
				if err != nil {
					return err
				}
				if least == nil || *least != got {
					if report("first-seen key %x names %+v, the least is %+v", k, got, least) {
						return nil
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}
