package normalform

import "hash/maphash"

// numTab numbers keys in the order they come: an open-addressing table
// of numbers + 1 (linear probing, at most half full) over the list of
// the keys, pointer-free, emptied in what it holds (the positions it
// filled), so that a table kept for reuse costs the next user what that
// user puts in it, not its capacity (a map's clear costs its capacity:
// the root tracker of a large tree could not be kept; issue 22, session
// 8).
type numTab[K comparable] struct {
	keys []K     // by number
	pos  []int32 // by number: its position in tab
	tab  []int32 // number + 1, by hash; 0: free
}

// num returns k's number, numbering it when it is new; h is k's hash.
func (t *numTab[K]) num(k *K, h uint64, hash func(*K) uint64) int32 {
	if 2*(len(t.keys)+1) > len(t.tab) {
		t.grow(hash)
	}
	mask := uint64(len(t.tab) - 1)
	i := h & mask
	for {
		r := t.tab[i]
		if r == 0 {
			x := int32(len(t.keys))
			t.keys = append(t.keys, *k)
			t.pos = append(t.pos, int32(i))
			t.tab[i] = x + 1
			return x
		}
		if t.keys[r-1] == *k {
			return r - 1
		}
		i = (i + 1) & mask
	}
}

// reserve sizes an empty t for n keys: a table of at least 2n positions
// (64 at least), a prefix of the array it has when that is large enough
// (every position of an emptied table is free), so that a few keys are
// looked up in a small table, and many do not double it from 64.
func (t *numTab[K]) reserve(n int) {
	if len(t.keys) > 0 {
		return
	}
	size := 64
	for size < 2*n {
		size *= 2
	}
	if cap(t.tab) >= size {
		t.tab = t.tab[:size]
		return
	}
	t.tab = make([]int32, size)
	t.keys, t.pos = make([]K, 0, n), make([]int32, 0, n)
}

// grow doubles the table (within its array when it has room) and places
// every key again.
func (t *numTab[K]) grow(hash func(*K) uint64) {
	size := max(2*len(t.tab), 64)
	if cap(t.tab) >= size {
		for _, i := range t.pos {
			t.tab[i] = 0
		}
		t.tab = t.tab[:size]
	} else {
		t.tab = make([]int32, size)
	}
	mask := uint64(len(t.tab) - 1)
	for x := range t.keys {
		i := hash(&t.keys[x]) & mask
		for t.tab[i] != 0 {
			i = (i + 1) & mask
		}
		t.tab[i] = int32(x) + 1
		t.pos[x] = int32(i)
	}
}

// len is the number of keys numbered.
func (t *numTab[K]) len() int { return len(t.keys) }

// reset empties t, keeping its storage.
func (t *numTab[K]) reset() {
	for _, i := range t.pos {
		t.tab[i] = 0
	}
	var zero K
	for i := range t.keys {
		t.keys[i] = zero
	}
	t.keys, t.pos = t.keys[:0], t.pos[:0]
}

// The root tracker's hashes: addresses and tokens keyed by balSeed (no
// input can choose addresses or tokens that collide), a junction's key
// (its address's number and its token's, both the tracker's own: small
// numbers in order, which no input chooses) by a mixer (splitmix64's
// finalizer), so that every bit of both numbers reaches the low bits.
func hashAddr(a *Address) uint64 { return maphash.Bytes(balSeed, a[:]) }

func hashJunction(k *uint64) uint64 {
	x := *k
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}
