package normalform

import (
	"bytes"
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/holiman/uint256"
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
//
// The lists live in slots carved from chunks without pointers, and the
// index from address to slot is a table of numbers: neither is scanned by
// the garbage collector, and neither pays write barriers when it grows (a
// map of slice headers was both, and one allocation per address). A
// slot holds up to two entries in place (a route's pool is paid in one
// token and pays in another); a longer list is kept apart, in ext.
//
// An entry held in place is its amount and its token's number (toks):
// the address is the slot's, once, and a token is kept once per balance,
// so a slot is 112 bytes where two DeltaEntry values and the counts were
// 248 (a route of 20,000 hops allocated 5 MB of slots; issue 22, session
// 8). Readers get the entries as a Delta written into a buffer of theirs
// (entries), or copied (of).
//
// The index is an open-addressing table of slot references (linear
// probing, at most half full), the address read back from the slot it
// names: 8 to 16 bytes an address where a map[Address]int32 took about
// 80 with its growth, and no second hash of the address to insert what a
// lookup did not find.
type balance struct {
	owner  *Chain
	tab    []int32     // slot reference + 1 (0: free), by the address's hash; len a power of two
	nAddr  int         // addresses indexed
	chunks [][]balSlot // the slots, in the order their addresses came
	last   int         // slots used in the last chunk
	ext    []Delta     // the lists longer than a slot holds
	n      int         // number of entries

	// The tokens of the entries held in place, by number, and their
	// index (number + 1 by the token's hash, linear probing, at most half
	// full), with the last token numbered or found (a route's hop adds
	// two entries in one token).
	toks    []Token
	tokTab  []int32
	lastTok Token
	lastNum int32
	prevTok Token // the one before lastTok
	prevNum int32
}

// balSlot is one address's entries: in place (len ≤ 2, ext 0) or in
// b.ext[ext-1]. An empty slot (len 0, ext 0) is an address whose entries
// cancelled.
type balSlot struct {
	addr Address
	len  uint8
	ext  int32
	e    [2]balEntry
}

// balEntry is an entry held in a slot: its amount and its token's number
// in the balance (balance.toks).
type balEntry struct {
	abs uint256.Int
	tok int32
	neg bool
}

// balSeed keys the balances' index tables (per process: no input can
// choose addresses or tokens that collide).
var balSeed = maphash.MakeSeed()

// A position of the index holds a slot reference + 1 in its low 24 bits
// and 7 bits of the address's hash above them (its tag): a probe reads
// the slot (another cache line, at 20,000 addresses rarely in the cache)
// only when the tags agree, and an address not indexed yet is usually
// found absent from the table alone.
const (
	balRefBits = 24
	balRefMask = 1<<balRefBits - 1
)

// find returns the slot reference of addr, or -1 and the table position
// where it would go, with addr's tag (see balRefBits).
func (b *balance) find(addr *Address) (ref int32, at int, tag int32) {
	h := maphash.Bytes(balSeed, addr[:])
	tag = int32(h>>57) << balRefBits
	mask := len(b.tab) - 1
	i := int(h) & mask
	for {
		r := b.tab[i]
		if r == 0 {
			return -1, i, tag
		}
		if r&^balRefMask == tag && b.slot(r&balRefMask-1).addr == *addr {
			return r&balRefMask - 1, i, tag
		}
		i = (i + 1) & mask
	}
}

// grow doubles the index table (at least to c positions) and indexes every
// slot again.
func (b *balance) grow(c int) {
	size := max(2*len(b.tab), 64)
	for size < c {
		size *= 2
	}
	b.tab = make([]int32, size)
	for ci, ch := range b.chunks {
		used := len(ch)
		if ci == len(b.chunks)-1 {
			used = b.last
		}
		for o := range used {
			_, at, tag := b.find(&ch[o].addr)
			b.tab[at] = tag | (int32(ci)<<8 | int32(o)) + 1
		}
	}
}

// balChunkMax is the most slots a chunk holds (at most 256: a slot
// reference keeps its offset in 8 bits); chunks start at 16 slots and
// double, so that a balance just over flatMax stays small. 256 slots of
// 112 bytes fill a 28 KB size class.
const balChunkMax = 256

func newBalance(d Delta) *balance {
	b := &balance{}
	b.grow(2 * len(d))
	for i := 0; i < len(d); {
		j := i + 1
		for j < len(d) && d[j].Addr == d[i].Addr {
			j++
		}
		_, at, tag := b.find(&d[i].Addr)
		b.set(b.newSlot(d[i].Addr, at, tag), d[i:j])
		b.n += j - i
		i = j
	}
	return b
}

// slot returns the slot that ref names.
func (b *balance) slot(ref int32) *balSlot {
	return &b.chunks[ref>>8][ref&0xff]
}

// newSlot indexes a new, empty slot for addr (not indexed yet: find
// returned at and tag) and returns it.
func (b *balance) newSlot(addr Address, at int, tag int32) *balSlot {
	if 2*(b.nAddr+1) > len(b.tab) {
		b.grow(0)
		_, at, tag = b.find(&addr)
	}
	if len(b.chunks) >= 1<<(balRefBits-8) {
		panic("normalform: a balance of more than 16 million addresses")
	}
	if len(b.chunks) == 0 || b.last == len(b.chunks[len(b.chunks)-1]) {
		size := 16
		if len(b.chunks) > 0 {
			size = min(2*len(b.chunks[len(b.chunks)-1]), balChunkMax)
		}
		b.chunks = append(b.chunks, make([]balSlot, size))
		b.last = 0
	}
	ref := int32(len(b.chunks)-1)<<8 | int32(b.last)
	b.last++
	b.tab[at] = tag | (ref + 1)
	b.nAddr++
	s := b.slot(ref)
	s.addr = addr
	return s
}

// tokNum returns t's number in b, numbering it if it is new.
func (b *balance) tokNum(t *Token) int32 {
	if len(b.toks) > 0 {
		if b.lastTok == *t {
			return b.lastNum
		}
		if len(b.toks) > 1 && b.prevTok == *t {
			b.prevTok, b.prevNum, b.lastTok, b.lastNum = b.lastTok, b.lastNum, b.prevTok, b.prevNum
			return b.lastNum
		}
	}
	if 2*(len(b.toks)+1) > len(b.tokTab) {
		b.tokTab = make([]int32, max(2*len(b.tokTab), 16))
		mask := len(b.tokTab) - 1
		for x := range b.toks {
			i := int(hashToken(&b.toks[x])) & mask
			for b.tokTab[i] != 0 {
				i = (i + 1) & mask
			}
			b.tokTab[i] = int32(x) + 1
		}
	}
	mask := len(b.tokTab) - 1
	i := int(hashToken(t)) & mask
	for {
		r := b.tokTab[i]
		if r == 0 {
			b.toks = append(b.toks, *t)
			r = int32(len(b.toks))
			b.tokTab[i] = r
		}
		if r > 0 && b.toks[r-1] == *t {
			b.prevTok, b.prevNum = b.lastTok, b.lastNum
			b.lastTok, b.lastNum = *t, r-1
			return r - 1
		}
		i = (i + 1) & mask
	}
}

// hashToken hashes a token's identity (contract, kind, id) with balSeed:
// a token without an id by its contract alone, its kind mixed in after
// (the kinds are few, and no input chooses them freely).
func hashToken(t *Token) uint64 {
	if t.ID.IsZero() {
		return maphash.Bytes(balSeed, t.Addr[:]) ^ uint64(t.Kind)*0x9e3779b97f4a7c15
	}
	var key [20 + 1 + 32]byte
	copy(key[:20], t.Addr[:])
	key[20] = byte(t.Kind)
	for w, x := range t.ID {
		for k := range 8 {
			key[21+8*w+k] = byte(x >> (8 * k))
		}
	}
	return maphash.Bytes(balSeed, key[:])
}

// entries returns s's entries: the list kept apart, or those held in
// place written into buf (valid until buf is written again).
func (b *balance) entries(s *balSlot, buf *[2]DeltaEntry) Delta {
	if s.ext > 0 {
		return b.ext[s.ext-1]
	}
	for i := range int(s.len) {
		e := &s.e[i]
		buf[i] = DeltaEntry{Addr: s.addr, Token: b.toks[e.tok], Amount: Signed{Neg: e.neg, Abs: e.abs}}
	}
	return buf[:s.len:s.len]
}

// set makes d (sorted by token, no zero amounts) s's entries: held in
// place when they fit, else d itself is kept (own, when longer than a
// slot: setOwned).
func (b *balance) set(s *balSlot, d Delta) {
	if len(d) > len(s.e) {
		b.setOwned(s, slices.Clone(d))
		return
	}
	b.place(s, d)
}

// place holds d (at most two entries) in s. A list that shrank back
// into the slot leaves its old ext entry behind (nothing reads it).
func (b *balance) place(s *balSlot, d Delta) {
	for i := range d {
		s.e[i] = balEntry{abs: d[i].Amount.Abs, tok: b.tokNum(&d[i].Token), neg: d[i].Amount.Neg}
	}
	s.len, s.ext = uint8(len(d)), 0
}

// setOwned makes d, b's own from now on, s's entries.
func (b *balance) setOwned(s *balSlot, d Delta) {
	if len(d) <= len(s.e) {
		b.place(s, d)
		return
	}
	if s.ext > 0 {
		b.ext[s.ext-1] = d
	} else {
		b.ext = append(b.ext, d)
		s.ext = int32(len(b.ext))
	}
	s.len = 0
}

// add adds the entries of one address (sorted by token) to b.
//
// An address's list kept apart is b's own (BalanceOf hands it out
// clipped, so no reader's append reaches it).
func (b *balance) add(addr Address, d Delta) error {
	if len(d) == 0 {
		return nil
	}
	var s *balSlot
	if ref, at, tag := b.find(&addr); ref >= 0 {
		s = b.slot(ref)
	} else {
		s = b.newSlot(addr, at, tag)
	}
	var held [2]DeltaEntry
	cur := b.entries(s, &held)
	if len(cur) == 0 {
		b.set(s, d)
		b.n += len(d)
		return nil
	}
	if s.ext == 0 && len(cur)+len(d) <= sumStack {
		// Summed on the stack; set copies the result (into the slot when
		// it fits).
		var buf [sumStack]DeltaEntry
		sum, err := sumInto(buf[:0], cur, d)
		if err != nil {
			return err
		}
		b.n += len(sum) - len(cur)
		b.set(s, sum)
		return nil
	}
	sum, err := cur.Sum(d)
	if err != nil {
		return err
	}
	b.n += len(sum) - len(cur)
	b.setOwned(s, sum)
	return nil
}

// flat returns b's entries as one sorted Delta.
func (b *balance) flat() Delta {
	slots := make([]*balSlot, 0, b.nAddr)
	for _, ch := range b.chunks {
		for i := range ch {
			if s := &ch[i]; s.len > 0 || s.ext > 0 {
				slots = append(slots, s)
			}
		}
	}
	slices.SortFunc(slots, func(x, y *balSlot) int { return bytes.Compare(x.addr[:], y.addr[:]) })
	out := make(Delta, 0, b.n)
	var buf [2]DeltaEntry
	for _, s := range slots {
		out = append(out, b.entries(s, &buf)...)
	}
	return out
}

// each calls f with every address's entries (never empty), in the order
// the addresses came. The Delta f gets is valid during the call only.
func (b *balance) each(f func(Delta)) {
	var buf [2]DeltaEntry
	for _, ch := range b.chunks {
		for i := range ch {
			if d := b.entries(&ch[i], &buf); len(d) > 0 {
				f(d)
			}
		}
	}
}

// ofIn returns addr's entries (nil when it has none), those held in
// place written into buf.
func (b *balance) ofIn(addr Address, buf *[2]DeltaEntry) Delta {
	ref, _, _ := b.find(&addr)
	if ref < 0 {
		return nil
	}
	d := b.entries(b.slot(ref), buf)
	if len(d) == 0 {
		return nil
	}
	return slices.Clip(d)
}

// of returns addr's entries (nil when it has none), in a slice of their
// own or clipped.
func (b *balance) of(addr Address) Delta {
	ref, _, _ := b.find(&addr)
	if ref < 0 {
		return nil
	}
	s := b.slot(ref)
	if s.ext > 0 {
		return slices.Clip(b.ext[s.ext-1])
	}
	if s.len == 0 {
		return nil
	}
	var buf [2]DeltaEntry
	return slices.Clone(b.entries(s, &buf))
}

// balanceParts returns c's δ: the small form, or the large one (owned by c).
// A leaf chain's is its transfer's, made when read (see leafChain).
func (c *Chain) balanceParts() (Delta, *balance, error) {
	if c.Leaf != nil {
		return TransferDelta(c.Leaf), nil, nil
	}
	if c.balLen == pairLen {
		var buf [4]DeltaEntry
		d, err := c.pairDeltaIn(&buf)
		if err != nil {
			return nil, nil, err
		}
		if len(d) == 0 {
			return Delta{}, nil, nil
		}
		return slices.Clone(d), nil, nil
	}
	return c.ownParts()
}

// pairLen is Chain.balLen of a chain of two leaves: its δ is not kept but
// summed from its two transfers when it is read, as a leaf chain's is
// from its transfer (on the reader's stack: pairDeltaIn, balanceOfIn). A
// join of two leaves checks the sum for overflow and keeps nothing: a
// star's arms kept 480 bytes of δ each, 4.6 MB at 20,000 transfers
// (issue 22, session 8).
const pairLen = -2

// pairDeltaIn writes the δ of a chain of two leaves into buf.
func (c *Chain) pairDeltaIn(buf *[4]DeltaEntry) (Delta, error) {
	var ba, bb [2]DeltaEntry
	return sumInto(buf[:0], transferDeltaIn(c.Left.Leaf, &ba), transferDeltaIn(c.Right.Leaf, &bb))
}

// ownParts is balanceParts for a chain that is not a leaf.
func (c *Chain) ownParts() (Delta, *balance, error) {
	big := c.bigBalance()
	if big == nil {
		return c.smallDelta(), nil, nil
	}
	if big.owner != c {
		if err := c.setBalance(c.Left, c.Right); err != nil {
			return nil, nil, err
		}
		if big = c.bigBalance(); big == nil {
			return c.smallDelta(), nil, nil
		}
	}
	return nil, big, nil
}

// A chain keeps its δ in one pointer and a length (Chain.bal, balLen):
// a small δ's first entry and its length, or a large one's *balance and
// -1. Two words where a Delta and a *balance were four: a chain is 104
// bytes, not 120 (issue 22, session 8).

// smallDelta returns c's small δ (nil when it has a large one, or none;
// an empty δ that was set non-nil stays so).
func (c *Chain) smallDelta() Delta {
	if c.balLen < 0 || c.bal == nil {
		return nil
	}
	return unsafe.Slice((*DeltaEntry)(c.bal), c.balLen)
}

// bigBalance returns c's large δ, or nil.
func (c *Chain) bigBalance() *balance {
	if c.balLen == -1 {
		return (*balance)(c.bal)
	}
	return nil
}

// setSmall makes d (at most flatMax entries) c's δ.
func (c *Chain) setSmall(d Delta) {
	c.bal, c.balLen = unsafe.Pointer(unsafe.SliceData(d)), int32(len(d))
}

// setBig makes b c's δ.
func (c *Chain) setBig(b *balance) { c.bal, c.balLen = unsafe.Pointer(b), -1 }

// deltaSlab carves the kernel's small δs from blocks (entries hold no
// pointers, so a block is one object the collector does not scan): one
// allocation per block instead of one per built chain.
type deltaSlab struct {
	rest Delta
	size int // entries of the next block: 16 at first, doubling up to deltaBlock
	sums int // sums made so far, up to deltaAlone
}

// deltaBlock is the most entries of a block: 68 entries of 120 bytes are
// 8,160 bytes of an 8 KB size class (64 left 512 of it unused).
const deltaBlock = 68

// deltaAlone is how many sums a kernel allocates one by one before it
// carves from blocks.
const deltaAlone = 8

// sum returns a + b, as Delta.Sum does, carved from the slab when it is
// summed on the stack: up to sumStack entries in a small buffer, up to
// flatMax (a small δ's most) in a larger one (sumLarge), each carved at
// the sum's length, so that entries that cancel take no room.
func (sl *deltaSlab) sum(a, b Delta) (Delta, error) {
	if sl == nil || len(a)+len(b) > flatMax {
		return a.Sum(b)
	}
	if len(a)+len(b) > sumStack {
		return sl.sumLarge(a, b)
	}
	var buf [sumStack]DeltaEntry
	out, err := sumInto(buf[:0], a, b)
	if err != nil {
		return nil, err
	}
	return sl.keep(out), nil
}

// sumLarge is sum's case of more than sumStack entries, apart so that
// its buffer is zeroed only when used.
func (sl *deltaSlab) sumLarge(a, b Delta) (Delta, error) {
	var buf [flatMax]DeltaEntry
	out, err := sumInto(buf[:0], a, b)
	if err != nil {
		return nil, err
	}
	return sl.keep(out), nil
}

// keep returns a copy of out carved from the slab (an empty non-nil δ
// for an empty out).
func (sl *deltaSlab) keep(out Delta) Delta {
	if len(out) == 0 {
		return Delta{}
	}
	if sl.sums < deltaAlone {
		// The first few sums (all of a small tree's) are allocated on
		// their own, at their length: a block would be mostly unused.
		sl.sums++
		r := make(Delta, len(out))
		copy(r, out)
		return r
	}
	if len(sl.rest) < len(out) {
		size := max(sl.size, 2*sumStack)
		sl.rest = make(Delta, max(size, len(out)))
		sl.size = min(2*size, deltaBlock) // the next block larger
	}
	r := sl.rest[:len(out):len(out)]
	sl.rest = sl.rest[len(out):]
	copy(r, out)
	return r
}

// setBalance sets c's δ to δ_a + δ_b.
func (c *Chain) setBalance(a, b *Chain) error { return c.setBalanceIn(a, b, nil) }

// setBalanceIn is setBalance carving a small δ from sl (nil: allocated
// on its own).
func (c *Chain) setBalanceIn(a, b *Chain, sl *deltaSlab) error {
	// A leaf operand's δ, and a chain of two leaves', is written on the
	// stack (see leafChain, pairLen).
	var bufA, bufB [2]DeltaEntry
	var pairA, pairB [4]DeltaEntry
	var da, db Delta
	var ba, bb *balance
	var err error
	switch {
	case a.Leaf != nil:
		da = transferDeltaIn(a.Leaf, &bufA)
	case a.balLen == pairLen:
		da, err = a.pairDeltaIn(&pairA)
	default:
		da, ba, err = a.ownParts()
	}
	if err != nil {
		return err
	}
	switch {
	case b.Leaf != nil:
		db = transferDeltaIn(b.Leaf, &bufB)
	case b.balLen == pairLen:
		db, err = b.pairDeltaIn(&pairB)
	default:
		db, bb, err = b.ownParts()
	}
	if err != nil {
		return err
	}
	if a.Leaf != nil && b.Leaf != nil {
		// Two leaves: the sum is checked (an overflow is the join's
		// error, as a kept sum's was) and not kept.
		var sum [4]DeltaEntry
		if _, err := sumInto(sum[:0], da, db); err != nil {
			return err
		}
		c.bal, c.balLen = nil, pairLen
		return nil
	}
	if ba == nil && bb == nil && len(da)+len(db) <= flatMax {
		d, err := sl.sum(da, db)
		if err != nil {
			return err
		}
		c.setSmall(d)
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
		var held [2]DeltaEntry // each's loop, without a callback (held stays on the stack)
		for _, ch := range fromBig.chunks {
			for i := range ch {
				if d := fromBig.entries(&ch[i], &held); len(d) > 0 {
					if err := target.add(d[0].Addr, d); err != nil {
						return err
					}
				}
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
	c.setBig(target)
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
	return b.of(addr)
}

// balanceOfIn is BalanceOf without an allocation: a large δ's entries
// held in place are written into buf. The slice is valid until buf is
// written again or the chain is joined.
func (c *Chain) balanceOfIn(addr Address, buf *[2]DeltaEntry) Delta {
	if c.balLen == pairLen {
		// A transfer's δ has one entry at an address (none when it
		// moves nothing): two at most here.
		var ba, bb [2]DeltaEntry
		d, err := sumInto(buf[:0], transferDeltaIn(c.Left.Leaf, &ba).OfAddr(addr), transferDeltaIn(c.Right.Leaf, &bb).OfAddr(addr))
		if err != nil {
			return nil
		}
		return d
	}
	d, b, err := c.balanceParts()
	if err != nil {
		return nil
	}
	if b == nil {
		return d.OfAddr(addr)
	}
	return b.ofIn(addr, buf)
}

// BalanceAt returns δ_C[addr, tok].
func (c *Chain) BalanceAt(addr Address, tok Token) Signed {
	var buf [2]DeltaEntry
	return c.balanceOfIn(addr, &buf).At(addr, tok)
}
