package workload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Node is a JSON-RPC node over HTTP that serves SYNTHETIC blocks (Block's
// bundles) in the forms index/fetch asks for, so that a traced ingest and
// a receipts-only one with confirmation can be compared on the same
// blocks (issue 19):
//
//   - eth_getBlockByNumber(n, false): the bundle's header, with the
//     transactions' hashes;
//   - eth_getBlockByNumber(n, true): the same header with full transaction
//     objects, derived from each transaction's receipt (hash, index, from,
//     to, effectiveGasPrice) and its top callTracer frame (value, input,
//     gas); the fields a real node adds that nothing here has (nonce,
//     type, chainId, v, r, s) are filled with values of a real one's
//     length (r and s derived from the hash), so that byte counts are
//     close to a real node's;
//   - eth_getBlockReceipts(n): the bundle's receipts;
//   - debug_traceBlockByNumber(n, {"tracer":"callTracer",...}): the
//     bundle's traces ([{"txHash","result"}]);
//   - debug_traceTransaction(hash, {"tracer":"callTracer",...}): one
//     transaction's frame; eth_getTransactionReceipt(hash): its receipt.
//
// Other methods, and other tracers, are answered with a JSON-RPC error
// -32601 or -32602. Batches are served. Node counts, per method, the
// requests and the bytes of their answers (each answer element as it is
// sent), and the HTTP bodies in and out.
type Node struct {
	mu     sync.RWMutex
	blocks map[uint64]*nodeBlock
	txs    map[string]txLoc

	smu   sync.Mutex
	stats NodeStats
}

type nodeBlock struct {
	header, full json.RawMessage
	receipts     json.RawMessage
	receiptList  []json.RawMessage
	traces       json.RawMessage
	frames       []json.RawMessage
}

type txLoc struct {
	block uint64
	index int
}

// MethodStats counts one method's requests and answer bytes.
type MethodStats struct {
	Requests int64
	Bytes    int64 // bytes of the answer elements ({"jsonrpc","id","result"|"error"})
}

// NodeStats is what a Node served.
type NodeStats struct {
	HTTPRequests     int64
	BodyIn, BodyOut  int64 // HTTP request and response bodies
	Methods          map[string]MethodStats
	Errors           int64 // answers with a JSON-RPC error
	MethodsNotServed map[string]int64
}

// NewNode returns an empty node.
func NewNode() *Node {
	return &Node{blocks: map[uint64]*nodeBlock{}, txs: map[string]txLoc{}, stats: NodeStats{Methods: map[string]MethodStats{}, MethodsNotServed: map[string]int64{}}}
}

// Add makes a block available.
func (n *Node) Add(b Block) error {
	var bun struct {
		Block    map[string]json.RawMessage `json:"block"`
		Receipts []json.RawMessage          `json:"receipts"`
		Traces   []struct {
			TxHash string          `json:"txHash"`
			Result json.RawMessage `json:"result"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(b.Bundle, &bun); err != nil {
		return fmt.Errorf("workload node: block %d: %w", b.Number, err)
	}
	if len(bun.Receipts) != len(bun.Traces) {
		return fmt.Errorf("workload node: block %d: %d receipts, %d traces", b.Number, len(bun.Receipts), len(bun.Traces))
	}
	nb := &nodeBlock{receiptList: bun.Receipts}
	var err error
	if nb.header, err = json.Marshal(bun.Block); err != nil {
		return err
	}
	if nb.receipts, err = json.Marshal(bun.Receipts); err != nil {
		return err
	}
	var raw struct {
		Traces json.RawMessage `json:"traces"`
	}
	if err := json.Unmarshal(b.Bundle, &raw); err != nil {
		return err
	}
	nb.traces = raw.Traces
	full := make([]json.RawMessage, len(bun.Receipts))
	hashes := make([]string, len(bun.Receipts))
	for i, rr := range bun.Receipts {
		var r struct {
			TransactionHash   string  `json:"transactionHash"`
			TransactionIndex  string  `json:"transactionIndex"`
			BlockHash         string  `json:"blockHash"`
			BlockNumber       string  `json:"blockNumber"`
			From              string  `json:"from"`
			To                *string `json:"to"`
			EffectiveGasPrice string  `json:"effectiveGasPrice"`
		}
		if err := json.Unmarshal(rr, &r); err != nil {
			return fmt.Errorf("workload node: block %d receipt %d: %w", b.Number, i, err)
		}
		var top struct {
			Value string `json:"value"`
			Input string `json:"input"`
			Gas   string `json:"gas"`
		}
		if err := json.Unmarshal(bun.Traces[i].Result, &top); err != nil {
			return fmt.Errorf("workload node: block %d trace %d: %w", b.Number, i, err)
		}
		if !strings.EqualFold(bun.Traces[i].TxHash, r.TransactionHash) {
			return fmt.Errorf("workload node: block %d: trace %d is of %s, receipt %d of %s", b.Number, i, bun.Traces[i].TxHash, i, r.TransactionHash)
		}
		if top.Value == "" {
			top.Value = "0x0"
		}
		if top.Input == "" {
			top.Input = "0x"
		}
		sig := sha256.Sum256([]byte(r.TransactionHash))
		sig2 := sha256.Sum256(sig[:])
		tx := map[string]any{
			"hash": r.TransactionHash, "transactionIndex": r.TransactionIndex, "blockHash": r.BlockHash,
			"blockNumber": r.BlockNumber, "from": r.From, "to": r.To, "value": top.Value, "input": top.Input,
			"gas": top.Gas, "gasPrice": r.EffectiveGasPrice, "nonce": "0x0", "type": "0x0", "chainId": "0x1",
			"v": "0x25", "r": "0x" + hex.EncodeToString(sig[:]), "s": "0x" + hex.EncodeToString(sig2[:]),
		}
		if full[i], err = json.Marshal(tx); err != nil {
			return err
		}
		hashes[i] = strings.ToLower(r.TransactionHash)
		nb.frames = append(nb.frames, bun.Traces[i].Result)
	}
	hf := make(map[string]json.RawMessage, len(bun.Block))
	for k, v := range bun.Block {
		hf[k] = v
	}
	fj, _ := json.Marshal(full)
	hf["transactions"] = fj
	if nb.full, err = json.Marshal(hf); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blocks[b.Number] = nb
	for i, h := range hashes {
		n.txs[h] = txLoc{b.Number, i}
	}
	return nil
}

// Drop forgets the blocks below number (and their transactions).
func (n *Node) Drop(below uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k := range n.blocks {
		if k < below {
			delete(n.blocks, k)
		}
	}
	for h, l := range n.txs {
		if l.block < below {
			delete(n.txs, h)
		}
	}
}

// Stats returns a copy of the counts so far.
func (n *Node) Stats() NodeStats {
	n.smu.Lock()
	defer n.smu.Unlock()
	s := n.stats
	s.Methods = make(map[string]MethodStats, len(n.stats.Methods))
	for k, v := range n.stats.Methods {
		s.Methods[k] = v
	}
	s.MethodsNotServed = make(map[string]int64, len(n.stats.MethodsNotServed))
	for k, v := range n.stats.MethodsNotServed {
		s.MethodsNotServed[k] = v
	}
	return s
}

// Sub is s minus an earlier t.
func (s NodeStats) Sub(t NodeStats) NodeStats {
	out := NodeStats{HTTPRequests: s.HTTPRequests - t.HTTPRequests, BodyIn: s.BodyIn - t.BodyIn, BodyOut: s.BodyOut - t.BodyOut,
		Errors: s.Errors - t.Errors, Methods: map[string]MethodStats{}, MethodsNotServed: map[string]int64{}}
	for k, v := range s.Methods {
		w := t.Methods[k]
		if d := (MethodStats{v.Requests - w.Requests, v.Bytes - w.Bytes}); d.Requests != 0 {
			out.Methods[k] = d
		}
	}
	for k, v := range s.MethodsNotServed {
		if d := v - t.MethodsNotServed[k]; d != 0 {
			out.MethodsNotServed[k] = d
		}
	}
	return out
}

// Add is s plus t.
func (s NodeStats) Add(t NodeStats) NodeStats {
	out := NodeStats{HTTPRequests: s.HTTPRequests + t.HTTPRequests, BodyIn: s.BodyIn + t.BodyIn, BodyOut: s.BodyOut + t.BodyOut,
		Errors: s.Errors + t.Errors, Methods: map[string]MethodStats{}, MethodsNotServed: map[string]int64{}}
	for _, x := range []NodeStats{s, t} {
		for k, v := range x.Methods {
			m := out.Methods[k]
			out.Methods[k] = MethodStats{m.Requests + v.Requests, m.Bytes + v.Bytes}
		}
		for k, v := range x.MethodsNotServed {
			out.MethodsNotServed[k] += v
		}
	}
	return out
}

// Requests is the number of JSON-RPC calls (batch elements) served.
func (s NodeStats) Requests() int64 {
	var r int64
	for _, v := range s.Methods {
		r += v.Requests
	}
	return r
}

// MethodNames lists the methods served, sorted.
func (s NodeStats) MethodNames() []string {
	out := make([]string, 0, len(s.Methods))
	for k := range s.Methods {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type rpcReq struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcErr         `json:"error,omitempty"`
}

// ServeHTTP answers one JSON-RPC request or batch.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body = bytes.TrimSpace(body)
	batch := len(body) > 0 && body[0] == '['
	var reqs []rpcReq
	if batch {
		err = json.Unmarshal(body, &reqs)
	} else {
		reqs = make([]rpcReq, 1)
		err = json.Unmarshal(body, &reqs[0])
	}
	if err != nil {
		http.Error(w, "not JSON-RPC: "+err.Error(), http.StatusBadRequest)
		return
	}
	out := []byte{}
	if batch {
		out = append(out, '[')
	}
	type count struct {
		method string
		bytes  int
		failed bool
	}
	counts := make([]count, len(reqs))
	for i, q := range reqs {
		res, e := n.answer(q)
		resp := rpcResp{JSONRPC: "2.0", ID: q.ID, Result: res, Error: e}
		if e == nil && res == nil {
			resp.Result = json.RawMessage("null")
		}
		b, _ := json.Marshal(resp)
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
		counts[i] = count{q.Method, len(b), e != nil}
	}
	if batch {
		out = append(out, ']')
	}
	n.smu.Lock()
	n.stats.HTTPRequests++
	n.stats.BodyIn += int64(len(body))
	n.stats.BodyOut += int64(len(out))
	for _, c := range counts {
		m := n.stats.Methods[c.method]
		m.Requests++
		m.Bytes += int64(c.bytes)
		n.stats.Methods[c.method] = m
		if c.failed {
			n.stats.Errors++
		}
	}
	n.smu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
}

func (n *Node) answer(q rpcReq) (json.RawMessage, *rpcErr) {
	bad := func(f string, a ...any) *rpcErr { return &rpcErr{Code: -32602, Message: fmt.Sprintf(f, a...)} }
	block := func() (*nodeBlock, *rpcErr) {
		if len(q.Params) < 1 {
			return nil, bad("%s: no block number", q.Method)
		}
		var s string
		if json.Unmarshal(q.Params[0], &s) != nil || !strings.HasPrefix(s, "0x") {
			return nil, bad("%s: block number %s is not a hex quantity", q.Method, q.Params[0])
		}
		num, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return nil, bad("%s: block number %q: %v", q.Method, s, err)
		}
		n.mu.RLock()
		defer n.mu.RUnlock()
		return n.blocks[num], nil
	}
	callTracer := func(i int) *rpcErr {
		if len(q.Params) <= i {
			return bad("%s: no tracer configuration (this node serves callTracer only)", q.Method)
		}
		var c struct {
			Tracer string `json:"tracer"`
		}
		if json.Unmarshal(q.Params[i], &c) != nil || c.Tracer != "callTracer" {
			return bad("%s: tracer %s: this node serves callTracer only", q.Method, q.Params[i])
		}
		return nil
	}
	tx := func() (*nodeBlock, int, *rpcErr) {
		if len(q.Params) < 1 {
			return nil, 0, bad("%s: no transaction hash", q.Method)
		}
		var h string
		if json.Unmarshal(q.Params[0], &h) != nil {
			return nil, 0, bad("%s: transaction hash %s is not a string", q.Method, q.Params[0])
		}
		n.mu.RLock()
		defer n.mu.RUnlock()
		l, ok := n.txs[strings.ToLower(h)]
		if !ok {
			return nil, 0, nil
		}
		return n.blocks[l.block], l.index, nil
	}
	switch q.Method {
	case "eth_getBlockByNumber":
		b, e := block()
		if e != nil || b == nil {
			return nil, e
		}
		var full bool
		if len(q.Params) > 1 {
			json.Unmarshal(q.Params[1], &full)
		}
		if full {
			return b.full, nil
		}
		return b.header, nil
	case "eth_getBlockReceipts":
		b, e := block()
		if e != nil || b == nil {
			return nil, e
		}
		return b.receipts, nil
	case "debug_traceBlockByNumber":
		if e := callTracer(1); e != nil {
			return nil, e
		}
		b, e := block()
		if e != nil || b == nil {
			return nil, e
		}
		return b.traces, nil
	case "debug_traceTransaction":
		if e := callTracer(1); e != nil {
			return nil, e
		}
		b, i, e := tx()
		if e != nil || b == nil {
			return nil, e
		}
		return b.frames[i], nil
	case "eth_getTransactionReceipt":
		b, i, e := tx()
		if e != nil || b == nil {
			return nil, e
		}
		return b.receiptList[i], nil
	case "eth_chainId":
		return json.RawMessage(`"0x1"`), nil
	}
	n.smu.Lock()
	n.stats.MethodsNotServed[q.Method]++
	n.smu.Unlock()
	return nil, &rpcErr{Code: -32601, Message: "the method " + q.Method + " does not exist/is not available"}
}

// TxHashes lists the block's transaction hashes (lowercase), in order.
func (b Block) TxHashes() ([]string, error) {
	var bun struct {
		Block struct {
			Transactions []string `json:"transactions"`
		} `json:"block"`
	}
	if err := json.Unmarshal(b.Bundle, &bun); err != nil {
		return nil, fmt.Errorf("workload: block %d: %w", b.Number, err)
	}
	for i := range bun.Block.Transactions {
		bun.Block.Transactions[i] = strings.ToLower(bun.Block.Transactions[i])
	}
	return bun.Block.Transactions, nil
}
