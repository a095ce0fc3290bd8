package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/normalform/trace"
)

// FuzzNodeResponse is the reader of the node's answers end to end: a
// loopback server answers every request with the fuzzed bytes, and the
// client fetches a block (geth, flat or parity mode) or a transaction
// (whose second request, for the block header, gets the part of the input
// after "\n--\n").
// Nothing may panic or hang; a failure is an *Error naming the method;
// whatever is returned as a bundle must go through trace.Decode.
//
//	go test ./index/fetch -run '^$' -fuzz FuzzNodeResponse -fuzztime 60s
func FuzzNodeResponse(f *testing.F) {
	// Seeds: the answers a node gives, as a batch with the ids the client
	// uses (1, 2, 3 for a fresh client), and some broken ones.
	for _, mode := range []Mode{Geth, Flat, Parity} {
		var calls []string
		switch mode {
		case Parity:
			calls = []string{"trace_block", "eth_getBlockReceipts", "eth_getBlockByNumber"}
		default:
			calls = []string{"debug_traceBlockByNumber", "eth_getBlockReceipts", "eth_getBlockByNumber"}
		}
		cfg, _ := json.Marshal(map[string]any{"tracer": map[Mode]string{Geth: "callTracer", Flat: "flatCallTracer", Parity: ""}[mode]})
		var batch []map[string]any
		for i, m := range calls {
			batch = append(batch, map[string]any{"jsonrpc": "2.0", "id": i + 1, "result": blockAnswers(m, []json.RawMessage{json.RawMessage(`"0x7"`), cfg})})
		}
		b, _ := json.Marshal(batch)
		k := byte(map[Mode]int{Geth: 0, Flat: 1, Parity: 2}[mode])
		f.Add(b, k)
		f.Add(b[:len(b)/2], k)
		f.Add(b[:len(b)-1], k)
	}
	tx := []map[string]any{
		{"jsonrpc": "2.0", "id": 1, "result": blockAnswers("debug_traceTransaction", nil)},
		{"jsonrpc": "2.0", "id": 2, "result": map[string]any{"transactionHash": "0x01", "blockNumber": "0x7", "status": "0x1"}},
	}
	b, _ := json.Marshal(tx)
	f.Add(append(b, "\n--\n"+`{"jsonrpc":"2.0","id":3,"result":{"number":"0x7","parentHash":"0x00","transactions":["0x01"]}}`...), byte(3))
	f.Add(b, byte(3))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x7","parentHash":"0x00","transactions":[]}}`), byte(3))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}]`), byte(0))
	f.Add([]byte(`<html><body>502 Bad Gateway</body></html>`), byte(0))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"result":[{"txHash":"0x01","error":"execution timeout"}]},{"jsonrpc":"2.0","id":2,"result":null},{"jsonrpc":"2.0","id":3,"result":{"number":"0x7"}}]`), byte(1))

	// The n-th request of an exec is answered with the n-th part of the
	// input split at "\n--\n" (the last part again when there are fewer).
	var body atomic.Pointer[[][]byte]
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := *body.Load()
		i := min(int(served.Add(1))-1, len(parts)-1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(parts[i])
	}))
	defer srv.Close()
	f.Fuzz(func(t *testing.T, data []byte, sel byte) {
		parts := bytes.Split(data, []byte("\n--\n"))
		body.Store(&parts)
		served.Store(0)
		mode := []Mode{Geth, Flat, Parity, Geth}[sel%4]
		c, err := Dial(context.Background(), srv.URL, Options{Mode: mode, Retries: -1, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var bundles [][]byte
		if sel%4 == 3 {
			bundles, err = c.Txs(context.Background(), []common.Hash{{1}})
		} else {
			var out []byte
			out, err = c.Block(context.Background(), 7)
			bundles = [][]byte{out}
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v is not an *Error naming the method", err, err)
			}
			return
		}
		for _, b := range bundles {
			_ = trace.Decode(b, trace.Options{Source: "fuzz"})
		}
	})
}

// FuzzJoinFlat: flatCallTracer's block answer, joined into one list.
// Whatever it accepts must be a JSON array.
func FuzzJoinFlat(f *testing.F) {
	f.Add([]byte(`[{"txHash":"0x01","result":[{"type":"call","traceAddress":[]}]},{"txHash":"0x02","error":"boom"}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := joinFlat(raw)
		if err != nil {
			return
		}
		var v []json.RawMessage
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("joinFlat(%q) = %q, not a JSON array: %v", raw, out, err)
		}
	})
}
