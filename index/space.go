package index

import (
	"errors"
	"expvar"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
)

// Disk space.
//
// Badger writes its memtable log (*.mem), its value log (*.vlog) and the
// tables that flushes and compactions produce (*.sst) through memory
// maps of files it first sizes with ftruncate: the files are sparse, and
// a page gets its disk block when it is first written. On a full disk that
// write cannot fail with an error: the kernel answers the page fault with
// SIGBUS, and a Go program dies of it ("fatal error: fault"), in a Badger
// goroutine no recover reaches. On tmpfs even reading a hole of such a
// file allocates a page, so after a crash on a full tmpfs opening the
// index faulted too.
//
// So flowq never lets Badger run short: before opening an index for
// writing and before each write (a batch of the ingest, a Put, a Delete),
// it compares the space free on the index's filesystem (statfs, the
// blocks available to the user) with what Badger may allocate before the
// next check, and stops with a NoSpaceError instead of writing (see need).
// Read-only opening needs no space at all (view.go).

// NoSpaceError reports that the index's filesystem has too little space
// for the next write. Nothing was written; what was written before is
// whole. It unwraps to syscall.ENOSPC.
type NoSpaceError struct {
	Dir        string
	Free, Need uint64
	// Cause is the error of a write that failed for want of space (nil
	// when flowq stopped before writing).
	Cause error
}

func (e *NoSpaceError) Error() string {
	s := fmt.Sprintf("no space left on %s: %d bytes free, need about %d (%s of %s) to write safely",
		e.Dir, e.Free, e.Need, mib(e.Free), mib(e.Need))
	if e.Cause != nil {
		s += " (" + e.Cause.Error() + ")"
	}
	return s + "; free some space and run the command again (an ingest resumes where it stopped)"
}

func (e *NoSpaceError) Unwrap() error { return syscall.ENOSPC }

func mib(n uint64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// spaceSlack is what Badger writes besides the tables and logs need
// counts: manifest changes, the discard-stats file (1 MiB when new), the
// first page of a new memtable or value log, and rounding to pages.
const spaceSlack = 1 << 20

// freeSpace is the space available to the user on the filesystem of
// path (or of its nearest existing parent).
func freeSpace(path string) (uint64, error) {
	for {
		n, err := statFree(path)
		if err == nil {
			return n, nil
		}
		parent := filepath.Dir(path)
		if !errors.Is(err, os.ErrNotExist) || parent == path {
			return 0, fmt.Errorf("free space of %s: %w", path, err)
		}
		path = parent
	}
}

// unflushed is what the memtable logs (*.mem) of an index directory
// hold: the data of the memtables not yet flushed to tables (the logs are
// sparse: only what was written has blocks), which their flush will write
// again as level-0 tables, one a log.
func unflushed(dir string) (bytes uint64, logs int, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	} else if err != nil {
		return 0, 0, err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".mem") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // flushed and removed meanwhile
		}
		bytes += allocated(fi)
		logs++
	}
	return bytes, logs, nil
}

// allocated is the disk a file takes: its blocks (sparse files take
// less than their size), or its size where the system does not say.
func allocated(fi os.FileInfo) uint64 {
	if n, ok := fileBlocks(fi); ok {
		return n
	}
	return uint64(fi.Size())
}

// lsm is what need knows of Badger's tables.
type lsm struct {
	levels     []badger.LevelInfo // Badger's levels (nil: not known)
	l0Tables   int                // NumLevelZeroTables: level-0 tables that start a compaction
	multiplier int                // LevelSizeMultiplier
}

// need is the space Badger may allocate when a write of about batch
// bytes is committed, before the next check. u is the unflushed data and
// logs the number of memtable logs holding it.
//
//   - the write itself, in the memtable log (or in the value log, for
//     large values): batch;
//   - the flush of every memtable not yet flushed, this write's data
//     included, to level-0 tables: u + batch;
//   - when level 0 and those flushes (one table a log, and one more for
//     this write) reach the count that starts a compaction, the compaction
//     that merges level 0 into the base level: its output, written before
//     its inputs are deleted, is about the size of its inputs (level 0,
//     the flushes, the base level);
//   - a compaction further down: one table and the tables it overlaps in
//     the next level (LevelSizeMultiplier+1 tables of the largest target
//     size), bounded by what the levels below 0 hold;
//   - spaceSlack.
//
// Before the index is open its levels are not known: the compaction of
// the flushed logs is counted, level 0 and the levels below are not
// (Badger compacts them after writes, which are checked).
func need(batch, u uint64, logs int, t lsm) uint64 {
	flush := u + batch
	n := batch + flush + spaceSlack
	if t.levels == nil {
		if logs > 0 {
			n += flush
		}
		return n
	}
	var below, maxTable uint64
	for _, l := range t.levels {
		switch {
		case l.Level == 0:
			if l.NumTables+logs+1 >= t.l0Tables {
				n += uint64(l.Size) + flush + base0(t.levels)
			}
		default:
			below += uint64(l.Size)
			maxTable = max(maxTable, uint64(l.TargetFileSize))
		}
	}
	return n + min(below, uint64(t.multiplier+1)*maxTable)
}

// roomFor returns a NoSpaceError when the index's filesystem lacks the
// space a write of about batch bytes may take (need).
func (ix *Index) roomFor(batch uint64) error {
	if ix.readOnly {
		return nil // Badger refuses the write itself
	}
	if ix.hookSpace != nil {
		if err := ix.hookSpace(batch); err != nil {
			return err
		}
	}
	free, err := freeSpace(ix.path)
	if err != nil {
		return err
	}
	u, logs, err := unflushed(ix.path)
	if err != nil {
		return err
	}
	o := ix.db.Opts()
	want := need(batch, u, logs, lsm{levels: ix.db.Levels(), l0Tables: o.NumLevelZeroTables, multiplier: o.LevelSizeMultiplier})
	if free < want {
		return &NoSpaceError{Dir: ix.path, Free: free, Need: want}
	}
	return nil
}

// roomToOpen checks, before Badger opens dir for writing, that its
// filesystem has the space the opening may take: the flush of the
// memtables a crash left in their logs, and spaceSlack.
func roomToOpen(dir string) error {
	free, err := freeSpace(dir)
	if err != nil {
		return err
	}
	u, logs, err := unflushed(dir)
	if err != nil {
		return err
	}
	if want := need(0, u, logs, lsm{}); free < want {
		return &NoSpaceError{Dir: dir, Free: free, Need: want}
	}
	return nil
}

// noSpace turns an error of a write that failed for want of space (a
// write(2) answered ENOSPC: Badger's manifest, a file it creates) into a
// NoSpaceError. Badger formats the errors of the files it writes into its
// own without wrapping them, so their text is matched too.
func (ix *Index) noSpace(err error) error {
	var ns *NoSpaceError
	if err == nil || errors.As(err, &ns) {
		return err
	}
	if !errors.Is(err, syscall.ENOSPC) && !strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
		return err
	}
	free, _ := freeSpace(ix.path)
	return &NoSpaceError{Dir: ix.path, Free: free, Need: spaceSlack, Cause: err}
}

// writeSize is about what putting rec (encoded as e) writes: its value,
// its NF key's value, and its keys with the log's per-entry overhead (the keys of a record it
// replaces are deleted in the same write, and cost as much), and its
// page (pages.go), rewritten whole: up to PageSpan-1 other records,
// counted at this one's size; and its NF page (nfpages.go), rewritten
// whole: up to NFPageSpan-1 other NFs, counted at half this one's size
// (compressed: 0.45 of it on the synthetic workload).
func writeSize(rec *Record, e *encoded) uint64 {
	return keysSize(rec, e) + uint64(layout.PageSpan-1)*recordSize(e) + uint64(layout.NFPageSpan-1)*uint64(len(rec.NF))/2 +
		postingsSize(rec, rec.Loc.Index+1)
}

// postingsSize is about the postings (postings.go) a record's secondary
// keys join, rewritten whole: at most 4 bytes a position of its block,
// for the positions below n (at least 256).
func postingsSize(rec *Record, n uint32) uint64 {
	if !rec.Loc.Known() {
		return 0
	}
	keys := 6 + len(rec.Addresses) + len(rec.Tokens) + len(rec.Gross) + len(rec.Net)
	return uint64(keys) * 4 * uint64(max(n, 256))
}

// keysSize is writeSize without the pages and postings rewritten whole.
func keysSize(rec *Record, e *encoded) uint64 {
	keys := 16 + len(rec.Addresses) + len(rec.Tokens) + len(rec.Gross) + len(rec.Net)
	return recordSize(e) + uint64(len(rec.NF)) + 2*uint64(keys)*64 // the NF under its own key (0x1b)
}

// recordSize is about the bytes of a record in its page.
func recordSize(e *encoded) uint64 { return uint64(len(e.Pre)+len(e.Post)) + 16 }

// opsSize is about what a batch of the ingest writes (the keys of its
// records, each page they touch rewritten whole once, counted at its
// largest record's size, each NF page at half its mean NF's size
// (compressed), and its inputs' failures and markers).
func opsSize(ops []Op) uint64 {
	var n, largest, nfs, nfBytes uint64
	pages, nfPages := map[Loc]bool{}, map[Loc]bool{}
	var blocks map[uint64]uint32 // past the highest index written in each block
	var ofBlock *Record          // the entry with the most secondary keys
	for _, o := range ops {
		switch {
		case o.Entry != nil:
			n += keysSize(o.Entry.Rec, o.Entry.enc)
			largest = max(largest, recordSize(o.Entry.enc))
			pages[layout.PageLoc(o.Entry.Rec.Loc)] = true
			if l := o.Entry.Rec.Loc; l.Known() {
				if blocks == nil {
					blocks = map[uint64]uint32{}
				}
				blocks[l.Block] = max(blocks[l.Block], l.Index+1)
				if ofBlock == nil || postingsSize(o.Entry.Rec, 1) > postingsSize(ofBlock, 1) {
					ofBlock = o.Entry.Rec
				}
			}
			nfs, nfBytes = nfs+1, nfBytes+uint64(len(o.Entry.Rec.NF))
			nfPages[layout.NFPageLoc(o.Entry.Rec.Loc)] = true
		case o.Fin != nil:
			n += 256
			for _, f := range o.Fin.Failures {
				n += uint64(len(f.Msg)+len(f.Source)) + 128
			}
		}
	}
	for _, hi := range blocks { // each block's postings, rewritten whole once
		n += postingsSize(ofBlock, hi)
	}
	if nfs > 0 {
		n += uint64(len(nfPages)) * uint64(layout.NFPageSpan) * (nfBytes / nfs) / 2
	}
	return n + uint64(len(pages))*uint64(layout.PageSpan)*largest
}

// base0 is the size of the base level, into which level 0 is compacted.
func base0(levels []badger.LevelInfo) uint64 {
	for _, l := range levels {
		if l.Level > 0 && l.IsBaseLevel {
			return uint64(l.Size)
		}
	}
	return 0
}

// CompactionPending reports whether Badger is compacting or has a
// compaction to pick: tables being compacted (Badger's
// compaction_current_num_lsm counter, which counts the compactions of
// every Badger database of the process), a level whose adjusted score is
// at least 1, or level 0 with a score of at least 1 (the first
// compactor takes level 0 on its score alone). A scan's CPU time,
// measured as the process's, includes the compactions that run beside
// it; measurements wait for this to be false to time the scan alone
// (internal/workload/cmd/scale, --settle).
func (ix *Index) CompactionPending() bool {
	if v, ok := expvar.Get("badger_compaction_current_num_lsm").(*expvar.Int); ok && v.Value() > 0 {
		return true
	}
	for _, l := range ix.db.Levels() {
		if l.Adjusted >= 1 || (l.Level == 0 && l.Score >= 1) {
			return true
		}
	}
	return false
}
