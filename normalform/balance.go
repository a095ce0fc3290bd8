package normalform

import (
	"bytes"
	"slices"
)

// A chain's balance δ_C is the sum of its transfers' balances. Copying δ
// at every join made a route of n transfers cost n² (each hop adds a pool
// whose entries do not cancel), so a chain keeps its δ in one of two forms:
//
//   - small (at most flatMax entries): an immutable sorted Delta, summed
//     into a new slice at each join, as cheap as it gets for the few
//     transfers of a typical transaction;
//   - large: a balance, a map from address to that address's entries,
//     which has one owner. join moves the larger operand's balance into
//     the chain it builds and adds the smaller operand's entries to it
//     (smaller into larger), so assembling n transfers costs O(n log n)
//     entry updates.
//
// A chain whose balance was moved on (an operand of a later join) rebuilds
// its own from its operands when it is read, the same way. The engine
// reads the balances of the chains of the current tree, which own theirs;
// rebuilding serves the rare reader of an inner chain, and keeps every
// reading exact. Per entry, every form adds δ_Left and δ_Right of the same
// joins in the same association, so sums, cancellations and overflow are
// those of summing sorted Deltas join by join.

// flatMax is the largest δ kept as a sorted slice.
const flatMax = 32

// balance is a large δ: entries per address, each list sorted by token,
// no zero amounts.
type balance struct {
	owner  *Chain
	byAddr map[Address]Delta
	n      int // number of entries
}

func newBalance(d Delta) *balance {
	b := &balance{byAddr: make(map[Address]Delta, len(d)), n: len(d)}
	for i := 0; i < len(d); {
		j := i + 1
		for j < len(d) && d[j].Addr == d[i].Addr {
			j++
		}
		b.byAddr[d[i].Addr] = slices.Clone(d[i:j])
		i = j
	}
	return b
}

// add adds the entries of one address (sorted by token) to b.
//
// An address's list is b's own (BalanceOf hands it out clipped, so no
// reader's append reaches its spare room): a new list gets room for one
// more entry, and entries in tokens the list does not hold yet are
// inserted in place while there is room (a route's pool is paid in one
// token and pays in another: two entries, one allocation).
func (b *balance) add(addr Address, d Delta) error {
	cur := b.byAddr[addr]
	if len(cur) == 0 {
		if len(d) == 0 {
			return nil
		}
		sum := make(Delta, len(d), len(d)+1)
		copy(sum, d)
		b.n += len(sum)
		b.byAddr[addr] = sum
		return nil
	}
	if len(cur)+len(d) <= cap(cur) && disjointTokens(cur, d) {
		// Merge from the back into cur's room: nothing cancels, nothing
		// overflows, the result is cur.Sum(d).
		i, j, w := len(cur)-1, len(d)-1, len(cur)+len(d)-1
		out := cur[:w+1]
		for j >= 0 {
			if i >= 0 && compareToken(&cur[i].Token, &d[j].Token) > 0 {
				out[w] = cur[i]
				i--
			} else {
				out[w] = d[j]
				j--
			}
			w--
		}
		b.n += len(d)
		b.byAddr[addr] = out
		return nil
	}
	sum, err := cur.Sum(d)
	if err != nil {
		return err
	}
	b.n += len(sum) - len(cur)
	if len(sum) == 0 {
		delete(b.byAddr, addr)
	} else {
		b.byAddr[addr] = sum
	}
	return nil
}

// disjointTokens reports whether two lists of one address's entries,
// each sorted by token, share no token.
func disjointTokens(a, b Delta) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := compareToken(&a[i].Token, &b[j].Token); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			return false
		}
	}
	return true
}

// flat returns b's entries as one sorted Delta.
func (b *balance) flat() Delta {
	addrs := make([]Address, 0, len(b.byAddr))
	for a := range b.byAddr {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, func(x, y Address) int { return bytes.Compare(x[:], y[:]) })
	out := make(Delta, 0, b.n)
	for _, a := range addrs {
		out = append(out, b.byAddr[a]...)
	}
	return out
}

// balanceParts returns c's δ: the small form, or the large one (owned by c).
// A leaf chain's is its transfer's, made when read (see leafChain).
func (c *Chain) balanceParts() (Delta, *balance, error) {
	if c.Leaf != nil {
		return TransferDelta(c.Leaf), nil, nil
	}
	return c.ownParts()
}

// ownParts is balanceParts for a chain that is not a leaf.
func (c *Chain) ownParts() (Delta, *balance, error) {
	if c.big == nil {
		return c.delta, nil, nil
	}
	if c.big.owner != c {
		if err := c.setBalance(c.Left, c.Right); err != nil {
			return nil, nil, err
		}
		if c.big == nil {
			return c.delta, nil, nil
		}
	}
	return nil, c.big, nil
}

// setBalance sets c's δ to δ_a + δ_b.
func (c *Chain) setBalance(a, b *Chain) error {
	// A leaf operand's δ is written on the stack (see leafChain).
	var bufA, bufB [2]DeltaEntry
	var da, db Delta
	var ba, bb *balance
	var err error
	if a.Leaf != nil {
		da = transferDeltaIn(a.Leaf, &bufA)
	} else if da, ba, err = a.ownParts(); err != nil {
		return err
	}
	if b.Leaf != nil {
		db = transferDeltaIn(b.Leaf, &bufB)
	} else if db, bb, err = b.ownParts(); err != nil {
		return err
	}
	if ba == nil && bb == nil && len(da)+len(db) <= flatMax {
		d, err := da.Sum(db)
		if err != nil {
			return err
		}
		c.delta, c.big = d, nil
		return nil
	}
	// The larger side is the target. Each entry's sum is still
	// δ_a[k] + δ_b[k]: Signed addition is exact, so the order of the
	// operands changes neither a sum nor whether it overflows.
	size := func(d Delta, bl *balance) int {
		if bl != nil {
			return bl.n
		}
		return len(d)
	}
	if size(db, bb) > size(da, ba) {
		da, ba, db, bb = db, bb, da, ba
	}
	target, from, fromBig := ba, db, bb
	if target == nil {
		target = newBalance(da)
	}
	target.owner = nil // partly updated until the sum completes
	if fromBig != nil {
		for addr, d := range fromBig.byAddr {
			if err := target.add(addr, d); err != nil {
				return err
			}
		}
	} else {
		for i := 0; i < len(from); {
			j := i + 1
			for j < len(from) && from[j].Addr == from[i].Addr {
				j++
			}
			if err := target.add(from[i].Addr, from[i:j]); err != nil {
				return err
			}
			i = j
		}
	}
	target.owner = c
	c.delta, c.big = nil, target
	return nil
}

// Balance returns δ_C, sorted by address then token.
func (c *Chain) Balance() Delta {
	d, b, err := c.balanceParts()
	if err != nil || b == nil {
		return d
	}
	return b.flat()
}

// BalanceOf returns δ_C's entries at addr, sorted by token. The slice is
// the chain's own: read it, do not keep it across another join.
func (c *Chain) BalanceOf(addr Address) Delta {
	d, b, err := c.balanceParts()
	if err != nil {
		return nil
	}
	if b == nil {
		return d.OfAddr(addr)
	}
	return slices.Clip(b.byAddr[addr])
}

// BalanceAt returns δ_C[addr, tok].
func (c *Chain) BalanceAt(addr Address, tok Token) Signed {
	return c.BalanceOf(addr).At(addr, tok)
}
