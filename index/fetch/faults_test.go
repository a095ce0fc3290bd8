package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// Node faults against a misbehaving JSON-RPC server on loopback. The
// fakeNode of fetch_test.go answers; these handlers break its answers in
// the ways real nodes and the proxies before them do.

// faulty wraps a fakeNode: fault, when it returns true, has handled the
// request itself (n is the 1-based request number, body the request).
type faulty struct {
	node  *fakeNode
	n     atomic.Int32
	fault func(n int, body []byte, w http.ResponseWriter, r *http.Request) bool
}

func (f *faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if f.fault != nil && f.fault(int(f.n.Add(1)), body, w, r) {
		return
	}
	f.node.ServeHTTP(w, r)
}

func serveFaulty(t *testing.T, fault func(n int, body []byte, w http.ResponseWriter, r *http.Request) bool) (*faulty, string) {
	t.Helper()
	f := &faulty{node: &fakeNode{answer: ingestAnswers}, fault: fault}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// ingestAnswers are blockAnswers that decode and analyse: blocks of one
// transaction each, paying 1 wei from 0x..aa to 0x..bb.
func ingestAnswers(m string, params []json.RawMessage) any {
	if m == "debug_traceBlockByNumber" {
		var num string
		_ = json.Unmarshal(params[0], &num)
		h := fmt.Sprintf("0x%064s", strings.TrimPrefix(num, "0x"))
		return []any{map[string]any{"txHash": h, "result": map[string]any{"type": "CALL", "value": "0x1", "gas": "0x5208", "gasUsed": "0x5208", "input": "0x",
			"from": "0x00000000000000000000000000000000000000aa", "to": "0x00000000000000000000000000000000000000bb"}}}
	}
	return blockAnswers(m, params)
}

// hang answers nothing until the client gives up on the request.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// drop closes the connection without an answer (a node going away).
func drop(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// truncated answers the node's real answer cut in half.
func truncated(f *fakeNode, w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, r)
	b := rec.Body.Bytes()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	_, _ = w.Write(b[:len(b)/2])
	drop(w) // the rest never comes
}

// TestNodeFaultsRetried: each transient fault, on the first attempts, is
// retried with backoff and the block arrives whole.
func TestNodeFaultsRetried(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault func(f *faulty, w http.ResponseWriter, r *http.Request)
	}{
		{"timeout", func(f *faulty, w http.ResponseWriter, r *http.Request) { hang(w, r) }},
		{"connection_dropped", func(f *faulty, w http.ResponseWriter, r *http.Request) { drop(w) }},
		{"truncated_answer", func(f *faulty, w http.ResponseWriter, r *http.Request) { truncated(f.node, w, r) }},
		{"http_429", func(f *faulty, w http.ResponseWriter, r *http.Request) { http.Error(w, "slow down", 429) }},
		{"http_502", func(f *faulty, w http.ResponseWriter, r *http.Request) { http.Error(w, "bad gateway", 502) }},
		{"rpc_limit_exceeded", func(f *faulty, w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded"}},{"jsonrpc":"2.0","id":2,"error":{"code":-32005,"message":"limit exceeded"}},{"jsonrpc":"2.0","id":3,"error":{"code":-32005,"message":"limit exceeded"}}]`)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f *faulty
			f, url := serveFaulty(t, func(n int, _ []byte, w http.ResponseWriter, r *http.Request) bool {
				if n <= 2 {
					c.fault(f, w, r)
					return true
				}
				return false
			})
			o := quick(Geth)
			o.Timeout = time.Second
			b, err := dial(t, url, o).Block(context.Background(), 7)
			if err != nil {
				t.Fatalf("%v after %d requests", err, f.n.Load())
			}
			if !bytes.Contains(b, []byte(`"number":"0x7"`)) || !bytes.HasSuffix(b, []byte("}\n")) {
				t.Errorf("bundle %s", b)
			}
			// Two faults, then the answer (one more only if the machine is
			// so slow that a loopback answer took over a second).
			if got := f.n.Load(); got < 3 || (got > 3 && c.name != "timeout") {
				t.Errorf("%d requests, want 3 (two faults, then the answer)", got)
			}
		})
	}
}

// TestNodeFaultsReported: a fault that does not go away, or one that is
// not worth retrying, is an *Error naming the method, the block, the
// attempts and the cause.
func TestNodeFaultsReported(t *testing.T) {
	for _, c := range []struct {
		name     string
		fault    func(f *faulty, w http.ResponseWriter, r *http.Request)
		attempts int
		want     []string
	}{
		{"timeout", func(f *faulty, w http.ResponseWriter, r *http.Request) { hang(w, r) }, 3, []string{"deadline exceeded"}},
		{"truncated_answer", func(f *faulty, w http.ResponseWriter, r *http.Request) { truncated(f.node, w, r) }, 3, []string{"EOF"}},
		{"http_503", func(f *faulty, w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 503) }, 3, []string{"503"}},
		{"html_instead_of_json", func(f *faulty, w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<html><body>maintenance</body></html>")
		}, 1, []string{"invalid character '<'"}},
		{"rpc_error", func(f *faulty, w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"historical state not available"}},{"jsonrpc":"2.0","id":2,"result":[]},{"jsonrpc":"2.0","id":3,"result":{"number":"0x7","parentHash":"0x00"}}]`)
		}, 1, []string{"historical state not available"}},
		{"answer_with_wrong_ids", func(f *faulty, w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"jsonrpc":"2.0","id":91,"result":[]},{"jsonrpc":"2.0","id":92,"result":[]},{"jsonrpc":"2.0","id":93,"result":{}}]`)
		}, 3, []string{"did not contain a response"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f *faulty
			f, url := serveFaulty(t, func(n int, _ []byte, w http.ResponseWriter, r *http.Request) bool {
				c.fault(f, w, r)
				return true
			})
			o := quick(Geth)
			o.Retries = 2
			o.Timeout = time.Second
			_, err := dial(t, url, o).Block(context.Background(), 7)
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v, want an *Error", err, err)
			}
			if fe.Target != "block 7" || fe.Attempts != c.attempts {
				t.Errorf("%v: target %q, %d attempts; want block 7, %d attempts", err, fe.Target, fe.Attempts, c.attempts)
			}
			for _, w := range append(c.want, "block 7") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}

// blockOf is the block number a request is about ("0x3" -> 3), or -1.
func blockOf(body []byte) int {
	for n := 0; n < 64; n++ {
		if bytes.Contains(body, []byte(fmt.Sprintf(`"params":["0x%x"`, n))) {
			return n
		}
	}
	return -1
}

func openIndex(t *testing.T) *index.Index {
	t.Helper()
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// failures lists the recorded failures as "source: stage".
func failures(t *testing.T, ix *index.Index) []index.Failure {
	t.Helper()
	var out []index.Failure
	if err := ix.Failures(context.Background(), func(f index.Failure) error { out = append(out, f); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIngestBlocksRecordsMissingAndRetries: over blocks 1..8, block 3
// never answers (503), block 5's trace is missing (null: refused at fetch
// time, as missing, since its header lists a transaction), block 6's
// trace of its transaction is an error entry. The others are ingested; the
// three are recorded per block (and per transaction for block 6), the
// report says what is missing, nothing of the three is in the index, and
// once the node is well again RetryFailed completes the range.
func TestIngestBlocksRecordsMissingAndRetries(t *testing.T) {
	var healed atomic.Bool
	f, url := serveFaulty(t, func(n int, body []byte, w http.ResponseWriter, r *http.Request) bool {
		if healed.Load() {
			return false
		}
		switch blockOf(body) {
		case 3:
			http.Error(w, "down", 503)
			return true
		case 5, 6:
			rec := httptest.NewRecorder()
			(&fakeNode{answer: func(m string, params []json.RawMessage) any {
				if m == "debug_traceBlockByNumber" {
					if blockOf(body) == 5 {
						return nil
					}
					return []any{map[string]any{"txHash": fmt.Sprintf("0x%064x", 6), "error": "execution timeout"}}
				}
				return ingestAnswers(m, params)
			}}).ServeHTTP(rec, r)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(rec.Body.Bytes())
			return true
		}
		return false
	})
	_ = f
	c := dial(t, url, quick(Geth))
	ix := openIndex(t)
	ctx := context.Background()
	rep, err := c.IngestBlocks(ctx, ix, 1, 8, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", rep)
	if len(rep.Missing) != 2 || rep.Missing[0].Block != 3 || !strings.Contains(rep.Missing[0].Err, "503") || !strings.Contains(rep.Missing[0].Err, "block 3") ||
		rep.Missing[1].Block != 5 || !strings.Contains(rep.Missing[1].Err, "debug_traceBlockByNumber for block 5: the node returned no trace (null) for a block of 1 transaction") {
		t.Errorf("missing %+v, want block 3 with the 503 and block 5 without its trace", rep.Missing)
	}
	if rep.Fetched != 6 || rep.Stored != 5 || rep.Complete() {
		t.Errorf("fetched %d, stored %d, complete %v; want 6, 5 (block 6 has no transaction to store), false", rep.Fetched, rep.Stored, rep.Complete())
	}
	for _, want := range []string{"missing block 3", "503", "missing block 5", "no trace", "rpc:block:6", "execution timeout", "--retry-failed"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, rep)
		}
	}
	bySource := map[string]index.Failure{}
	for _, fl := range failures(t, ix) {
		bySource[fl.Source] = fl
	}
	if fl := bySource[BlockName(3)]; fl.Stage != index.StageRead || !strings.Contains(fl.Msg, "503") {
		t.Errorf("block 3's failure: %+v", fl)
	}
	if fl := bySource[BlockName(5)]; fl.Stage != index.StageRead || !strings.Contains(fl.Msg, "no trace (null)") {
		t.Errorf("block 5's failure: %+v", fl)
	}
	if fl := bySource[BlockName(6)]; fl.Stage != index.StageDecode || !fl.HasTx || !strings.Contains(fl.Msg, "execution timeout") {
		t.Errorf("block 6's failure: %+v", fl)
	}
	if len(bySource) != 3 {
		t.Errorf("failures of %d inputs, want 3: %v", len(bySource), bySource)
	}
	for _, n := range []uint64{3, 5} {
		if _, ok, _ := ix.Input(BlockName(n)); ok {
			t.Errorf("block %d has a marker: it was never fetched whole", n)
		}
	}
	for _, n := range []int{3, 5, 6} {
		if _, err := ix.Get(mustHash(n)); !errors.Is(err, index.ErrNotFound) {
			t.Errorf("block %d's transaction is in the index: %v", n, err)
		}
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}

	// A second run of the range fetches blocks 3 and 5 again only (the
	// others have markers), and they still fail.
	rep2, err := c.IngestBlocks(ctx, ix, 1, 8, ingest.Options{})
	if err != nil || rep2.AlreadyIndexed != 6 || rep2.Fetched != 0 || len(rep2.Missing) != 2 {
		t.Errorf("second run: %v, %d already indexed, %d fetched, %d missing", err, rep2.AlreadyIndexed, rep2.Fetched, len(rep2.Missing))
	}

	// The node is well again: the retry completes the range.
	healed.Store(true)
	sum, err := c.RetryFailed(ctx, ix, ingest.Options{})
	if err != nil || sum.Failed != 0 || sum.Stored != 3 {
		t.Fatalf("retry: %v, %+v", err, sum)
	}
	if fl := failures(t, ix); len(fl) != 0 {
		t.Errorf("failures left after the retry: %v", fl)
	}
	for n := 1; n <= 8; n++ {
		if _, err := ix.Get(mustHash(n)); err != nil {
			t.Errorf("block %d: %v", n, err)
		}
		if _, ok, _ := ix.Input(BlockName(uint64(n))); !ok {
			t.Errorf("block %d has no marker after the retry", n)
		}
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func mustHash(n int) [32]byte {
	var h [32]byte
	h[31] = byte(n)
	return h
}

// TestIngestBlocksCancelled: a cancellation in the middle of the range
// stops fetch and ingest with context.Canceled, leaves no failure for the
// blocks cut short, a consistent index, and the same run again completes
// it.
func TestIngestBlocksCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	var cancelled atomic.Bool
	_, url := serveFaulty(t, func(n int, body []byte, w http.ResponseWriter, r *http.Request) bool {
		if blockOf(body) == 12 && !cancelled.Load() {
			once.Do(func() { cancelled.Store(true); cancel() })
			hang(w, r)
			return true
		}
		return false
	})
	o := quick(Geth)
	o.Concurrency = 2
	c := dial(t, url, o)
	ix := openIndex(t)
	rep, err := c.IngestBlocks(ctx, ix, 1, 30, ingest.Options{BatchTxs: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if fl := failures(t, ix); len(fl) != 0 || len(rep.Missing) != 0 {
		t.Errorf("a cancellation recorded failures: %v, missing %v", fl, rep.Missing)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	n1, _ := ix.Count(context.Background())
	rep, err = c.IngestBlocks(context.Background(), ix, 1, 30, ingest.Options{})
	if err != nil || !rep.Complete() {
		t.Fatalf("resume: %v\n%s", err, rep)
	}
	if n, _ := ix.Count(context.Background()); n != 30 {
		t.Errorf("%d transactions after the resume, want 30", n)
	}
	t.Logf("cancelled with %d of 30 transactions in; resume: %d already indexed, %d fetched", n1, rep.AlreadyIndexed, rep.Fetched)
}
