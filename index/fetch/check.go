package fetch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Checking a node's answers against what was asked. A node behind a
// load balancer, a lagging replica or a buggy proxy can answer another
// block or another transaction than the one asked for; saved as it came,
// such an answer becomes a bundle filed under the wrong number. Every
// block's header must carry the number asked for; its receipts and traces
// must be of that block (number and hash, where they say) and of its
// transactions (by hash, one each, where the header lists them). A
// transaction's receipt must be of that transaction, and its block's
// header of the receipt's block. A mismatch is an *Error naming the
// method and what was asked; it is not retried (the fetch of a range goes
// on and records the block as missing).

// header is what the checks read of eth_getBlockByNumber's answer.
type header struct {
	number uint64
	hash   string   // lowercase, "" when absent
	txs    []string // lowercase hashes; nil when the header has no list
	hasTxs bool
}

func parseHeader(raw json.RawMessage) (header, error) {
	var h struct {
		Number       json.RawMessage   `json:"number"`
		Hash         string            `json:"hash"`
		Transactions []json.RawMessage `json:"transactions"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return header{}, fmt.Errorf("the block header is not a JSON object: %v", err)
	}
	n, ok := quantity(h.Number)
	if !ok {
		return header{}, fmt.Errorf("the block header has no block number (%s)", short(h.Number))
	}
	out := header{number: n, hash: strings.ToLower(h.Hash), hasTxs: h.Transactions != nil}
	for _, t := range h.Transactions {
		var s string
		if json.Unmarshal(t, &s) != nil { // a full transaction object
			var o struct {
				Hash string `json:"hash"`
			}
			_ = json.Unmarshal(t, &o)
			s = o.Hash
		}
		out.txs = append(out.txs, strings.ToLower(s))
	}
	return out, nil
}

// quantity reads a block number: a JSON-RPC quantity ("0x1f") or a plain
// JSON number (Parity's trace_block).
func quantity(raw json.RawMessage) (uint64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
			n, err := strconv.ParseUint(h, 16, 64)
			return n, err == nil
		}
		n, err := strconv.ParseUint(s, 10, 64)
		return n, err == nil
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return n, err == nil
}

func short(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if s == "" {
		return "missing"
	}
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// ofBlock is what a receipt or a Parity trace says of its block and
// transaction.
type ofBlock struct {
	BlockNumber     json.RawMessage `json:"blockNumber"`
	BlockHash       string          `json:"blockHash"`
	TransactionHash string          `json:"transactionHash"`
	TxHash          string          `json:"txHash"` // debug_traceBlock entries
}

// checkOf checks one element's block number and hash against h; what is
// the element ("receipt 3", "trace 7") for messages.
func checkOf(o ofBlock, h header, what string) error {
	if n, ok := quantity(o.BlockNumber); ok && n != h.number {
		return fmt.Errorf("%s is of block %d, not of block %d as asked", what, n, h.number)
	}
	if o.BlockHash != "" && h.hash != "" && !strings.EqualFold(o.BlockHash, h.hash) {
		return fmt.Errorf("%s is of block hash %s, the header's hash is %s (a reorganisation between the calls?)", what, o.BlockHash, h.hash)
	}
	return nil
}

// checkBlock checks block n's answers: the header's number, then the
// receipts' and traces' block and transactions. traces is the trace
// method's raw answer (before joinFlat). A null trace or null receipts
// for a block with transactions (or whose header does not list them) is
// refused: saved as an empty list, it would be a bundle that decodes to
// nothing, or to transactions without costs. It returns the traces and
// receipts to save (null made [] for a block without transactions).
func (c *Client) checkBlock(n uint64, rawHeader, receipts, traces json.RawMessage) (json.RawMessage, json.RawMessage, error) {
	target := fmt.Sprintf("block %d", n)
	traceMethod := "debug_traceBlockByNumber"
	if c.opt.Mode == Parity {
		traceMethod = "trace_block"
	}
	fail := func(method string, err error) error {
		return &Error{Method: method, Target: target, Attempts: 1, Err: err}
	}
	h, err := parseHeader(rawHeader)
	if err != nil {
		return nil, nil, fail("eth_getBlockByNumber", err)
	}
	if h.number != n {
		return nil, nil, fail("eth_getBlockByNumber", fmt.Errorf("asked for block %d, the node answered block %d", n, h.number))
	}
	empty := h.hasTxs && len(h.txs) == 0
	if isNull(traces) {
		if !empty {
			return nil, nil, fail(traceMethod, fmt.Errorf("the node returned no trace (null) for a block of %s", txCount(h)))
		}
		traces = json.RawMessage("[]")
	}
	if isNull(receipts) {
		if !empty {
			return nil, nil, fail("eth_getBlockReceipts", fmt.Errorf("the node returned no receipts (null) for a block of %s", txCount(h)))
		}
		receipts = json.RawMessage("[]")
	}
	inBlock := map[string]bool{}
	for _, t := range h.txs {
		inBlock[t] = true
	}
	// each checks a list's elements, one per transaction when perTx.
	each := func(method, what string, raw json.RawMessage, perTx bool) error {
		var list []ofBlock
		if err := json.Unmarshal(raw, &list); err != nil {
			return fail(method, fmt.Errorf("the answer is not a list: %v", err))
		}
		seen := map[string]bool{}
		for i, o := range list {
			if err := checkOf(o, h, fmt.Sprintf("%s %d", what, i)); err != nil {
				return fail(method, err)
			}
			tx := strings.ToLower(o.TransactionHash + o.TxHash)
			if tx == "" || !h.hasTxs {
				continue
			}
			if !inBlock[tx] {
				return fail(method, fmt.Errorf("%s %d is of transaction %s, which is not in block %d", what, i, tx, n))
			}
			if perTx && seen[tx] {
				return fail(method, fmt.Errorf("%s %d is a second one of transaction %s", what, i, tx))
			}
			seen[tx] = true
		}
		if perTx && h.hasTxs && len(list) != len(h.txs) {
			return fail(method, fmt.Errorf("%d %ss for a block of %s", len(list), what, txCount(h)))
		}
		return nil
	}
	if err := each("eth_getBlockReceipts", "receipt", receipts, true); err != nil {
		return nil, nil, err
	}
	// debug_traceBlock: one entry per transaction; trace_block: frames,
	// many per transaction, and reward entries.
	if err := each(traceMethod, "trace", traces, c.opt.Mode != Parity); err != nil {
		return nil, nil, err
	}
	return traces, receipts, nil
}

func txCount(h header) string {
	if !h.hasTxs {
		return "unlisted transactions"
	}
	if len(h.txs) == 1 {
		return "1 transaction"
	}
	return fmt.Sprintf("%d transactions", len(h.txs))
}

// checkTx checks a transaction's answers: its receipt is of that
// transaction, the header is of the receipt's block (number and hash)
// and lists the transaction, and Parity frames are of the transaction.
func (c *Client) checkTx(hash string, receipt, rawHeader, traces json.RawMessage) error {
	hash = strings.ToLower(hash)
	target := "tx " + hash
	fail := func(method string, err error) error {
		return &Error{Method: method, Target: target, Attempts: 1, Err: err}
	}
	var r ofBlock
	if err := json.Unmarshal(receipt, &r); err != nil {
		return fail("eth_getTransactionReceipt", fmt.Errorf("the receipt is not a JSON object: %v", err))
	}
	if r.TransactionHash != "" && !strings.EqualFold(r.TransactionHash, hash) {
		return fail("eth_getTransactionReceipt", fmt.Errorf("asked for tx %s, the node answered the receipt of tx %s", hash, strings.ToLower(r.TransactionHash)))
	}
	if isNull(rawHeader) {
		return fail("eth_getBlockByNumber", errors.New("the node does not have the receipt's block"))
	}
	h, err := parseHeader(rawHeader)
	if err != nil {
		return fail("eth_getBlockByNumber", err)
	}
	if err := checkOf(r, h, "the receipt"); err != nil {
		return fail("eth_getBlockByNumber", err)
	}
	if h.hasTxs && !slices.Contains(h.txs, hash) {
		return fail("eth_getBlockByNumber", fmt.Errorf("block %d does not list the transaction", h.number))
	}
	if c.opt.Mode == Parity {
		var frames []ofBlock
		if err := json.Unmarshal(traces, &frames); err != nil {
			return fail("trace_transaction", fmt.Errorf("the answer is not a list: %v", err))
		}
		for i, f := range frames {
			if f.TransactionHash != "" && !strings.EqualFold(f.TransactionHash, hash) {
				return fail("trace_transaction", fmt.Errorf("trace %d is of tx %s", i, strings.ToLower(f.TransactionHash)))
			}
			if err := checkOf(f, h, fmt.Sprintf("trace %d", i)); err != nil {
				return fail("trace_transaction", err)
			}
		}
	}
	return nil
}
