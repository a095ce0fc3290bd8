//go:build linux

package index_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/workload"
)

// diskChildEnv, when set, makes TestDiskFullChild the ingest that
// TestDiskFull runs in a subprocess: "DIR MODE SEED BLOCKS".
const diskChildEnv = "FLOWQ_DISKFULL_CHILD"

// TestDiskFullChild ingests BLOCKS synthetic blocks of 100 transactions
// (seed SEED) into the index at DIR and prints how it ended. MODE "close"
// closes the index; "unclosed" exits without closing it, as a crash after
// the ingest's last write would (Badger's memtable log keeps the writes).
// It does nothing in a normal test run.
func TestDiskFullChild(t *testing.T) {
	args := strings.Fields(os.Getenv(diskChildEnv))
	if len(args) != 4 {
		t.Skip("run by TestDiskFull")
	}
	dir, mode := args[0], args[1]
	seed, _ := strconv.ParseInt(args[2], 10, 64)
	blocks, _ := strconv.Atoi(args[3])
	gen := generator(t, seed)
	ix, err := index.Open(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(0)
	}
	g := ingest.NewIngester(context.Background(), ix, ingest.Options{Workers: 2})
	for range blocks {
		b := gen.Block()
		if g.Add(ingest.BundleInput(fmt.Sprintf("synthetic:seed%d:block:%d", seed, b.Number), b.Bundle)) != nil {
			break
		}
	}
	sum, err := g.Close()
	fmt.Printf("stored %d skipped %d\n", sum.Stored, sum.Skipped)
	if err != nil {
		fmt.Println("ingest:", err)
	}
	if mode == "unclosed" {
		os.Exit(0)
	}
	if err := ix.Close(); err != nil {
		fmt.Println("close:", err)
	}
	os.Exit(0)
}

func generator(t testing.TB, seed int64) *workload.Generator {
	return generatorWith(t, workload.Options{Seed: seed, BlockTxs: 100, FirstBlock: 20_000_000 + uint64(seed)*1_000_000})
}

// generatorWith is a synthetic workload of the bundled scenarios.
func generatorWith(t testing.TB, opt workload.Options) *workload.Generator {
	files, err := filepath.Glob("../examples/scenarios/geth/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario bundles (%v)", err)
	}
	sc := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	gen, err := workload.New(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	return gen
}

// runDiskChild runs TestDiskFullChild and returns its output; it fails
// the test when the child does not end normally (a SIGBUS is "fatal
// error: fault", exit status 2, and thousands of lines).
func runDiskChild(t *testing.T, dir, mode string, seed int64, blocks int) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestDiskFullChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d %d", diskChildEnv, dir, mode, seed, blocks))
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil || strings.Contains(text, "goroutine ") {
		lines := strings.Split(text, "\n")
		t.Fatalf("the ingest on a small disk died (%v, %d lines of output):\n%s", err, len(lines), strings.Join(lines[:min(len(lines), 12)], "\n"))
	}
	return text
}

// mountTmpfs mounts a tmpfs of the given size (mount(8)'s size=) on a
// temporary directory, unmounted at the end of the test.
func mountTmpfs(t *testing.T, size string) (string, error) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir, nil
}

// TestDiskFull fills a real 20 MB filesystem (a tmpfs: CI runs as root)
// with an ingest. Badger maps its files and writes them through the
// mapping, so without the space check a full disk is a SIGBUS in Badger's
// writer: the process dies with a goroutine dump, and later commands on
// the index fault the same way. With it:
//
//   - the ingest stops with NoSpaceError naming the directory, the free
//     and needed bytes, before the disk is full;
//   - what it wrote is whole (Verify), and read-only opening works;
//   - after space is freed (the tmpfs grown), the same ingest resumes and
//     completes;
//   - an index left with unflushed writes (the process ended without
//     closing it) on a disk then filled to the last page still opens
//     read-only, verifies, and counts every write; opening it for
//     writing is refused with a NoSpaceError (syscall.ENOSPC).
//
// Without root, TestDiskFullInjected checks the same stop and resume with
// the free space measured as nearly none.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses and ingests 16,000 transactions")
	}
	mnt, err := mountTmpfs(t, "20m")
	if errors.Is(err, syscall.EPERM) && os.Geteuid() != 0 {
		t.Skipf("mounting a tmpfs needs root (%v); TestDiskFullInjected covers the space check without it", err)
	} else if err != nil {
		t.Fatalf("mount a 20 MB tmpfs: %v", err)
	}
	dir := filepath.Join(mnt, "index")
	const blocks = 150 // 15,000 transactions: about 15 MB of writes, more than a 20 MB disk takes with room to spare

	out := runDiskChild(t, dir, "close", 1, blocks)
	if !strings.Contains(out, "no space left on "+dir+": ") || !strings.Contains(out, " bytes free, need about ") {
		t.Fatalf("the ingest on a 20 MB disk did not stop for want of space:\n%s", out)
	}
	t.Logf("20 MB tmpfs: %s", firstLines(out, 2))
	n1 := checkReadOnly(t, dir)
	if n1 == 0 {
		t.Fatal("the stopped ingest left no transaction")
	}

	// Free space (grow the filesystem) and run the ingest again: it
	// resumes and completes.
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=200m"); err != nil {
		t.Fatal(err)
	}
	out = runDiskChild(t, dir, "close", 1, blocks)
	if strings.Contains(out, "ingest:") || strings.Contains(out, "close:") {
		t.Fatalf("the resumed ingest failed:\n%s", out)
	}
	if n := checkReadOnly(t, dir); n != blocks*100 {
		t.Fatalf("after resuming, %d transactions, want %d", n, blocks*100)
	}

	// Unflushed writes, then a full disk.
	out = runDiskChild(t, dir, "unclosed", 2, 10)
	if strings.Contains(out, "ingest:") || !strings.Contains(out, "stored 1000 ") {
		t.Fatalf("the ingest failed:\n%s", out)
	}
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	if len(mems) == 0 {
		t.Fatal("the unclosed index has no memtable log: nothing tests reading one")
	}
	fillDisk(t, mnt)
	if n := checkReadOnly(t, dir); n != (blocks+10)*100 {
		t.Fatalf("read-only on a full disk: %d transactions, want %d", n, (blocks+10)*100)
	}
	ix, err := index.Open(dir)
	if err == nil {
		ix.Close()
		t.Fatal("opening a full disk's index for writing succeeded")
	}
	var ns *index.NoSpaceError
	if !errors.As(err, &ns) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on "+dir) {
		t.Fatalf("opening for writing on a full disk: %v", err)
	}
	t.Logf("full disk: %v", err)
}

// checkReadOnly opens the index read-only, verifies it and counts its
// transactions.
func checkReadOnly(t *testing.T, dir string) int {
	t.Helper()
	ix, err := index.OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	defer ix.Close()
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatalf("verify: %v", err)
	}
	n, err := ix.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fillDisk shrinks the tmpfs at mnt to what it holds, and fills the
// pages left with a file: nothing more can be allocated.
func fillDisk(t *testing.T, mnt string) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	used := (st.Blocks - st.Bfree) * uint64(st.Bsize)
	size := used + 1<<20
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, 4096)
	for {
		if _, err := f.Write(page); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	if err := syscall.Statfs(mnt, &st); err != nil || st.Bavail != 0 {
		t.Fatalf("the disk is not full: %d blocks free (%v)", st.Bavail, err)
	}
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[:min(n, len(lines))], " / ")
}
