package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/rpc"
)

// Receipts mode: no trace. A block is its header with full transaction
// objects (eth_getBlockByNumber(n, true): the receipts-only analysis
// reads each transaction's own value there) and its receipts
// (eth_getBlockReceipts); a node that answers eth_getBlockReceipts with
// JSON-RPC "method not found" (-32601, or a message saying so) is asked
// eth_getLogs({fromBlock: n, toBlock: n}) instead, for that block and
// every later one: the bundle then has the block's logs and no receipts
// (statuses and gas unknown, so costs unknown). Batching, retries, the
// size and stall limits and the progress bar are the other modes'.

// receiptsBundle writes {"block":..,"<key>":..} from raw values.
func receiptsBundle(block json.RawMessage, key string, list json.RawMessage) []byte {
	out := make([]byte, 0, len(block)+len(list)+32)
	out = append(out, `{"block":`...)
	out = append(out, block...)
	out = append(out, `,"`...)
	out = append(out, key...)
	out = append(out, `":`...)
	out = append(out, list...)
	out = append(out, "}\n"...)
	return out
}

// methodMissing reports whether err is a node's answer that it does not
// serve the method.
func methodMissing(err error) bool {
	var re rpc.Error
	if !errors.As(err, &re) {
		return false
	}
	if re.ErrorCode() == -32601 {
		return true
	}
	m := strings.ToLower(re.Error())
	return strings.Contains(m, "method not found") || strings.Contains(m, "does not exist") ||
		strings.Contains(m, "not supported") || strings.Contains(m, "unsupported method")
}

// receiptsBatch fetches blocks lo..hi in receipts mode, in one batch.
func (c *Client) receiptsBatch(ctx context.Context, lo, hi uint64) ([][]byte, error) {
	k := int(hi - lo + 1)
	lists := make([]json.RawMessage, k)
	headers := make([]json.RawMessage, k)
	logsMode := c.noBlockReceipts.Load()
	reqs := make([]Request, 0, 2*k)
	for i := 0; i < k; i++ {
		n := lo + uint64(i)
		target := fmt.Sprintf("block %d", n)
		if logsMode {
			filter := map[string]any{"fromBlock": hexNum(n), "toBlock": hexNum(n)}
			reqs = append(reqs, Request{Method: "eth_getLogs", Args: []any{filter}, Result: &lists[i], Target: target})
		} else {
			reqs = append(reqs, Request{Method: "eth_getBlockReceipts", Args: []any{hexNum(n)}, Result: &lists[i], Target: target})
		}
		reqs = append(reqs, Request{Method: "eth_getBlockByNumber", Args: []any{hexNum(n), true}, Result: &headers[i], Target: target})
	}
	if err := c.Batch(ctx, reqs); err != nil {
		if !logsMode {
			for i := range reqs {
				if reqs[i].Method == "eth_getBlockReceipts" && reqs[i].Err != nil && methodMissing(reqs[i].Err) {
					c.noBlockReceipts.Store(true)
					return c.receiptsBatch(ctx, lo, hi)
				}
			}
		}
		return nil, err
	}
	out := make([][]byte, k)
	for i := 0; i < k; i++ {
		n := lo + uint64(i)
		if isNull(headers[i]) {
			return nil, &Error{Method: "eth_getBlockByNumber", Target: fmt.Sprintf("block %d", n), Attempts: 1, Err: errors.New("the node does not have this block")}
		}
		list, err := c.checkReceiptsBlock(n, headers[i], lists[i], logsMode)
		if err != nil {
			return nil, err
		}
		key := "receipts"
		if logsMode {
			key = "logs"
		}
		out[i] = receiptsBundle(headers[i], key, list)
	}
	return out, nil
}

// checkReceiptsBlock checks block n's header and its receipts (one per
// transaction, of the block) or logs (of the block and its transactions),
// as checkBlock does for the trace modes. Null receipts or logs are
// refused for a block with transactions, and saved as [] for one without.
func (c *Client) checkReceiptsBlock(n uint64, rawHeader, list json.RawMessage, logs bool) (json.RawMessage, error) {
	target := fmt.Sprintf("block %d", n)
	method, what := "eth_getBlockReceipts", "receipt"
	if logs {
		method, what = "eth_getLogs", "log"
	}
	fail := func(method string, err error) error {
		return &Error{Method: method, Target: target, Attempts: 1, Err: err}
	}
	h, err := parseHeader(rawHeader)
	if err != nil {
		return nil, fail("eth_getBlockByNumber", err)
	}
	if h.number != n {
		return nil, fail("eth_getBlockByNumber", fmt.Errorf("asked for block %d, the node answered block %d", n, h.number))
	}
	if isNull(list) {
		if !(h.hasTxs && len(h.txs) == 0) && !logs {
			return nil, fail(method, fmt.Errorf("the node returned no receipts (null) for a block of %s", txCount(h)))
		}
		if !(h.hasTxs && len(h.txs) == 0) {
			return nil, fail(method, fmt.Errorf("the node returned no logs (null) for a block of %s", txCount(h)))
		}
		list = json.RawMessage("[]")
	}
	var elems []ofBlock
	if err := json.Unmarshal(list, &elems); err != nil {
		return nil, fail(method, fmt.Errorf("the answer is not a list: %v", err))
	}
	inBlock := map[string]bool{}
	for _, t := range h.txs {
		inBlock[t] = true
	}
	seen := map[string]bool{}
	for i, o := range elems {
		if err := checkOf(o, h, fmt.Sprintf("%s %d", what, i)); err != nil {
			return nil, fail(method, err)
		}
		tx := strings.ToLower(o.TransactionHash)
		if tx == "" || !h.hasTxs {
			continue
		}
		if !inBlock[tx] {
			return nil, fail(method, fmt.Errorf("%s %d is of transaction %s, which is not in block %d", what, i, tx, n))
		}
		if !logs && seen[tx] {
			return nil, fail(method, fmt.Errorf("%s %d is a second one of transaction %s", what, i, tx))
		}
		seen[tx] = true
	}
	if !logs && h.hasTxs && len(elems) != len(h.txs) {
		return nil, fail(method, fmt.Errorf("%d %ss for a block of %s", len(elems), what, txCount(h)))
	}
	return list, nil
}
