package index

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// TestDictChunks: a reader that misses an id reads the names of its run
// of nameChunk ids at once, and resolves every id as a point read does;
// a write transaction's resolver reads no run (its iterator would see
// names it has not committed), and ids a write assigned and did not
// commit never enter the cache.
func TestDictChunks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ix")
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3*nameChunk + 100
	addr := func(i int) normalform.Address { return normalform.Address{0xad, byte(i >> 16), byte(i >> 8), byte(i)} }
	ids := map[uint32]normalform.Address{}
	if err := ix.db.Update(func(txn *badger.Txn) error {
		w := ix.newWtx(txn)
		for i := range n {
			id, err := w.id(layout.LevelAddr, layout.AddrName(addr(i)))
			if err != nil {
				return err
			}
			ids[id] = addr(i)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if ix, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var byWriter uint32
	// A write transaction that assigns more ids and resolves through the
	// writer's resolver, then fails: nothing of it is cached, no run read.
	ix.db.Update(func(txn *badger.Txn) error {
		w := ix.newWtx(txn)
		for i := n; i < n+50; i++ {
			if _, err := w.id(layout.LevelAddr, layout.AddrName(addr(i))); err != nil {
				t.Fatal(err)
			}
		}
		for id := range ids {
			if _, ok := w.resolve()(layout.LevelAddr, id); !ok {
				t.Fatalf("the writer does not resolve committed id %d", id)
			}
			byWriter = id // a point read: committed, cached
			break
		}
		return errors.New("the test aborts the write")
	})
	if len(ix.dict.read) != 0 {
		t.Fatalf("a write transaction read %d runs of names", len(ix.dict.read))
	}
	for id := uint32(n + 1); id <= n+50; id++ {
		if _, ok := ix.dict.name(id); ok {
			t.Fatalf("id %d of a write that failed is cached", id)
		}
	}
	var first uint32
	for id := range ids {
		if first == 0 || id < first {
			first = id
		}
	}
	if err := ix.db.View(func(txn *badger.Txn) error {
		names := ix.namesIn(txn)
		h, ok := names(layout.LevelAddr, first+5)
		if !ok || layout.NameAddr(h) != ids[first+5] {
			t.Fatalf("id %d: %x %v, want %x", first+5, h, ok, ids[first+5])
		}
		// its whole run is cached now, and no other
		chunk := (first + 5) / nameChunk
		for id, a := range ids {
			n, ok := ix.dict.name(id)
			if in := id/nameChunk == chunk || id == byWriter; in != ok || (ok && layout.NameAddr(n.h) != a) {
				t.Fatalf("after one miss, id %d (run %d) cached %v, want %v", id, id/nameChunk, ok, in)
			}
		}
		for id, a := range ids {
			h, ok := names(layout.LevelAddr, id)
			if !ok || layout.NameAddr(h) != a {
				t.Fatalf("id %d: %x %v, want %x", id, h, ok, a)
			}
			if _, ok := names(normalform.Shape, id); ok {
				t.Fatalf("id %d resolves at another level", id)
			}
		}
		if _, ok := names(layout.LevelAddr, n+10); ok {
			t.Fatal("an id never committed resolves")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := len(ix.dict.read), (n+nameChunk)/nameChunk+1; got < want-1 || got > want {
		t.Errorf("%d runs read for %d ids", got, n)
	}
}

// TestDictConcurrentNames: readers resolve names without a lock while
// others read runs of names and a writer publishes new ids (run under
// -race by make test-race): every reader sees each id's one name, or
// none yet, never a part of one.
func TestDictConcurrentNames(t *testing.T) {
	ix, err := Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	const n = 2*nameChunk + 300
	addr := func(i int) normalform.Address { return normalform.Address{0xad, byte(i >> 16), byte(i >> 8), byte(i)} }
	ids := make([]uint32, n)
	if err := ix.db.Update(func(txn *badger.Txn) error {
		w := ix.newWtx(txn)
		for i := range n {
			if ids[i], err = w.id(layout.LevelAddr, layout.AddrName(addr(i))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// the cache starts empty (the ids were not published): readers load
	// runs, one goroutine adds ids past the last run, all at once
	done := make(chan error, 4)
	for g := range 3 {
		go func() {
			done <- ix.db.View(func(txn *badger.Txn) error {
				names := ix.namesIn(txn)
				for k := range n {
					i := (k*7 + g*331) % n
					h, ok := names(layout.LevelAddr, ids[i])
					if !ok || layout.NameAddr(h) != addr(i) {
						return fmt.Errorf("reader %d: id %d resolves to %x %v, want %x", g, ids[i], h, ok, addr(i))
					}
				}
				return nil
			})
		}()
	}
	go func() {
		for i := range 3 * nameChunk {
			id := uint32(10*nameChunk + i)
			ix.dict.add(dictName{layout.LevelAddr, layout.AddrName(addr(n + i))}, id)
			if got, ok := ix.dict.name(id); !ok || layout.NameAddr(got.h) != addr(n+i) {
				done <- fmt.Errorf("added id %d reads back as %x %v", id, got.h, ok)
				return
			}
		}
		done <- nil
	}()
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range ids {
		if got, ok := ix.dict.name(id); !ok || layout.NameAddr(got.h) != addr(i) {
			t.Fatalf("id %d cached as %x %v, want %x", id, got.h, ok, addr(i))
		}
		if got, ok := ix.dict.id(dictName{layout.LevelAddr, layout.AddrName(addr(i))}); !ok || got != id {
			t.Fatalf("address %x cached with id %d %v, want %d", addr(i), got, ok, id)
		}
	}
}
