package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// Counting by structural hash from the hash keys alone.
//
// Every record has one hash key per level, 0x12 | level | id | loc, with
// no value (layout/keys.go); at the shape, tokens and family levels id is
// the hash's dictionary id. The keys of one hash are consecutive and in
// position order, so "how many transactions of a block range have each
// family" is a walk of the keys 0x12|3 that reads no value and decodes no
// record: the count of a hash is the number of its keys in the range, its
// first transaction the one at its first key's position. The walk seeks
// past the positions outside the range within each hash (scanGroupsTxn).
// Only the first transaction of each hash is read (its hash, for the
// group's example).

// CountHashes calls fn once for every hash at level (Shape, Tokens or
// Family) that some transaction of blocks has, in dictionary-id order,
// with the number of those transactions and the first of them (the least
// position). It reads keys only, plus one record value per hash.
func (ix *Index) CountHashes(ctx context.Context, level normalform.Level, blocks BlockRange, fn func(h normalform.Hash, n int, first Ref) error) error {
	if level < normalform.Shape || level > normalform.Family {
		return fmt.Errorf("index: counting by %s hash keys: only shape, tokens and family keys carry a dictionary id", level)
	}
	return ix.db.View(func(txn *badger.Txn) error {
		names := ix.namesIn(txn)
		prefix := []byte{byte(KindHash), byte(level)}
		const at = 2 + 4 // kind, level, id
		var (
			cur   uint32
			n     int
			first []byte // the current id's first key (a copy)
		)
		flush := func() error {
			if n == 0 {
				return nil
			}
			h, ok := names(level, cur)
			if !ok {
				return fmt.Errorf("%w: hash key %x: %s id %d is not in the dictionary", ErrBadKey, first, level, cur)
			}
			l, rest, err := layout.ReadLoc(first[at:])
			if err != nil || len(rest) != 0 {
				return fmt.Errorf("%w: hash key %x: its position does not parse", ErrBadKey, first)
			}
			var tx normalform.Hash
			if err := recordValue(txn, l, func(v []byte) error {
				var ok bool
				if tx, ok = layout.HashOf(v); !ok {
					return fmt.Errorf("record at %s: %w", l, ErrBadRecord)
				}
				return nil
			}); err != nil {
				if errors.Is(err, badger.ErrKeyNotFound) {
					return fmt.Errorf("%s hash key at %s: its record: %w", level, l, err)
				}
				return err
			}
			return fn(h, n, Ref{Hash: tx, Loc: l})
		}
		err := scanGroupsTxn(ctx, txn, prefix, 4, blocks, func(k, _ []byte) error {
			// scanGroupsTxn checked the length (at least at+locWidth).
			id := binary.BigEndian.Uint32(k[2:at])
			if n > 0 && id == cur {
				n++
				return nil
			}
			if err := flush(); err != nil {
				return err
			}
			cur, n, first = id, 1, append(first[:0], k...)
			return nil
		})
		if err != nil {
			return err
		}
		return flush()
	})
}
