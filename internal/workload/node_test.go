package workload

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestNodeAnswers asks a loopback Node for a synthetic block in each form
// and checks the answers against the bundle, the refusal of other tracers
// and methods, and the counts.
func TestNodeAnswers(t *testing.T) {
	g, err := New(scenarios(t), Options{Seed: 3, BlockTxs: 4})
	if err != nil {
		t.Fatal(err)
	}
	b := g.Block()
	n := NewNode()
	if err := n.Add(b); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(n)
	defer srv.Close()
	hashes, err := b.TxHashes()
	if err != nil || len(hashes) != 4 {
		t.Fatalf("hashes %v, %v", hashes, err)
	}
	call := func(body string) []map[string]json.RawMessage {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out []map[string]json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	num := `"0x` + strconv.FormatUint(b.Number, 16) + `"`
	out := call(`[{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":[` + num + `,true]},` +
		`{"jsonrpc":"2.0","id":2,"method":"debug_traceTransaction","params":["` + hashes[2] + `",{"tracer":"callTracer"}]},` +
		`{"jsonrpc":"2.0","id":3,"method":"debug_traceBlockByNumber","params":[` + num + `,{"tracer":"prestateTracer"}]},` +
		`{"jsonrpc":"2.0","id":4,"method":"eth_sendRawTransaction","params":["0x00"]},` +
		`{"jsonrpc":"2.0","id":5,"method":"eth_getTransactionReceipt","params":["0x` + strings.Repeat("ab", 32) + `"]}]`)
	if len(out) != 5 {
		t.Fatalf("%d answers to 5 calls", len(out))
	}
	var blk struct {
		Transactions []struct {
			Hash, From, Value string
		} `json:"transactions"`
	}
	if err := json.Unmarshal(out[0]["result"], &blk); err != nil || len(blk.Transactions) != 4 || blk.Transactions[1].Hash != hashes[1] || blk.Transactions[1].From == "" || blk.Transactions[1].Value == "" {
		t.Fatalf("full block: %s (%v)", out[0]["result"], err)
	}
	var frame struct{ Type string }
	if err := json.Unmarshal(out[1]["result"], &frame); err != nil || frame.Type == "" {
		t.Fatalf("debug_traceTransaction: %s", out[1]["result"])
	}
	if !strings.Contains(string(out[2]["error"]), "callTracer only") || !strings.Contains(string(out[3]["error"]), "-32601") {
		t.Fatalf("other tracer: %s; other method: %s", out[2]["error"], out[3]["error"])
	}
	if string(out[4]["result"]) != "null" {
		t.Fatalf("unknown transaction's receipt: %s, want null", out[4]["result"])
	}
	s := n.Stats()
	if s.HTTPRequests != 1 || s.Requests() != 5 || s.Errors != 2 || s.MethodsNotServed["eth_sendRawTransaction"] != 1 || s.Methods["debug_traceTransaction"].Bytes != int64(len(`{"jsonrpc":"2.0","id":2,"result":}`)+len(out[1]["result"])) {
		t.Fatalf("stats %+v", s)
	}
	n.Drop(b.Number + 1)
	if out := call(`[{"jsonrpc":"2.0","id":1,"method":"eth_getBlockReceipts","params":[` + num + `]}]`); string(out[0]["result"]) != "null" {
		t.Fatalf("a dropped block: %s", out[0]["result"])
	}
}
