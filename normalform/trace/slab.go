package trace

import "sync"

// chunkLen is the number of values in one chunk of a chunks list.
const chunkLen = 32

type chunk[T any] [chunkLen]T

// chunks hands out zeroed values of T cut from chunks of chunkLen (issue
// 22): a block's call frames, Parity frames and receipts cost one
// allocation a chunk rather than one each, and the chunks go back to a
// pool when the document is done (release), so that decoding one block
// after another reads its frames into the same memory instead of
// allocating, and collecting, every block's frames again. Nothing taken
// from them reaches a Result (T0 and the transfers hold copies).
type chunks[T any] struct {
	list     []*chunk[T]
	at, next int // the chunk take cuts from, and its next free value
}

// chunkMark is where a chunks list stood (mark), to undo a failed read.
type chunkMark struct{ at, next int }

// take returns a zero T, from pool's chunks when a new one is needed.
func (c *chunks[T]) take(pool *sync.Pool) *T {
	for {
		if c.at < len(c.list) {
			if c.next < chunkLen {
				p := &c.list[c.at][c.next]
				c.next++
				var zero T
				*p = zero
				return p
			}
			c.at, c.next = c.at+1, 0
			continue
		}
		b, _ := pool.Get().(*chunk[T])
		if b == nil {
			b = new(chunk[T])
		}
		c.list = append(c.list, b)
	}
}

func (c *chunks[T]) mark() chunkMark  { return chunkMark{c.at, c.next} }
func (c *chunks[T]) undo(m chunkMark) { c.at, c.next = m.at, m.next }

// reuse hands the chunks out again from the first: the caller holds
// nothing they gave.
func (c *chunks[T]) reuse() { c.at, c.next = 0, 0 }

// release empties every chunk (none keeps anything of this document's
// input alive) and gives them to pool.
func (c *chunks[T]) release(pool *sync.Pool) {
	for _, b := range c.list {
		clear(b[:])
		pool.Put(b)
	}
	clear(c.list)
	c.list, c.at, c.next = c.list[:0], 0, 0
}

// settle moves (*tmp)[start:], the values a reader gathered on tmp (a
// stack shared by nested readers, each taking off what it pushed), into
// the chunk *buf and returns them there, capped (an append moves them out):
// nil when there are none. A new chunk holds at least least values.
func settle[T any](buf, tmp *[]T, start, least int) []T {
	a := (*tmp)[start:]
	if len(a) == 0 {
		return nil
	}
	b := *buf
	if cap(b)-len(b) < len(a) {
		b = make([]T, 0, max(least, len(a), 2*cap(b)))
	}
	at := len(b)
	b = append(b, a...)
	*buf = b
	clear(a)
	*tmp = (*tmp)[:start]
	return b[at:len(b):len(b)]
}
