package index

import (
	"context"
	"testing"
	"time"

	"github.com/flowq/flowq/normalform"
)

// writeMark writes an input's marker as an ingest's batch does.
func writeMark(t *testing.T, ix *Index, name string, content byte) {
	t.Helper()
	w, err := ix.Batches(context.Background(), normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]Op{{Fin: &Finish{Name: name, Content: [32]byte{content}}}}); err != nil {
		t.Fatal(err)
	}
}

// TestMarkReaderSnapshots: a MarkReader reads from one snapshot while it
// is young (a marker written since is not seen: no new transaction, so
// no wait for the writes in flight), takes the next in the background
// once it is old, and gives its snapshots back on Release, also while
// one is being taken.
func TestMarkReaderSnapshots(t *testing.T) {
	ix := openPaged(t)
	writeMark(t, ix, "a", 1)
	r := ix.MarkReader()
	defer r.Release()
	if m, ok, err := r.Input("a"); err != nil || !ok || m.Content[0] != 1 {
		t.Fatalf("a: %+v %v %v", m, ok, err)
	}
	writeMark(t, ix, "b", 2)
	if _, ok, err := r.Input("b"); err != nil || ok {
		t.Fatalf("b seen in a snapshot taken before it (%v %v): the reader took a new one", ok, err)
	}
	first := r.txn
	r.taken = time.Now().Add(-2 * markSnapshotAge)
	if _, ok, _ := r.Input("b"); ok || r.next == nil {
		t.Fatalf("an old snapshot: b seen %v, next taken %v; want the old snapshot read while the next is taken", ok, r.next != nil)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, ok, err := r.Input("b")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if m.Content[0] != 2 || r.next != nil || r.txn == first {
				t.Fatalf("b %+v from the new snapshot; next %v", m, r.next != nil)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the next snapshot never came")
		}
		time.Sleep(time.Millisecond)
	}
	r.taken = time.Now().Add(-2 * markSnapshotAge)
	r.Input("a") // starts the next snapshot
	r.Release()
	if r.txn != nil || r.next != nil {
		t.Fatal("Release kept a snapshot")
	}
	if m, ok, err := r.Input("b"); err != nil || !ok || m.Content[0] != 2 {
		t.Fatalf("after Release: %+v %v %v", m, ok, err)
	}
}
