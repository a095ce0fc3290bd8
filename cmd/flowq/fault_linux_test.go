//go:build linux

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCommandsOnFullDisk: on a full filesystem (a tmpfs; CI runs as
// root), with an index a crash left unflushed, an ingest stops at once
// with a short message naming the lack of space and exit status 1 (it
// died of SIGBUS with exit status 2 and a dump of every goroutine), and
// verify, query, export, ingest --failures and the REPL work (they died
// of SIGBUS too: reading the memtable log's holes allocates pages on
// tmpfs).
func TestCommandsOnFullDisk(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=20m"); err != nil {
		if errors.Is(err, syscall.EPERM) && os.Geteuid() != 0 {
			t.Skipf("mounting a tmpfs needs root (%v); index's TestDiskFullInjected covers the space check without it", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dir := filepath.Join(mnt, "index")
	crashedIndex(t, dir)
	// Fill the disk to the last page.
	f, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for page := make([]byte, 4096); ; {
		if _, err := f.Write(page); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()

	_, errs, code := command(t, "", "flowq", "ingest", "--index", dir, "../../normalform/trace/testdata/corpus")
	lines := strings.Count(strings.TrimSpace(errs), "\n") + 1
	if code != 1 || !strings.Contains(errs, "no space left on "+dir+": ") || lines > 3 || strings.Contains(errs, "goroutine") {
		t.Fatalf("ingest on a full disk: exit %d, %d lines on stderr, want 1 and a short message naming the lack of space:\n%s", code, lines, clipText(errs))
	}
	t.Logf("ingest on a full disk: %s", strings.TrimSpace(errs))
	readOnlyCommands(t, dir, demoTxs(t))
}
