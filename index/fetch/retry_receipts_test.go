package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/evmnode"
	"github.com/flowq/flowq/normalform"
)

// refusingBlock forwards to the node but answers HTTP 503 to every
// request asking about block 3 (0x3) while refuse is set, and counts the
// methods asked.
type refusingBlock struct {
	target string
	refuse atomic.Bool
	mu     sync.Mutex
	calls  map[string]int
}

func (p *refusingBlock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var batch []rpcReq
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		_ = json.Unmarshal(body, &batch)
	} else {
		var q rpcReq
		_ = json.Unmarshal(body, &q)
		batch = []rpcReq{q}
	}
	p.mu.Lock()
	for _, q := range batch {
		p.calls[q.Method]++
	}
	p.mu.Unlock()
	if p.refuse.Load() && bytes.Contains(body, []byte(`"0x3"`)) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *refusingBlock) traceCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for m, k := range p.calls {
		if len(m) > 6 && (m[:6] == "debug_" || m[:6] == "trace_") {
			n += k
		}
	}
	return n
}

// TestRetryFailedKeepsReceiptsMode: a receipts-mode ingest of blocks 1..4
// whose block 3 the node refuses records it under
// rpc:receipts:block:3; `ingest --retry-failed --rpc` (a client in the
// default trace mode) fetches it again in receipts mode (no trace method
// asked) and stores its transactions in mode receipts. A traced ingest
// of the range afterwards is not skipped as done: it fetches every block
// and replaces the receipts records with traced ones.
func TestRetryFailedKeepsReceiptsMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	node, err := evmnode.Start(evmnode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	mineEmitterCalls(t, node, 3, 2) // blocks 1 (deployment) to 4
	p := &refusingBlock{target: node.URL(), calls: map[string]int{}}
	p.refuse.Store(true)
	srv := httptest.NewServer(p)
	defer srv.Close()
	ctx := context.Background()
	ix := openIndex(t)
	o := Options{Mode: Receipts, Retries: 1, Backoff: time.Millisecond, Timeout: 30 * time.Second}
	rep, err := dial(t, srv.URL, o).IngestBlocks(ctx, ix, 1, 4, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Block != 3 {
		t.Fatalf("missing %+v, want block 3", rep.Missing)
	}
	fs := failures(t, ix)
	if len(fs) != 1 || fs[0].Source != ReceiptsBlockName(3) {
		t.Fatalf("failures %+v, want one of %s", fs, ReceiptsBlockName(3))
	}
	if p.traceCalls() != 0 {
		t.Fatalf("receipts ingest asked for traces: %v", p.calls)
	}

	p.refuse.Store(false)
	sum, err := dial(t, srv.URL, Options{Retries: 1, Backoff: time.Millisecond, Timeout: 30 * time.Second}).RetryFailed(ctx, ix, ingest.Options{})
	if err != nil || sum.Failed != 0 || sum.Stored != 2 {
		t.Fatalf("retry: %+v %v", sum, err)
	}
	if p.traceCalls() != 0 {
		t.Errorf("the retry of a receipts-mode block asked for traces: %v", p.calls)
	}
	if fs := failures(t, ix); len(fs) != 0 {
		t.Errorf("failures left: %+v", fs)
	}
	n := 0
	err = ix.Scan(ctx, func(r *index.Record) error {
		n++
		if r.Mode != normalform.ModeReceipts {
			t.Errorf("%s (block %d): mode %s, want receipts", r.Hash.Hex(), r.Loc.Block, r.Mode)
		}
		return nil
	})
	if err != nil || n != 7 {
		t.Fatalf("%d records (%v), want 7", n, err)
	}

	rep, err = dial(t, srv.URL, Options{Mode: Geth, Retries: 1, Backoff: time.Millisecond, Timeout: 30 * time.Second}).IngestBlocks(ctx, ix, 1, 4, ingest.Options{})
	if err != nil || rep.AlreadyIndexed != 0 || rep.Fetched != 4 {
		t.Fatalf("traced ingest after receipts: %+v %v (want every block fetched)", rep, err)
	}
	err = ix.Scan(ctx, func(r *index.Record) error {
		if r.Mode != normalform.ModeTraces {
			t.Errorf("%s: mode %s after the traced ingest", r.Hash.Hex(), r.Mode)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = dial(t, srv.URL, o).IngestBlocks(ctx, ix, 1, 4, ingest.Options{})
	if err != nil || rep.AlreadyIndexed != 4 {
		t.Fatalf("receipts ingest after the traced one: %+v %v (want every block already indexed)", rep, err)
	}
}
