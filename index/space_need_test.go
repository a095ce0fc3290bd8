package index

import (
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// TestNeed: what the space check asks for grows with the write, the
// unflushed memtables and, once level 0 is due for compaction, with
// level 0 and the base level; a deep compaction is bounded by what the
// levels below 0 hold.
func TestNeed(t *testing.T) {
	const mb = 1 << 20
	if got, want := need(mb, 4*mb, 1, lsm{}), uint64(mb+2*5*mb+spaceSlack); got != want {
		t.Errorf("before open: %d, want %d", got, want)
	}
	levels := []badger.LevelInfo{{Level: 0, NumTables: 1, Size: 30 * mb}, {Level: 6, IsBaseLevel: true, Size: 3 * mb, TargetFileSize: 2 * mb}}
	t0 := lsm{levels: levels, l0Tables: 5, multiplier: 10}
	// 1 table + 1 log + this write: 3 < 5, no level-0 compaction yet; the
	// deep term is bounded by the 3 MB below level 0.
	if got, want := need(mb, 4*mb, 1, t0), uint64(mb+5*mb+spaceSlack+3*mb); got != want {
		t.Errorf("level 0 not due: %d, want %d", got, want)
	}
	levels[0].NumTables = 4 // 4 + 1 + 1 >= 5: level 0 (30), the flush (5) and the base level (3) are rewritten
	if got, want := need(mb, 4*mb, 1, t0), uint64(mb+5*mb+spaceSlack+30*mb+5*mb+3*mb+3*mb); got != want {
		t.Errorf("level 0 due: %d, want %d", got, want)
	}
}
