package index

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// Shortened references (issue 21): a query may name a transaction, a bot
// or a structural hash by the digits flowq prints of it, 0x3db1…dcfa, or
// by a prefix, 0x3db1a7. Resolve finds the values the index holds that
// read so, by a scan of the keys that hold the value's leading digits:
//
//	transactions        txhash keys (0x11): the hash's first 12 digits, then the record's hash
//	bots                first keys (0x14): the recipient's 40 digits
//	exact hashes        hash keys (0x12 00): the hash's first 12 digits, then the record's hash
//	shape, tokens, family hashes  dictionary keys (0x04 level): the hash's 64 digits
//
// The scan seeks to the first key of the prefix, nibble by nibble (an odd
// number of digits reads only the keys whose next byte starts with the
// last one), and stops past its last key or at max values. Addresses a
// transaction only sends from or touches are kept by a hashed tag
// (layout/keys.go, "tags"): no prefix finds them.

// Resolve limits: a reference gives at least MinResolveDigits digits, and
// at least MinResolveLead before the "…" when digits follow it (the scan
// is bounded by the leading ones); DefaultResolveMax values are returned
// when max is not positive.
const (
	MinResolveDigits  = layout.MinShortDigits
	MinResolveLead    = layout.MinShortLead
	DefaultResolveMax = 100
)

// ResolveError reports a reference the index cannot resolve by prefix:
// too few digits, not hex, or a kind of value no key holds whole enough.
type ResolveError struct{ Msg string }

func (e *ResolveError) Error() string { return e.Msg }

// Resolve returns, in key order, the values of the index whose hex digits
// start with prefix and end with suffix (lowercase hex, without 0x;
// suffix may be empty), at most max of them (DefaultResolveMax when max
// is not positive), each written whole as 0x hex: transaction hashes (by
// KindTxHash), bots' addresses (KindFirst: the recipients of its
// transactions), or structural hashes at a level (KindHash).
func (ix *Index) Resolve(ctx context.Context, by Kind, level normalform.Level, prefix, suffix string, max int) ([]string, error) {
	if max <= 0 {
		max = DefaultResolveMax
	}
	width := 64
	if by == KindFirst {
		width = 40
	}
	if err := checkDigits(prefix, suffix, width); err != nil {
		return nil, err
	}
	r := &resolver{prefix: prefix, suffix: suffix, max: max, seen: map[string]bool{}}
	err := ix.db.View(func(txn *badger.Txn) error {
		names := ix.namesIn(txn)
		switch {
		case by == KindTxHash:
			return hexScan(ctx, txn, kindPrefix(KindTxHash), prefix, len(Tag{}), true, func(k, v []byte) ([]byte, bool, error) {
				locs, err := parseLocs(v)
				if err != nil {
					return nil, true, err
				}
				for _, l := range locs {
					rec, err := recordIn(txn, l, names, depthHeader)
					if err != nil {
						return nil, true, fmt.Errorf("txhash key %x: %w", k, err)
					}
					if r.add(rec.Hash[:]) {
						return nil, true, nil
					}
				}
				return nil, false, nil
			})
		case by == KindFirst:
			base := kindPrefix(KindFirst)
			return hexScan(ctx, txn, base, prefix, 20, false, func(k, _ []byte) ([]byte, bool, error) {
				at := len(base) + 20
				if len(k) < at {
					return nil, true, fmt.Errorf("%w: %x", ErrBadKey, k)
				}
				// the bot's other shapes: past them
				return prefixEnd(k[:at]), r.add(k[len(base):at]), nil
			})
		case by == KindHash && level == normalform.Exact:
			base := layout.HashPrefix(normalform.Exact, normalform.Hash{}, 0)[:2]
			return hexScan(ctx, txn, base, prefix, len(Tag{}), true, func(k, v []byte) ([]byte, bool, error) {
				stop := false
				err := positionsOf(k, v, func(l Loc) error { // a posting's, or the key's (postings.go)
					if stop {
						return nil
					}
					rec, err := recordIn(txn, l, names, depthHeader)
					if err != nil {
						return fmt.Errorf("hash key %x: %w", k, err)
					}
					stop = r.add(rec.Hashes.Exact[:])
					return nil
				})
				return nil, stop || err != nil, err
			})
		case by == KindHash:
			base := DictKey(level, normalform.Hash{}).Bytes()[:2]
			return hexScan(ctx, txn, base, prefix, 32, false, func(k, _ []byte) ([]byte, bool, error) {
				if len(k) < len(base)+32 {
					return nil, true, fmt.Errorf("%w: %x", ErrBadKey, k)
				}
				return nil, r.add(k[len(base) : len(base)+32]), nil
			})
		case by == KindAddr || by == KindBot:
			return &ResolveError{Msg: "the index keeps the addresses a transaction sends from or touches by a hashed tag, which no prefix finds: only bots' addresses (the recipients') resolve from a prefix"}
		}
		return &ResolveError{Msg: fmt.Sprintf("the index resolves prefixes of transaction hashes, bots' addresses and structural hashes, not of %s keys", by)}
	})
	if err != nil {
		return nil, err
	}
	return r.out, nil
}

// checkDigits refuses a reference Resolve cannot look up
// (layout.CheckShortRef).
func checkDigits(prefix, suffix string, width int) error {
	if msg := layout.CheckShortRef(prefix, suffix, width); msg != "" {
		return &ResolveError{Msg: msg}
	}
	return nil
}

// resolver collects the values that match, each once.
type resolver struct {
	prefix, suffix string
	max            int
	seen           map[string]bool
	out            []string
}

// add takes a value if it matches and is new; true when max are found.
func (r *resolver) add(v []byte) bool {
	h := hex.EncodeToString(v)
	if strings.HasPrefix(h, r.prefix) && strings.HasSuffix(h, r.suffix) && !r.seen[h] {
		r.seen[h] = true
		r.out = append(r.out, "0x"+h)
	}
	return len(r.out) >= r.max
}

// hexScan walks the keys base | value | ..., where the key holds the
// value's first width bytes, whose value starts with the hex digits of
// prefix that those bytes hold: it seeks to the first and stops past the
// last, reading an odd last digit as the high nibble of the next byte.
func hexScan(ctx context.Context, txn *badger.Txn, base []byte, prefix string, width int, values bool, fn func(k, v []byte) ([]byte, bool, error)) error {
	held := prefix[:min(len(prefix), 2*width)]
	whole, err := hex.DecodeString(held[:len(held)/2*2])
	if err != nil {
		return &ResolveError{Msg: fmt.Sprintf("0x%s: %v", prefix, err)}
	}
	p := append(append([]byte(nil), base...), whole...)
	if len(held)%2 == 0 {
		return scanTxn(ctx, txn, p, nil, values, fn)
	}
	nib, _ := hex.DecodeString(held[len(held)-1:] + "0")
	lo := append(append([]byte(nil), p...), nib[0])
	return scanTxn(ctx, txn, p, lo, values, func(k, v []byte) ([]byte, bool, error) {
		if len(k) <= len(p) || k[len(p)]&0xf0 != nib[0] {
			return nil, true, nil // past the last key of the digit
		}
		return fn(k, v)
	})
}
