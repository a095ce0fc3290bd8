package layout

import (
	"errors"
	"math"
	"slices"

	"github.com/flowq/flowq/normalform"
)

// ErrNotFound reports a transaction (or position) that is not in the
// index.
var ErrNotFound = errors.New("not in the index")

// Ref locates a transaction found through a secondary key: its hash and
// position.
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

// Has reports whether block n is in the range.
func (b BlockRange) Has(n uint64) bool { return b.From <= n && n <= b.To }

// Lookup names a secondary-key access path: the transactions with a
// structural hash (By KindHash: Level, Hash), of a bot (KindBot: Addr; by
// shape hash then position), touching an address (KindAddr: Addr; with
// AsToken, or the token at that address, merged in position order),
// moving a token (KindToken: Token), with a verdict (KindVerdict: Verdict,
// and Tier when set; by tier then position), or with a balance component
// in a range (KindProfit: Side, Token, Lo, Hi, both inclusive, nil
// unbounded; by amount then position; Blocks is ignored). Blocks bounds
// the positions.
//
// Partial says the reader needs no more of each record than its header
// and, where the lookup's check reads more (CheckDepth), what the check
// read: the records found may be Partial ones. Rows says the reader
// needs no more than a row of find shows (DepthRow: no addresses, tokens
// or normal form, unless the check read them; never the NF). Without
// either they are whole, with their NF.
type Lookup struct {
	By      Kind
	Level   normalform.Level
	Hash    normalform.Hash
	Addr    normalform.Address
	AsToken bool
	Token   normalform.Token
	Verdict normalform.Verdict
	Tier    *normalform.Tier
	Side    Side
	Lo, Hi  *normalform.Signed
	Blocks  BlockRange
	Partial bool
	Rows    bool
}

// Holds reports whether rec, found through key, is one the lookup asks
// for (false: another hash, address or token with the same tag, keys.go).
// It reads the record's hashes (KindHash), recipient (KindBot), addresses
// and tokens (KindAddr, KindToken) or balances (KindProfit: the amount in
// the key's bucket and in the lookup's range, which a bucket's other
// amounts may not be).
func (lk *Lookup) Holds(rec *Record, key *Key) bool {
	switch lk.By {
	case KindHash:
		return rec.Hashes.Of(lk.Level) == lk.Hash
	case KindBot:
		return rec.Recipient == lk.Addr
	case KindAddr:
		if slices.Contains(rec.Addresses, lk.Addr) {
			return true
		}
		return lk.AsToken && slices.Contains(rec.Tokens, NormalToken(normalform.FungibleToken(lk.Addr)))
	case KindToken:
		return slices.Contains(rec.Tokens, NormalToken(lk.Token))
	case KindProfit:
		a, ok := lk.Component(rec)
		return ok && ProfitBucket(a) == key.Bucket && (lk.Lo == nil || a.Cmp(*lk.Lo) >= 0) && (lk.Hi == nil || a.Cmp(*lk.Hi) <= 0)
	}
	return true
}

// Component is the amount of a profit lookup's token in the record's
// balance on the lookup's side (false: it has none, or its net is not
// known). A balance holds a token once.
func (lk *Lookup) Component(rec *Record) (normalform.Signed, bool) {
	as := rec.Gross
	if lk.Side == Net {
		if !rec.CostsKnown {
			return normalform.Signed{}, false
		}
		as = rec.Net
	}
	for _, a := range as {
		if NormalToken(a.Token) == NormalToken(lk.Token) {
			return a.Amount, true
		}
	}
	return normalform.Signed{}, false
}

// Prefix is the key prefix a lookup reads when its keys are its value
// then the position, with gw bytes between the two that group them (the
// tier of a verdict without one): tokens and verdicts. ok is false for
// the lookups a reader walks otherwise (structural hashes through the
// dictionary, bots by shape, addresses through their addr and bot keys
// merged, profit ranges).
func (lk *Lookup) Prefix() (prefix []byte, gw int, ok bool) {
	switch lk.By {
	case KindToken:
		return TokenPrefix(lk.Token), 0, true
	case KindVerdict:
		if lk.Tier != nil {
			return VerdictTierPrefix(lk.Verdict, *lk.Tier), 0, true
		}
		return VerdictPrefix(lk.Verdict), 1, true
	}
	return nil, 0, false
}

// Depth is the depth a record found by the lookup is decoded to: the
// whole record with its NF, or, for a Partial lookup, CheckDepth, for a
// Rows one a row or CheckDepth.
func (lk *Lookup) Depth() Depth {
	if lk.Partial {
		return lk.CheckDepth()
	}
	if lk.Rows {
		return max(DepthRow, lk.CheckDepth())
	}
	return DepthWhole
}

// CheckDepth is the depth a reader must decode a record to for Holds:
// the whole record for addresses, tokens and balances, the addresses for
// a bot.
func (lk *Lookup) CheckDepth() Depth {
	switch lk.By {
	case KindAddr, KindToken, KindProfit:
		return DepthFull
	case KindBot:
		return DepthAddrs
	}
	return DepthHeader
}
