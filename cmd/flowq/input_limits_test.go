package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/index/ingest"
)

// within fails the test when f does not return within d: an unbounded
// read never returns (or takes the machine first).
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

// TestIngestDevZeroBounded: `ingest --max-bytes 1000000 /dev/zero` (stat
// says 0 bytes) reads one byte past the limit and fails naming the file,
// the limit and its value, with exit status 1.
func TestIngestDevZeroBounded(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	var errs string
	var code int
	within(t, 30*time.Second, "ingest /dev/zero", func() {
		_, errs, code = flowq(t, nil, "", "ingest", "--index", idx, "--max-bytes", "1000000", "/dev/zero")
	})
	want := "/dev/zero: read: the input is over the limit of 1000000 bytes (--max-bytes); stopped reading after 1000001 bytes"
	if code != 1 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, want 1 and %q:\n%s", code, want, errs)
	}
}

// endless is standard input that never ends, counting what was read.
type endless struct{ n *atomic.Int64 }

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '['
	}
	e.n.Add(int64(len(p)))
	return len(p), nil
}

// TestStdinBounded: `inspect -` and `draw -` read an endless standard
// input up to --max-bytes and one byte more, and fail naming standard
// input, the limit and its value.
func TestStdinBounded(t *testing.T) {
	for _, cmd := range []string{"inspect", "draw"} {
		var n atomic.Int64
		var out, errb strings.Builder
		code := 0
		within(t, 30*time.Second, cmd+" -", func() {
			code = run([]string{cmd, "--max-bytes", "1000", "-"}, endless{&n}, &out, &errb, func(string) (string, bool) { return "", false })
		})
		want := "stdin: the input is over the limit of 1000 bytes (--max-bytes); stopped reading after 1001 bytes"
		if code != 1 || !strings.Contains(errb.String(), want) || n.Load() > 1001 {
			t.Errorf("%s: exit %d after reading %d bytes, want 1 after at most 1001 and %q:\n%s", cmd, code, n.Load(), want, errb.String())
		}
	}
}

// TestInspectFolderSkipsPipe: `inspect DIR` reads the regular files of
// the folder and reports, without opening them, a named pipe (whose open
// would block forever) and a link to /dev/zero (endless).
func TestInspectFolderSkipsPipe(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(triangular)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.json"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "b.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "c.json")); err != nil {
		t.Fatal(err)
	}
	var out, errs string
	var code int
	within(t, 30*time.Second, "inspect DIR", func() { out, errs, code = flowq(t, nil, "", "inspect", dir) })
	if code != 1 || !strings.Contains(out, "0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc") ||
		!strings.Contains(errs, "b.json is a named pipe, not a regular file: skipped") ||
		!strings.Contains(errs, "c.json is a character device, not a regular file: skipped") ||
		!strings.Contains(errs, "1 transactions decoded, 2 failed") {
		t.Errorf("exit %d\nstdout %.300s\nstderr %s", code, out, errs)
	}
}

// TestFetchRefusesWrongAnswers: a node answering block 72 (the replayed
// bundle's) when asked for block 5, or a null trace for a block with a
// transaction: fetch exits 1, names the method, the block and what is
// wrong, and writes no file.
func TestFetchRefusesWrongAnswers(t *testing.T) {
	url, _, _ := replayNode(t, 0)
	dir := t.TempDir()
	_, errs, code := flowq(t, nil, "", "fetch", "--quiet", "--rpc", url, "--blocks", "5", "--out", dir)
	if code != 1 || !strings.Contains(errs, "eth_getBlockByNumber for block 5: asked for block 5, the node answered block 72") {
		t.Errorf("block 72 for 5: exit %d, %s", code, errs)
	}
	url, _, _ = replayNodeWith(t, 0, func(m string, res json.RawMessage) json.RawMessage {
		if m == "debug_traceBlockByNumber" {
			return json.RawMessage("null")
		}
		return res
	})
	_, errs, code = flowq(t, nil, "", "fetch", "--quiet", "--rpc", url, "--blocks", "72", "--out", dir)
	if code != 1 || !strings.Contains(errs, "debug_traceBlockByNumber for block 72: the node returned no trace (null) for a block of 1 transaction") {
		t.Errorf("null trace: exit %d, %s", code, errs)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("files written: %v", files)
	}
}

// secretsShown lists what of issue 15's URL (user, password, path key,
// query key) a text shows.
func secretsShown(text string) []string {
	var out []string
	for _, s := range []string{"user:", ":pass", "pass@", "/v2/KEY", "key=K"} {
		if strings.Contains(text, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestCLIRedactsNodeURL: with --rpc 'http://user:pass@HOST/v2/KEY?key=K',
// nothing a command prints shows the user, the password or the keys:
// fetch on a refused connection and on a timeout, inspect --rpc, ingest
// --retry-failed --rpc, and the failure records ingest --failures lists.
func TestCLIRedactsNodeURL(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	refused := "http://user:pass@" + closed.Listener.Addr().String() + "/v2/KEY?key=K"
	closed.Close()
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<16)
		for {
			if _, err := r.Body.Read(buf); err != nil {
				break
			}
		}
		<-r.Context().Done()
	}))
	defer hanging.Close()
	slow := "http://user:pass@" + hanging.Listener.Addr().String() + "/v2/KEY?key=K"
	dir := t.TempDir()
	hash := "0x" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"fetch_refused", []string{"fetch", "--quiet", "--rpc", refused, "--blocks", "1..3", "--out", dir}},
		{"fetch_timeout", []string{"fetch", "--quiet", "--rpc", slow, "--timeout", "200ms", "--retries", "1", "--blocks", "1", "--out", dir}},
		{"fetch_tx_timeout", []string{"fetch", "--quiet", "--rpc", slow, "--timeout", "200ms", "--retries", "1", "--tx", hash, "--out", dir}},
		{"inspect_refused", []string{"inspect", "--rpc", refused, hash}},
		{"fetch_bad_url", []string{"fetch", "--rpc", "alchemy.com/v2/KEYKEYKEY?key=K", "--blocks", "1", "--out", dir}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := flowq(t, nil, "", c.args...)
			if code != 1 || len(secretsShown(out+errs)) > 0 || strings.Contains(errs, "KEYKEYKEY") || !strings.Contains(errs, "***") {
				t.Errorf("exit %d, shows %q:\n%s%s", code, secretsShown(out+errs), out, errs)
			}
		})
	}

	// Failures recorded in the index, then retried against the node.
	idx := filepath.Join(t.TempDir(), "idx")
	ix, err := index.Open(idx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fetch.Dial(context.Background(), refused, fetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.IngestBlocks(context.Background(), ix, 1, 2, ingest.Options{})
	c.Close()
	ix.Close()
	if err != nil || len(rep.Missing) != 2 || len(secretsShown(rep.String())) > 0 {
		t.Fatalf("%v\n%s", err, rep)
	}
	out, errs, code := flowq(t, nil, "", "ingest", "--index", idx, "--retry-failed", "--rpc", refused)
	if code != 1 || len(secretsShown(out+errs)) > 0 || !strings.Contains(errs, "http://***@127.0.0.1") {
		t.Errorf("ingest --retry-failed: exit %d, shows %q:\n%s", code, secretsShown(out+errs), errs)
	}
	out, errs, code = flowq(t, nil, "", "ingest", "--index", idx, "--failures")
	if code != 0 || strings.Count(out, "rpc:block:") != 2 || len(secretsShown(out+errs)) > 0 {
		t.Errorf("ingest --failures: exit %d, shows %q:\n%s", code, secretsShown(out+errs), out)
	}
}

// TestQueryInputBounded: `flowq query -` with an endless standard input
// and `flowq run /dev/zero` stop at repl.MaxScriptBytes (and one byte
// more) and fail with exit status 1, naming what they read; they read
// everything before.
func TestQueryInputBounded(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	env := func(string) (string, bool) { return "", false }
	var n atomic.Int64
	var out, errb strings.Builder
	code := 0
	within(t, 60*time.Second, "query -", func() {
		code = run([]string{"query", "--index", idx, "-"}, endless{&n}, &out, &errb, env)
	})
	if want := "standard input: over 67108864 bytes (64 MiB)"; code != 1 || !strings.Contains(errb.String(), want) || n.Load() > 64<<20+64<<10 {
		t.Errorf("query -: exit %d after reading %d bytes, want 1 and %q:\n%s", code, n.Load(), want, errb.String())
	}
	errb.Reset()
	within(t, 60*time.Second, "run /dev/zero", func() {
		code = run([]string{"run", "--index", idx, "/dev/zero"}, nil, &out, &errb, env)
	})
	if want := "/dev/zero: over 67108864 bytes (64 MiB)"; code != 1 || !strings.Contains(errb.String(), want) {
		t.Errorf("run /dev/zero: exit %d, want 1 and %q:\n%s", code, want, errb.String())
	}
}
