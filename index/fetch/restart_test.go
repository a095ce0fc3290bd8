package fetch

import (
	"context"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/evmnode"
)

// restartingProxy stands between the fetcher and the in-process node, on
// a fixed loopback port. restart() is a node restart as the fetcher sees
// it: the listener and every open connection close, connections are
// refused for a while, then the same port answers again.
type restartingProxy struct {
	addr    string
	target  *url.URL
	mu      sync.Mutex
	srv     *http.Server
	served  atomic.Int32
	onServe func(n int, p *restartingProxy) bool // true: the request is dropped
	downs   atomic.Int32
}

func (p *restartingProxy) start(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 100 { // the port may take a moment to be free again
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("proxy: listen %s again: %v", p.addr, err)
		return
	}
	p.addr = ln.Addr().String()
	rp := httputil.NewSingleHostReverseProxy(p.target)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.onServe != nil && p.onServe(int(p.served.Add(1)), p) {
			drop(w)
			return
		}
		rp.ServeHTTP(w, r)
	})}
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
	go srv.Serve(ln)
}

func (p *restartingProxy) stop() {
	p.mu.Lock()
	srv := p.srv
	p.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// restart takes the proxy down for down, then up on the same port.
func (p *restartingProxy) restart(t *testing.T, down time.Duration) {
	p.downs.Add(1)
	p.stop()
	time.Sleep(down)
	p.start(t)
}

// mineTransfers mines blocks 1..n on the node, each with k payments
// between the funded keys.
func mineTransfers(t *testing.T, node *evmnode.Node, n, k int) {
	t.Helper()
	nonces := make([]uint64, evmnode.NumKeys)
	for b := 0; b < n; b++ {
		var txs []*types.Transaction
		for i := 0; i < k; i++ {
			from := (b + i) % evmnode.NumKeys
			to := crypto.PubkeyToAddress(evmnode.Key((from + 1) % evmnode.NumKeys).PublicKey)
			txs = append(txs, types.MustSignNewTx(evmnode.Key(from), node.Signer(), &types.DynamicFeeTx{
				ChainID: big.NewInt(evmnode.ChainID), Nonce: nonces[from], GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11),
				Gas: 21000, To: &to, Value: big.NewInt(int64(1000 + b*10 + i)),
			}))
			nonces[from]++
		}
		if _, err := node.Mine(context.Background(), txs...); err != nil {
			t.Fatal(err)
		}
	}
}

// records reads every record, latency zeroed.
func records(t *testing.T, ix *index.Index) []*index.Record {
	t.Helper()
	var out []*index.Record
	err := ix.Scan(context.Background(), func(r *index.Record) error {
		r.Latency = 0
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNodeRestartMidRange: the real in-process node (go-ethereum, geth
// tracers) behind a proxy that restarts in the middle of a 12-block range
// (connections dropped, then refused, then served again), and drops one
// more request later. The fetcher retries through it; the index equals
// the one ingested from the node directly, with no failure.
func TestNodeRestartMidRange(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	node, err := evmnode.Start(evmnode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	const blocks = 12
	mineTransfers(t, node, blocks, 3)
	ctx := context.Background()
	o := Options{Mode: Geth, Concurrency: 2, Retries: 10, Backoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Timeout: 30 * time.Second}

	direct := openIndex(t)
	c := dial(t, node.URL(), o)
	rep, err := c.IngestBlocks(ctx, direct, 1, blocks, ingest.Options{})
	if err != nil || !rep.Complete() || rep.Stored != 3*blocks {
		t.Fatalf("direct: %v\n%s", err, rep)
	}
	want := records(t, direct)

	target, _ := url.Parse(node.URL())
	p := &restartingProxy{addr: "127.0.0.1:0", target: target}
	var restarted sync.WaitGroup
	p.onServe = func(n int, p *restartingProxy) bool {
		switch n {
		case 4: // mid-range: the node goes away with this request in flight
			restarted.Add(1)
			go func() { defer restarted.Done(); p.restart(t, 300*time.Millisecond) }()
			return true
		case 9:
			return true
		}
		return false
	}
	p.start(t)
	defer p.stop()
	viaProxy := openIndex(t)
	c2 := dial(t, "http://"+p.addr, o)
	rep, err = c2.IngestBlocks(ctx, viaProxy, 1, blocks, ingest.Options{})
	restarted.Wait()
	if err != nil || !rep.Complete() {
		t.Fatalf("through the restarting proxy: %v\n%s", err, rep)
	}
	if p.downs.Load() != 1 || p.served.Load() < blocks+2 {
		t.Errorf("the proxy restarted %d times and served %d requests: the fault was not exercised", p.downs.Load(), p.served.Load())
	}
	if got := records(t, viaProxy); !reflect.DeepEqual(got, want) {
		t.Errorf("the index fetched through the restarts differs: %d records, want %d", len(got), len(want))
	}
	if err := viaProxy.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d blocks, %d transactions through a restart and a dropped request (%d requests to the proxy)", blocks, rep.Stored, p.served.Load())
}

// TestNodeDownThenRetried: the node is down for good while a range is
// fetched (every connection refused): each block is recorded as missing,
// with the method and the refusal; once the node is back, RetryFailed
// fetches them all and the index equals a direct ingest.
func TestNodeDownThenRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	node, err := evmnode.Start(evmnode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	mineTransfers(t, node, 4, 2)
	ctx := context.Background()
	o := Options{Mode: Flat, Concurrency: 2, Retries: 2, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Timeout: 30 * time.Second}
	direct := openIndex(t)
	if rep, err := dial(t, node.URL(), o).IngestBlocks(ctx, direct, 1, 4, ingest.Options{}); err != nil || !rep.Complete() {
		t.Fatalf("direct: %v\n%s", err, rep)
	}

	target, _ := url.Parse(node.URL())
	p := &restartingProxy{addr: "127.0.0.1:0", target: target}
	p.start(t)
	addr := p.addr
	p.stop() // down: nothing listens on addr
	ix := openIndex(t)
	c := dial(t, "http://"+addr, o)
	rep, err := c.IngestBlocks(ctx, ix, 1, 4, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Missing) != 4 || rep.Stored != 0 {
		t.Fatalf("node down: %d missing, %d stored\n%s", len(rep.Missing), rep.Stored, rep)
	}
	for _, m := range rep.Missing {
		if !contains(m.Err, "refused", "not retried", "debug_traceBlockByNumber") {
			t.Errorf("block %d: %q", m.Block, m.Err)
		}
	}
	t.Logf("report with the node down:\n%s", rep)
	p.start(t) // back, on the same port
	defer p.stop()
	sum, err := c.RetryFailed(ctx, ix, ingest.Options{})
	if err != nil || sum.Failed != 0 || sum.Stored != 8 {
		t.Fatalf("retry: %v %s", err, sum)
	}
	if !reflect.DeepEqual(records(t, ix), records(t, direct)) {
		t.Error("the retried index differs from the direct one")
	}
}

func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
