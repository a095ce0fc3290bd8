package normalform

import (
	"testing"
	"unsafe"
)

// TestSlabSizes pins the struct sizes the kernel's slab and chunk
// counts are computed from (kernel.go's fullBuilt and fullChain,
// balance.go's balChunkMax, deltaBlock): each count must fill
// its allocation's size class, and one more must not fit in it. A field
// added to one of these structs fails here, and the count beside the
// comment that explains it is to be computed again.
func TestSlabSizes(t *testing.T) {
	cases := []struct {
		name        string
		size, count uintptr
		class       uintptr // the Go allocator's size class the block is meant to fill
	}{
		{"builtNode (fullBuilt)", unsafe.Sizeof(builtNode{}), fullBuilt, 12288},
		{"Chain (fullChain)", unsafe.Sizeof(Chain{}), fullChain, 8192},
		{"DeltaEntry (deltaBlock)", unsafe.Sizeof(DeltaEntry{}), deltaBlock, 8192},
		{"balSlot (balChunkMax)", unsafe.Sizeof(balSlot{}), balChunkMax, 28672},
	}
	for _, c := range cases {
		if got := c.size * c.count; got > c.class {
			t.Errorf("%s: %d × %d bytes = %d, past its %d-byte size class", c.name, c.count, c.size, got, c.class)
		} else if got+c.size <= c.class {
			t.Errorf("%s: %d × %d bytes = %d leaves room for one more in its %d-byte size class", c.name, c.count, c.size, got, c.class)
		}
	}
	// The sizes the comments state.
	for _, s := range []struct {
		name       string
		got, wants uintptr
	}{
		{"Step", unsafe.Sizeof(Step{}), 80},
		{"Token", unsafe.Sizeof(Token{}), 56},
		{"Transfer", unsafe.Sizeof(Transfer{}), 168},
		{"Chain", unsafe.Sizeof(Chain{}), 104},
		{"builtNode", unsafe.Sizeof(builtNode{}), 160},
		{"Node", unsafe.Sizeof(Node{}), 56},
		{"DeltaEntry", unsafe.Sizeof(DeltaEntry{}), 120},
		{"balSlot", unsafe.Sizeof(balSlot{}), 112},
	} {
		if s.got != s.wants {
			t.Errorf("%s is %d bytes; the kernel's comments and counts say %d", s.name, s.got, s.wants)
		}
	}
}
