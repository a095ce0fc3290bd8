package index_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// TestOversizedFileNotRead: a regular file over MaxBytes is refused from
// its size, before it is read, and recorded as a failure naming the limit;
// with the limit raised, --retry-failed ingests it.
func TestOversizedFileNotRead(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(corpusDir, "mev-inspect-rs/res/triangular_arb.data.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTemp(t)
	sum, err := ingest.Ingest(context.Background(), ix, []ingest.Input{ingest.FileInput(path)}, ingest.Options{MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 1 || sum.Stored != 0 {
		t.Fatalf("summary %+v", sum)
	}
	var msgs []string
	ix.Failures(context.Background(), func(f index.Failure) error { msgs = append(msgs, f.String()); return nil })
	want := "the input is " + strconv.Itoa(len(src)) + " bytes, over the limit of 100 bytes (--max-bytes); not read"
	if len(msgs) != 1 || !strings.Contains(msgs[0], want) {
		t.Fatalf("failures: %q, want %q", msgs, want)
	}
	sum, err = ingest.RetryFailed(context.Background(), ix, ingest.Options{}, nil)
	if err != nil || sum.Failed != 0 || sum.Stored != 1 {
		t.Fatalf("retry: %v %+v", err, sum)
	}
}

// fifoWriter makes a named pipe at path and writes up to total bytes of
// '[' into it from a goroutine (the reader sees an endless nesting, never
// valid JSON), counting what the reader took. It stops when the reader
// closes its end.
func fifoWriter(t *testing.T, path string, total int64) *atomic.Int64 {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	var wrote atomic.Int64
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		chunk := []byte(strings.Repeat("[", 4096))
		for wrote.Load() < total {
			n, err := w.Write(chunk)
			wrote.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	return &wrote
}

// within runs f and fails the test when it does not return within d
// (the bound is what is tested: an unbounded read never returns).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", what, d)
	}
}

// TestLimitOnBytesRead: --max-bytes holds on the bytes read, not on what
// stat says. A named pipe (stat: size 0) given by name is read up to the
// limit and no further, and fails naming the limit and its value; so does
// /dev/zero, which never ends.
func TestLimitOnBytesRead(t *testing.T) {
	const limit = 1 << 20
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	wrote := fifoWriter(t, fifo, 64<<20)
	ix := openTemp(t)
	var sum ingest.Summary
	var err error
	within(t, 20*time.Second, "ingesting a pipe", func() {
		sum, err = ingest.Ingest(context.Background(), ix, []ingest.Input{ingest.FileInput(fifo), ingest.FileInput("/dev/zero")}, ingest.Options{MaxBytes: limit})
	})
	if err != nil || sum.Failed != 2 || sum.Stored != 0 {
		t.Fatalf("%v, %+v", err, sum)
	}
	// What the pipe's writer got rid of: the limit and one byte, plus what
	// the pipe buffers (64 KiB by default on Linux, at most 1 MiB).
	if got := wrote.Load(); got > limit+(1<<20)+4096 {
		t.Errorf("the writer wrote %d bytes into the pipe: read past the limit of %d", got, limit)
	}
	var msgs []string
	ix.Failures(context.Background(), func(f index.Failure) error { msgs = append(msgs, f.String()); return nil })
	want := "read: the input is over the limit of 1048576 bytes (--max-bytes); stopped reading after 1048577 bytes"
	if len(msgs) != 2 || !strings.Contains(msgs[0], want) || !strings.Contains(msgs[1], want) ||
		!strings.Contains(msgs[0]+msgs[1], "/dev/zero") || !strings.Contains(msgs[0]+msgs[1], fifo) {
		t.Errorf("failures %q, want each to name its input and say %q", msgs, want)
	}
}

// TestFolderSkipsNonRegular: in a folder, a *.json that is a named pipe,
// or a link to a device, is not read (a pipe with no writer blocks its
// reader forever; a device can be endless): each is a read failure naming
// what it is, the regular files are ingested, and --retry-failed does not
// read them either.
func TestFolderSkipsNonRegular(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(corpusDir, "mev-inspect-rs/res/triangular_arb.data.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "b.json"), 0o600); err != nil { // nobody writes
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "c.json")); err != nil {
		t.Fatal(err)
	}
	in, err := ingest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := openTemp(t)
	var sum ingest.Summary
	within(t, 20*time.Second, "ingesting the folder", func() {
		sum, err = ingest.Ingest(context.Background(), ix, in, ingest.Options{})
	})
	if err != nil || sum.Stored != 1 || sum.Failed != 2 {
		t.Fatalf("%v, %+v", err, sum)
	}
	got := map[string]string{}
	ix.Failures(context.Background(), func(f index.Failure) error { got[filepath.Base(f.Source)] = f.Msg; return nil })
	if !strings.Contains(got["b.json"], "is a named pipe, not a regular file: skipped") ||
		!strings.Contains(got["c.json"], "is a character device, not a regular file: skipped") {
		t.Errorf("failures %q", got)
	}
	within(t, 20*time.Second, "retrying", func() {
		sum, err = ingest.RetryFailed(context.Background(), ix, ingest.Options{}, nil)
	})
	if err != nil || sum.Failed != 2 {
		t.Errorf("retry: %v, %+v", err, sum)
	}
	var nre *ingest.NotRegularError
	if _, err := ingest.ReadRegularFile(filepath.Join(dir, "b.json"), 0); !errors.As(err, &nre) || nre.Kind != "a named pipe" {
		t.Errorf("ReadRegularFile of a pipe: %v", err)
	}
}

// TestReadAllBound: ReadAll holds at most max+1 bytes of an endless
// reader, and reads a reader of exactly max bytes whole.
func TestReadAllBound(t *testing.T) {
	var n atomic.Int64
	_, err := ingest.ReadAll(endless{&n}, 1000)
	var se *ingest.SizeError
	if !errors.As(err, &se) || se.Limit != 1000 || n.Load() > 1001 {
		t.Errorf("endless: %v after %d bytes", err, n.Load())
	}
	b, err := ingest.ReadAll(strings.NewReader(strings.Repeat("x", 1000)), 1000)
	if err != nil || len(b) != 1000 {
		t.Errorf("exactly the limit: %d bytes, %v", len(b), err)
	}
	b, err = ingest.ReadAll(strings.NewReader(strings.Repeat("x", 5000)), -1)
	if err != nil || len(b) != 5000 {
		t.Errorf("no limit: %d bytes, %v", len(b), err)
	}
	// Over many chunks, through a pipe (short reads): the same bytes.
	src := make([]byte, 5<<20+12345)
	for i := range src {
		src[i] = byte(i * 7 / 3)
	}
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < len(src); i += 1000 {
			_, _ = pw.Write(src[i:min(i+1000, len(src))])
		}
		pw.Close()
	}()
	b, err = ingest.ReadAll(pr, len(src))
	if err != nil || !bytes.Equal(b, src) {
		t.Errorf("%d bytes in chunks: got %d, equal %v, %v", len(src), len(b), bytes.Equal(b, src), err)
	}
}

type endless struct{ n *atomic.Int64 }

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n.Add(int64(len(p)))
	return len(p), nil
}
