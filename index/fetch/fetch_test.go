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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
)

// fakeNode is a JSON-RPC server on loopback with canned answers. Before
// answering, it consults fail, which may return an HTTP status to answer
// with instead (429, 503, ...), or a JSON-RPC error for one call.
type fakeNode struct {
	mu       sync.Mutex
	requests int                  // HTTP requests
	methods  []string             // every call, in order
	fail     func(n int) int      // HTTP status for the n-th request (1-based), 0 to answer
	callErr  func(m string) *rErr // per-call JSON-RPC error
	answer   func(m string, params []json.RawMessage) any
}

type rErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcReq struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

func (f *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests++
	n := f.requests
	f.mu.Unlock()
	if f.fail != nil {
		if code := f.fail(n); code != 0 {
			http.Error(w, http.StatusText(code), code)
			return
		}
	}
	var batch []rpcReq
	single := false
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		_ = json.Unmarshal(body, &batch)
	} else {
		var one rpcReq
		_ = json.Unmarshal(body, &one)
		batch, single = []rpcReq{one}, true
	}
	var out []map[string]any
	for _, q := range batch {
		f.mu.Lock()
		f.methods = append(f.methods, q.Method)
		f.mu.Unlock()
		resp := map[string]any{"jsonrpc": "2.0", "id": q.ID}
		if f.callErr != nil {
			if e := f.callErr(q.Method); e != nil {
				resp["error"] = e
				out = append(out, resp)
				continue
			}
		}
		resp["result"] = f.answer(q.Method, q.Params)
		out = append(out, resp)
	}
	w.Header().Set("Content-Type", "application/json")
	if single {
		_ = json.NewEncoder(w).Encode(out[0])
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

// blockAnswers answers like a node with blocks holding one transaction
// each.
func blockAnswers(m string, params []json.RawMessage) any {
	var num string
	if len(params) > 0 {
		_ = json.Unmarshal(params[0], &num)
	}
	h := fmt.Sprintf("0x%064s", strings.TrimPrefix(num, "0x"))
	switch m {
	case "debug_traceBlockByNumber":
		var cfg map[string]any
		_ = json.Unmarshal(params[1], &cfg)
		if cfg["tracer"] == "flatCallTracer" {
			return []any{map[string]any{"txHash": h, "result": []any{map[string]any{"type": "call", "traceAddress": []int{}, "transactionHash": h}}}}
		}
		return []any{map[string]any{"txHash": h, "result": map[string]any{"type": "CALL", "from": "0x01", "to": "0x02"}}}
	case "trace_block":
		return []any{map[string]any{"type": "call", "traceAddress": []int{}, "transactionHash": h}}
	case "eth_getBlockReceipts":
		return []any{map[string]any{"transactionHash": h, "status": "0x1"}}
	case "eth_getBlockByNumber":
		return map[string]any{"number": num, "parentHash": h, "transactions": []string{h}}
	case "debug_traceTransaction":
		return map[string]any{"type": "CALL", "from": "0x01", "to": "0x02"}
	case "eth_getTransactionReceipt":
		var hash string
		_ = json.Unmarshal(params[0], &hash)
		if strings.HasSuffix(hash, "dead") {
			return nil
		}
		return map[string]any{"transactionHash": hash, "blockNumber": "0x7", "status": "0x1"}
	}
	return nil
}

func serve(t *testing.T, f *fakeNode) string {
	t.Helper()
	if f.answer == nil {
		f.answer = blockAnswers
	}
	srv := httptest.NewServer(f) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL
}

func quick(mode Mode) Options {
	return Options{Mode: mode, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Retries: 4, Timeout: 5 * time.Second}
}

func dial(t *testing.T, url string, o Options) *Client {
	t.Helper()
	c, err := Dial(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRetriesTransientHTTP: 429, 429, 503, then success.
func TestRetriesTransientHTTP(t *testing.T) {
	f := &fakeNode{fail: func(n int) int {
		switch n {
		case 1, 2:
			return http.StatusTooManyRequests
		case 3:
			return http.StatusServiceUnavailable
		}
		return 0
	}}
	c := dial(t, serve(t, f), quick(Geth))
	b, err := c.Block(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if f.requests != 4 {
		t.Errorf("%d HTTP requests, want 4 (three refused, one answered)", f.requests)
	}
	var bundle struct {
		Block    json.RawMessage `json:"block"`
		Receipts []any           `json:"receipts"`
		Traces   []any           `json:"traces"`
	}
	if err := json.Unmarshal(b, &bundle); err != nil {
		t.Fatalf("bundle is not JSON: %v\n%s", err, b)
	}
	if len(bundle.Receipts) != 1 || len(bundle.Traces) != 1 || !bytes.Contains(bundle.Block, []byte(`"0x7"`)) {
		t.Errorf("bundle %s", b)
	}
}

// TestGivesUpNamingMethodAndBlock: a node that always answers 503.
func TestGivesUpNamingMethodAndBlock(t *testing.T) {
	f := &fakeNode{fail: func(int) int { return http.StatusServiceUnavailable }}
	c := dial(t, serve(t, f), quick(Geth))
	_, err := c.Block(context.Background(), 12345)
	if err == nil {
		t.Fatal("no error from a node that always fails")
	}
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %T %v is not a *fetch.Error", err, err)
	}
	msg := err.Error()
	for _, want := range []string{"debug_traceBlockByNumber", "block 12345", "gave up after 5 attempts", "503"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if f.requests != 5 {
		t.Errorf("%d requests, want 5 (1 + 4 retries)", f.requests)
	}
}

// TestPermanentErrorNotRetried: a JSON-RPC "method not found" is final.
func TestPermanentErrorNotRetried(t *testing.T) {
	f := &fakeNode{callErr: func(m string) *rErr {
		if m == "trace_block" {
			return &rErr{Code: -32601, Message: "the method trace_block does not exist/is not available"}
		}
		return nil
	}}
	c := dial(t, serve(t, f), quick(Parity))
	_, err := c.Block(context.Background(), 9)
	if err == nil || !strings.Contains(err.Error(), "trace_block for block 9") || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("error %v", err)
	}
	if f.requests != 1 {
		t.Errorf("%d requests, want 1", f.requests)
	}
}

// TestRateLimitedCallRetriedAlone: one call of a batch answers -32005
// (limit exceeded) once; only it is sent again.
func TestRateLimitedCallRetriedAlone(t *testing.T) {
	var mu sync.Mutex
	limited := 0
	f := &fakeNode{callErr: func(m string) *rErr {
		mu.Lock()
		defer mu.Unlock()
		if m == "eth_getBlockReceipts" && limited == 0 {
			limited++
			return &rErr{Code: -32005, Message: "limit exceeded"}
		}
		return nil
	}}
	c := dial(t, serve(t, f), quick(Geth))
	if _, err := c.Block(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	want := "debug_traceBlockByNumber eth_getBlockReceipts eth_getBlockByNumber eth_getBlockReceipts"
	if got := strings.Join(f.methods, " "); got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
}

func TestBlocksModesConcurrencyAndProgress(t *testing.T) {
	for _, mode := range []Mode{Geth, Flat, Parity} {
		f := &fakeNode{}
		o := quick(mode)
		o.Concurrency, o.BatchSize = 3, 2
		var bar bytes.Buffer
		o.Progress = &bar
		c := dial(t, serve(t, f), o)
		got := map[uint64]bool{}
		err := c.Blocks(context.Background(), 10, 19, func(n uint64, b []byte) error {
			if got[n] {
				t.Errorf("%s: block %d twice", mode, n)
			}
			got[n] = true
			var v map[string]json.RawMessage
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("%s: block %d: %v", mode, n, err)
			}
			if mode == Flat && !bytes.HasPrefix(v["traces"], []byte(`[{"traceAddress"`)) && !bytes.HasPrefix(v["traces"], []byte(`[{"transactionHash"`)) && !bytes.HasPrefix(v["traces"], []byte(`[{"type"`)) {
				t.Errorf("flat traces not joined: %s", v["traces"])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 {
			t.Errorf("%s: %d blocks", mode, len(got))
		}
		if f.requests != 5 {
			t.Errorf("%s: %d requests for 10 blocks in batches of 2", mode, f.requests)
		}
		if !strings.Contains(bar.String(), "10/10 blocks") {
			t.Errorf("progress %q", bar.String())
		}
		wantTrace := map[Mode]string{Geth: "debug_traceBlockByNumber", Flat: "debug_traceBlockByNumber", Parity: "trace_block"}[mode]
		if f.methods[0] != wantTrace && f.methods[3] != wantTrace {
			t.Errorf("%s: methods %v", mode, f.methods[:3])
		}
	}
}

func TestBlocksStopsOnCallbackError(t *testing.T) {
	f := &fakeNode{}
	c := dial(t, serve(t, f), quick(Geth))
	stop := errors.New("disk full")
	err := c.Blocks(context.Background(), 1, 50, func(n uint64, b []byte) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("err %v", err)
	}
}

func TestTxs(t *testing.T) {
	f := &fakeNode{answer: func(m string, params []json.RawMessage) any {
		if m == "eth_getBlockByNumber" { // block 7 holds the two transactions asked for
			return map[string]any{"number": "0x7", "parentHash": "0x00", "transactions": []string{common.HexToHash("0xaa").Hex(), common.HexToHash("0xbb").Hex()}}
		}
		return blockAnswers(m, params)
	}}
	c := dial(t, serve(t, f), quick(Geth))
	h1 := common.HexToHash("0xaa")
	h2 := common.HexToHash("0xbb")
	out, err := c.Txs(context.Background(), []common.Hash{h1, h2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !bytes.Contains(out[0], []byte(h1.Hex())) || !bytes.Contains(out[1], []byte(h2.Hex())) {
		t.Fatalf("bundles %s", out)
	}
	// Both share block 7: one header request.
	n := 0
	for _, m := range f.methods {
		if m == "eth_getBlockByNumber" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d header requests, want 1", n)
	}
	_, err = c.Tx(context.Background(), common.HexToHash("0xdead"))
	if err == nil || !strings.Contains(err.Error(), "eth_getTransactionReceipt") || !strings.Contains(err.Error(), "does not know this transaction") {
		t.Errorf("unknown tx: %v", err)
	}
}

func TestParseRange(t *testing.T) {
	for in, want := range map[string][2]uint64{"5..9": {5, 9}, "7": {7, 7}, "0x10..0x11": {16, 17}, "1_000..1_001": {1000, 1001}, "3-4": {3, 4}} {
		a, b, err := ParseRange(in)
		if err != nil || a != want[0] || b != want[1] {
			t.Errorf("%q: %d %d %v", in, a, b, err)
		}
	}
	for _, in := range []string{"", "9..5", "a..b", "1..2..3"} {
		if _, _, err := ParseRange(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestDialRejectsBadURL(t *testing.T) {
	if _, err := Dial(context.Background(), "not a url", Options{}); err == nil {
		t.Error("no error")
	}
	if _, err := Dial(context.Background(), "http://127.0.0.1:1", Options{Mode: "erigon"}); err == nil {
		t.Error("no error for an unknown mode")
	}
}

// TestDialRefusesWebSocket: a WebSocket endpoint (a real go-ethereum
// RPC server's, on loopback) is refused before anything is sent to it,
// with an error that says why and what to give instead; the same kind of
// server over HTTP is dialled and answers.
func TestDialRefusesWebSocket(t *testing.T) {
	srv := gethrpc.NewServer()
	t.Cleanup(srv.Stop)
	var hits atomic.Int32
	counted := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); h.ServeHTTP(w, r) })
	}
	ws := httptest.NewServer(counted(srv.WebsocketHandler([]string{"*"})))
	t.Cleanup(ws.Close)
	host := strings.TrimPrefix(ws.URL, "http://")
	for _, u := range []string{"ws://" + host, "WSS://" + host + "/rpc?key=KEY0123456789", "wss://" + host} {
		c, err := Dial(context.Background(), u, Options{})
		if err == nil {
			c.Close()
			t.Fatalf("%s: dialled", u)
		}
		msg := err.Error()
		if !strings.Contains(msg, "WebSocket endpoint") || !strings.Contains(msg, "http://host:8545") || strings.Contains(msg, "KEY0123456789") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the WebSocket server saw %d requests", n)
	}
	if err := srv.RegisterName("web3", web3{}); err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(counted(srv))
	t.Cleanup(h.Close)
	c, err := Dial(context.Background(), h.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var v string
	if err := c.rpc.CallContext(context.Background(), &v, "web3_clientVersion"); err != nil || v != "loopback" {
		t.Fatalf("over HTTP: %q, %v", v, err)
	}
}

type web3 struct{}

func (web3) ClientVersion() string { return "loopback" }

// TestConnectionRefusedFailsFast: nothing listens on the port, and
// nothing ever answered there: the refusal is reported at once, in one
// attempt, without the backoff, saying that it was not retried.
func TestConnectionRefusedFailsFast(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	o := quick(Geth)
	o.Backoff, o.MaxBackoff = time.Second, time.Second
	c := dial(t, url, o)
	start := time.Now()
	_, err := c.Tx(context.Background(), common.HexToHash("0x01"))
	var fe *Error
	if !errors.As(err, &fe) || fe.Attempts != 1 || !strings.Contains(err.Error(), "debug_traceTransaction for tx 0x0000") ||
		!strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "not retried: no node has answered at this address") {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("took %s: the refusal was retried (a backoff is 1s)", d)
	}
}

// TestConnectionRefusedRetriedOnceAnswered: a node that answered and then
// refuses connections is restarting: the refusal is retried, and reported
// after the retries; from then on the node counts as down and a refusal
// fails at once, until it answers again.
func TestConnectionRefusedRetriedOnceAnswered(t *testing.T) {
	srv := httptest.NewServer(&fakeNode{answer: blockAnswers})
	url := srv.URL
	o := quick(Geth)
	o.Retries = 2
	c := dial(t, url, o)
	if _, err := c.Block(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	_, err := c.Block(context.Background(), 2)
	var fe *Error
	if !errors.As(err, &fe) || fe.Attempts != 3 || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "not retried") {
		t.Fatalf("after an answer: %v, want 3 attempts (two retries) ending refused", err)
	}
	_, err = c.Block(context.Background(), 3)
	if !errors.As(err, &fe) || fe.Attempts != 1 || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("once down: %v, want one attempt", err)
	}
}
