package index_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// TestDiskFullInjected is TestDiskFull without a small filesystem: the
// space check is told, from the fifth write of an ingest on, that the
// disk is full. The ingest stops with a NoSpaceError (ENOSPC) naming the
// directory and the bytes free and needed; what it wrote is whole; and
// once space is back, the same ingest resumes to the index an
// uninterrupted one gives.
func TestDiskFullInjected(t *testing.T) {
	ref := openTemp(t)
	if _, err := ingest.Ingest(context.Background(), ref, crashInputs(t), crashOptions()); err != nil {
		t.Fatal(err)
	}
	want := index.Dump(t, ref)

	ix := openTemp(t)
	calls := 0
	index.SetHookSpace(ix, func(batch uint64) error {
		if calls++; calls >= 5 {
			return &index.NoSpaceError{Dir: ix.Path(), Free: 4096, Need: index.NeedEmpty(batch)}
		}
		return nil
	})
	sum, err := ingest.Ingest(context.Background(), ix, crashInputs(t), crashOptions())
	var ns *index.NoSpaceError
	if !errors.As(err, &ns) || !errors.Is(err, syscall.ENOSPC) ||
		!strings.Contains(err.Error(), "no space left on "+ix.Path()+": 4096 bytes free, need about ") {
		t.Fatalf("ingest on a full disk: %v (%+v)", err, sum)
	}
	if sum.Stored == 0 || sum.Stored >= 149 {
		t.Fatalf("the ingest should stop part way: %+v", sum)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatalf("after the stop: %v", err)
	}
	checkMarkers(t, ix)
	index.SetHookSpace(ix, nil)
	if _, err := ingest.Ingest(context.Background(), ix, crashInputs(t), crashOptions()); err != nil {
		t.Fatal(err)
	}
	if got := index.Dump(t, ix); !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed after a full disk, the index differs:\n%s", diff(want, got))
	}
}

// TestReadOnlyAfterKill: an ingest killed with SIGKILL leaves Badger's
// memtable logs longer than their data, which Badger opened read-only
// refuses ("Log truncate required to run DB"). OpenReadOnly opens the
// index anyway, without changing a byte of its directory, and sees every
// write the killed process committed: the count and the keys equal those
// of a read-write open, which replays and truncates the logs.
func TestReadOnlyAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, killAt := range []int{3, 40} {
		t.Run(fmt.Sprintf("after commit %d", killAt), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			seen, _ := runCrashChild(t, exe, dir, killAt, 0)
			mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
			if len(mems) == 0 {
				t.Fatalf("killed after commit %d, the index has no memtable log", seen)
			}
			before := dirState(t, dir)
			ro, err := index.OpenReadOnly(dir)
			if err != nil {
				t.Fatalf("read-only open after SIGKILL: %v", err)
			}
			if err := ro.Verify(context.Background()); err != nil {
				t.Fatalf("verify, read-only: %v", err)
			}
			n, _ := ro.Count(context.Background())
			keys := index.Dump(t, ro)
			if err := ro.Close(); err != nil {
				t.Fatal(err)
			}
			if after := dirState(t, dir); !reflect.DeepEqual(after, before) {
				t.Fatalf("the read-only open changed the index directory:\nbefore %v\nafter  %v", before, after)
			}
			rw, err := index.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer rw.Close()
			m, _ := rw.Count(context.Background())
			if n != m || n == 0 {
				t.Fatalf("read-only sees %d transactions, read-write %d", n, m)
			}
			if got := index.Dump(t, rw); !reflect.DeepEqual(got, keys) {
				t.Fatalf("read-only and read-write opens differ:\n%s", diff(got, keys))
			}
			t.Logf("killed after commit %d: %d memtable log(s); read-only open saw %d transactions, %d keys, as the read-write open", seen, len(mems), n, len(keys))
		})
	}
}

// dirState is each file of a directory with its size and SHA-256.
func dirState(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %x", e.Name(), n, h.Sum(nil)[:8]))
	}
	sort.Strings(out)
	return out
}

// TestWriterPanicIsAnError: a panic in the ingest's writer goroutine (a
// bug) stops the ingest with an error instead of killing the process
// with a goroutine's stack; what was committed before is whole.
func TestWriterPanicIsAnError(t *testing.T) {
	ix := openTemp(t)
	writes := 0
	index.SetHook(ix, func(op string, key []byte) error {
		if writes++; writes == 200 {
			panic("boom")
		}
		return nil
	})
	_, err := ingest.Ingest(context.Background(), ix, crashInputs(t), crashOptions())
	if err == nil || !strings.Contains(err.Error(), "internal error writing the index: boom") {
		t.Fatalf("ingest: %v", err)
	}
	index.SetHook(ix, nil)
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyWithEmptyLogs: a process killed between creating a value
// log or a memtable log and sizing it leaves an empty file, which Badger
// opened read-only tries to size, and fails. OpenReadOnly opens the index
// anyway, and changes nothing in its directory.
func TestReadOnlyWithEmptyLogs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ix")
	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Ingest(context.Background(), ix, crashInputs(t)[:3], ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	n, _ := ix.Count(context.Background())
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"000099.vlog", "00099.mem"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := dirState(t, dir)
	ro, err := index.OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("read-only open with empty logs: %v", err)
	}
	if m, _ := ro.Count(context.Background()); m != n || n == 0 {
		t.Errorf("%d transactions, want %d", m, n)
	}
	if err := ro.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	ro.Close()
	if after := dirState(t, dir); !reflect.DeepEqual(after, before) {
		t.Fatalf("the read-only open changed the directory:\nbefore %v\nafter  %v", before, after)
	}
}
