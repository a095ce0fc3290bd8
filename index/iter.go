package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/normalform"
)

// Ref locates a transaction found through a secondary key: its hash and
// position. Get(r.Hash) reads its record.
type Ref struct {
	Hash normalform.Hash
	Loc  Loc
}

// BlockRange is an inclusive range of blocks. Transactions whose block
// is unknown have block UnknownBlock (the largest): only a range that
// ends at UnknownBlock (AllBlocks) includes them.
type BlockRange struct{ From, To uint64 }

// AllBlocks is every block, unknown ones included.
var AllBlocks = BlockRange{0, math.MaxUint64}

// Blocks is the range from..to, inclusive.
func Blocks(from, to uint64) BlockRange { return BlockRange{from, to} }

func (b BlockRange) has(n uint64) bool { return b.From <= n && n <= b.To }

// checkEvery is how many keys an iterator reads between two looks at its
// context.
const checkEvery = 64

// scan calls fn for every key with the prefix, in key order, from the
// first key >= lo (lo nil: the prefix). fn returns the key to seek to
// next (nil: the next key), or stop. k and v are valid only during fn.
func (ix *Index) scan(ctx context.Context, prefix, lo []byte, values bool, fn func(k, v []byte) (seek []byte, stop bool, err error)) error {
	return ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(ctx, txn, prefix, lo, values, fn)
	})
}

// scanWith is scan with the read transaction given to fn (to resolve
// references).
func (ix *Index) scanWith(ctx context.Context, prefix, lo []byte, values bool, fn func(txn *badger.Txn, k, v []byte) (seek []byte, stop bool, err error)) error {
	return ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(ctx, txn, prefix, lo, values, func(k, v []byte) ([]byte, bool, error) { return fn(txn, k, v) })
	})
}

func scanTxn(ctx context.Context, txn *badger.Txn, prefix, lo []byte, values bool, fn func(k, v []byte) ([]byte, bool, error)) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: values, PrefetchSize: 64})
	defer it.Close()
	if lo == nil {
		lo = prefix
	}
	n := 0
	for it.Seek(lo); it.ValidForPrefix(prefix); {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		item := it.Item()
		var seek []byte
		var stop bool
		var err error
		if values {
			err = item.Value(func(v []byte) (err error) {
				seek, stop, err = fn(item.Key(), v)
				return err
			})
		} else {
			seek, stop, err = fn(item.Key(), nil)
		}
		if err != nil || stop {
			return err
		}
		if seek != nil {
			it.Seek(seek)
		} else {
			it.Next()
		}
	}
	return ctx.Err()
}

// scanGroups walks keys prefix | group | loc, where group has gw bytes,
// keeping the locations in blocks: within each group it seeks to the
// range's first block and skips past its last.
func (ix *Index) scanGroups(ctx context.Context, prefix []byte, gw int, blocks BlockRange, fn func(txn *badger.Txn, k, v []byte) error) error {
	if blocks.From > blocks.To {
		return nil
	}
	at := len(prefix) + gw
	var lo []byte
	if gw == 0 {
		lo, _ = blockBounds(prefix, blocks.From, blocks.To)
	}
	return ix.scanWith(ctx, prefix, lo, true, func(txn *badger.Txn, k, v []byte) ([]byte, bool, error) {
		if len(k) < at+locWidth {
			return nil, true, fmt.Errorf("%w: %x", ErrBadKey, k)
		}
		b := locBlock(k[at:])
		switch {
		case b < blocks.From:
			s, _ := blockBounds(k[:at], blocks.From, blocks.To)
			return s, false, nil
		case b > blocks.To:
			next := prefixEnd(k[:at])
			if gw == 0 || next == nil || !bytes.HasPrefix(next, prefix) {
				return nil, true, nil
			}
			return next, false, nil
		}
		return nil, false, fn(txn, k, v)
	})
}

// refOf reads a secondary key's location and the transaction's hash: the
// key's own when the position is unknown (it is part of the key), else
// the by-position key's value (keys.go: secondary keys carry no value; a
// position key carries the hash).
func refOf(txn *badger.Txn, k, v []byte) (Ref, error) {
	key, err := ParseKey(k)
	if err != nil {
		return Ref{}, err
	}
	r := Ref{Loc: key.Loc}
	switch {
	case len(v) == 32:
		copy(r.Hash[:], v)
	case len(v) != 0:
		return Ref{}, fmt.Errorf("%s key %x: value is not a transaction hash", key.Kind, k)
	case !key.Loc.Known():
		r.Hash = key.Loc.Tx
	case key.Kind == KindPos:
		return Ref{}, fmt.Errorf("pos key %x: no transaction hash", k)
	default:
		item, err := txn.Get(PosKey(key.Loc).Bytes())
		if err != nil {
			return Ref{}, fmt.Errorf("%s key %x: its position: %w", key.Kind, k, err)
		}
		if err := item.Value(func(v []byte) error {
			if len(v) != 32 {
				return fmt.Errorf("pos key %x: value is not a transaction hash", item.Key())
			}
			copy(r.Hash[:], v)
			return nil
		}); err != nil {
			return Ref{}, err
		}
	}
	return r, nil
}

func refs(fn func(Ref) error) func(txn *badger.Txn, k, v []byte) error {
	return func(txn *badger.Txn, k, v []byte) error {
		r, err := refOf(txn, k, v)
		if err != nil {
			return err
		}
		return fn(r)
	}
}

// ByHash streams the transactions whose hash at level is h, in position
// order.
func (ix *Index) ByHash(ctx context.Context, level normalform.Level, h normalform.Hash, blocks BlockRange, fn func(Ref) error) error {
	return ix.scanGroups(ctx, hashPrefix(level, h), 0, blocks, refs(fn))
}

// ByBot streams a recipient's transactions, by shape hash and then
// position.
func (ix *Index) ByBot(ctx context.Context, bot normalform.Address, blocks BlockRange, fn func(shape normalform.Hash, r Ref) error) error {
	return ix.scanGroups(ctx, botPrefix(bot), 32, blocks, func(txn *badger.Txn, k, v []byte) error {
		key, err := ParseKey(k)
		if err != nil {
			return err
		}
		r, err := refOf(txn, k, v)
		if err != nil {
			return err
		}
		return fn(key.Struct, r)
	})
}

// ByBotShape streams a recipient's transactions of one shape, in position
// order.
func (ix *Index) ByBotShape(ctx context.Context, bot normalform.Address, shape normalform.Hash, blocks BlockRange, fn func(Ref) error) error {
	return ix.scanGroups(ctx, botShapePrefix(bot, shape), 0, blocks, refs(fn))
}

// BotShapes streams the shapes a recipient has used, each with its first
// transaction (the least position), in shape-hash order. "Shapes bot B
// had not used before block N" are those whose first block is N or more.
func (ix *Index) BotShapes(ctx context.Context, bot normalform.Address, fn func(shape normalform.Hash, first Ref) error) error {
	return ix.scan(ctx, firstPrefix(bot), nil, true, func(k, v []byte) ([]byte, bool, error) {
		key, err := ParseKey(k)
		if err != nil {
			return nil, true, err
		}
		r, err := parseFirstValue(v)
		if err != nil {
			return nil, true, err
		}
		return nil, false, fn(key.Struct, r)
	})
}

// FirstSeen returns a recipient's first transaction of a shape.
func (ix *Index) FirstSeen(bot normalform.Address, shape normalform.Hash) (Ref, bool, error) {
	var r Ref
	found := false
	err := ix.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(FirstKey(bot, shape).Bytes())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		found = true
		return item.Value(func(v []byte) (err error) { r, err = parseFirstValue(v); return })
	})
	return r, found, err
}

// ByBlocks streams the transactions of a block range in position order.
func (ix *Index) ByBlocks(ctx context.Context, blocks BlockRange, fn func(Ref) error) error {
	return ix.scanGroups(ctx, kindPrefix(KindPos), 0, blocks, refs(fn))
}

// ByVerdict streams the transactions with a verdict, by tier and then
// position.
func (ix *Index) ByVerdict(ctx context.Context, v normalform.Verdict, blocks BlockRange, fn func(t normalform.Tier, r Ref) error) error {
	return ix.scanGroups(ctx, []byte{byte(KindVerdict), byte(v)}, 1, blocks, func(txn *badger.Txn, k, val []byte) error {
		r, err := refOf(txn, k, val)
		if err != nil {
			return err
		}
		return fn(normalform.Tier(k[2]), r)
	})
}

// ByTier streams the transactions with a verdict and tier, in position
// order.
func (ix *Index) ByTier(ctx context.Context, v normalform.Verdict, t normalform.Tier, blocks BlockRange, fn func(Ref) error) error {
	return ix.scanGroups(ctx, verdictPrefix(v, t), 0, blocks, refs(fn))
}

// ByProfit streams the transactions whose balance (side) has a component
// in tok between lo and hi inclusive (nil: unbounded), in amount order,
// then position. Transactions with no component in tok are not there (an
// absent component is zero, and zero components are not stored).
func (ix *Index) ByProfit(ctx context.Context, side Side, tok normalform.Token, lo, hi *normalform.Signed, fn func(amount normalform.Signed, r Ref) error) error {
	prefix := profitPrefix(side, tok)
	var start, end []byte
	if lo != nil {
		start = append(append([]byte(nil), prefix...), AmountBytes(*lo)...)
	}
	if hi != nil {
		end = prefixEnd(append(append([]byte(nil), prefix...), AmountBytes(*hi)...))
	}
	return ix.scanWith(ctx, prefix, start, true, func(txn *badger.Txn, k, v []byte) ([]byte, bool, error) {
		if end != nil && bytes.Compare(k, end) >= 0 {
			return nil, true, nil
		}
		key, err := ParseKey(k)
		if err != nil {
			return nil, true, err
		}
		r, err := refOf(txn, k, v)
		if err != nil {
			return nil, true, err
		}
		return nil, false, fn(key.Amount, r)
	})
}

// ByAddress streams the transactions that touch an address (as from, to,
// or an endpoint of a transfer), in position order.
func (ix *Index) ByAddress(ctx context.Context, a normalform.Address, blocks BlockRange, fn func(Ref) error) error {
	return ix.scanGroups(ctx, addrPrefix(a), 0, blocks, refs(fn))
}

// ByToken streams the transactions that move a token, in position order.
func (ix *Index) ByToken(ctx context.Context, tok normalform.Token, blocks BlockRange, fn func(Ref) error) error {
	return ix.scanGroups(ctx, tokenPrefix(tok), 0, blocks, refs(fn))
}

// Records streams the records of a block range in position order.
func (ix *Index) Records(ctx context.Context, blocks BlockRange, fn func(*Record) error) error {
	return ix.db.View(func(txn *badger.Txn) error {
		prefix := kindPrefix(KindPos)
		lo, _ := blockBounds(prefix, blocks.From, blocks.To)
		return scanTxn(ctx, txn, prefix, lo, true, func(k, v []byte) ([]byte, bool, error) {
			r, err := refOf(txn, k, v)
			if err != nil {
				return nil, true, err
			}
			if !blocks.has(r.Loc.Block) {
				return nil, true, nil
			}
			rec, err := getRecord(txn, r.Hash)
			if err != nil {
				return nil, true, err
			}
			return nil, false, fn(rec)
		})
	})
}

// Scan streams every record, in transaction-hash order.
func (ix *Index) Scan(ctx context.Context, fn func(*Record) error) error {
	return ix.scan(ctx, kindPrefix(KindTx), nil, true, func(k, v []byte) ([]byte, bool, error) {
		key, err := ParseKey(k)
		if err != nil {
			return nil, true, err
		}
		rec, err := DecodeRecord(key.Tx, v)
		if err != nil {
			return nil, true, err
		}
		return nil, false, fn(rec)
	})
}

// KindStats count the keys of one kind and their bytes.
type KindStats struct {
	Keys       int
	KeyBytes   int64
	ValueBytes int64
}

// Stats counts the keys of every kind (a full scan of the keys).
func (ix *Index) Stats(ctx context.Context) (map[Kind]KindStats, error) {
	out := map[Kind]KindStats{}
	err := ix.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			k := Kind(item.Key()[0])
			s := out[k]
			s.Keys++
			s.KeyBytes += int64(len(item.Key()))
			s.ValueBytes += item.ValueSize()
			out[k] = s
		}
		return nil
	})
	return out, err
}

// Count is the number of transactions in the index.
func (ix *Index) Count(ctx context.Context) (int, error) {
	n := 0
	err := ix.scan(ctx, kindPrefix(KindTx), nil, false, func(k, v []byte) ([]byte, bool, error) {
		n++
		return nil, false, nil
	})
	return n, err
}
