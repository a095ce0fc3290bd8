package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// Screened keeps what a receipts-mode ingest fetched, so that confirming
// its suspects fetches only their traces: each transaction's receipt (as
// the node gave it in eth_getBlockReceipts) and its block's header (the
// eth_getBlockByNumber answer, its full transactions replaced by their
// hashes, as a trace mode fetches it). Blocks fetched by the eth_getLogs
// fallback have no receipts: their suspects are fetched whole, as without
// a Screened. Safe for concurrent use.
type Screened struct {
	mu      sync.Mutex
	txs     map[common.Hash]screenedTx
	headers map[uint64]json.RawMessage
	bytes   int64
}

type screenedTx struct {
	block   uint64
	receipt json.RawMessage
}

// NewScreened returns an empty Screened.
func NewScreened() *Screened {
	return &Screened{txs: map[common.Hash]screenedTx{}, headers: map[uint64]json.RawMessage{}}
}

// Len is the number of transactions kept.
func (s *Screened) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.txs)
}

// Bytes is the size of what is kept (receipts and headers).
func (s *Screened) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Add keeps block n's receipts-mode bundle ({"block", "receipts"}; a
// {"block", "logs"} bundle keeps nothing). The bundle was checked when it
// was fetched (checkReceiptsBlock).
func (s *Screened) Add(n uint64, bundle []byte) error {
	var b struct {
		Block    map[string]json.RawMessage `json:"block"`
		Receipts []json.RawMessage          `json:"receipts"`
	}
	if err := json.Unmarshal(bundle, &b); err != nil {
		return fmt.Errorf("fetch: keeping block %d's receipts: %w", n, err)
	}
	if b.Receipts == nil || b.Block == nil {
		return nil
	}
	var full []struct {
		Hash string `json:"hash"`
	}
	if raw, ok := b.Block["transactions"]; ok {
		if err := json.Unmarshal(raw, &full); err != nil {
			var hashes []string
			if json.Unmarshal(raw, &hashes) != nil {
				return fmt.Errorf("fetch: keeping block %d's receipts: transactions: %w", n, err)
			}
			full = full[:0]
			for _, h := range hashes {
				full = append(full, struct {
					Hash string `json:"hash"`
				}{h})
			}
		}
		hashes := make([]string, len(full))
		for i, t := range full {
			hashes[i] = t.Hash
		}
		hb, err := json.Marshal(hashes)
		if err != nil {
			return err
		}
		b.Block["transactions"] = hb
	}
	header, err := json.Marshal(b.Block)
	if err != nil {
		return err
	}
	keep := make(map[common.Hash]screenedTx, len(b.Receipts))
	size := int64(len(header))
	for i, r := range b.Receipts {
		var h struct {
			TransactionHash string `json:"transactionHash"`
		}
		if err := json.Unmarshal(r, &h); err != nil || len(strings.TrimPrefix(h.TransactionHash, "0x")) != 64 {
			return fmt.Errorf("fetch: keeping block %d's receipts: receipt %d has no transaction hash", n, i)
		}
		keep[common.HexToHash(h.TransactionHash)] = screenedTx{n, append(json.RawMessage(nil), r...)}
		size += int64(len(r))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.headers[n]; ok {
		return nil
	}
	s.headers[n] = header
	for h, t := range keep {
		s.txs[h] = t
	}
	s.bytes += size
	return nil
}

// get returns a transaction's receipt and its block's header.
func (s *Screened) get(h common.Hash) (receipt, header json.RawMessage, ok bool) {
	if s == nil {
		return nil, nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.txs[h]
	if !ok {
		return nil, nil, false
	}
	return t.receipt, s.headers[t.block], true
}

// Drop forgets the blocks below n and their transactions.
func (s *Screened) Drop(below uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, t := range s.txs {
		if t.block < below {
			s.bytes -= int64(len(t.receipt))
			delete(s.txs, h)
		}
	}
	for n, hd := range s.headers {
		if n < below {
			s.bytes -= int64(len(hd))
			delete(s.headers, n)
		}
	}
}

// Screen is IngestBlocks in receipts mode that also keeps, in s (when not
// nil), every block's receipts and header as fetched, for
// ConfirmScreened. Blocks already in the index are not fetched, so not
// kept: their suspects are fetched whole when confirmed.
func (c *Client) Screen(ctx context.Context, ix *index.Index, from, to uint64, opt ingest.Options, s *Screened) (IngestReport, error) {
	if c.opt.Mode != Receipts {
		return IngestReport{From: from, To: to}, errors.New("fetch: screening needs a client in receipts mode")
	}
	var keep func(uint64, []byte)
	if s != nil {
		// A bundle Add cannot read (it was checked when fetched, so
		// this does not happen) is not kept: its suspects are then
		// fetched whole.
		keep = func(n uint64, b []byte) { _ = s.Add(n, b) }
	}
	return c.ingestBlocks(ctx, ix, from, to, opt, keep)
}

// txsKnown is Txs for transactions whose receipt and block header the
// caller already has (Screened): it fetches only their traces
// (debug_traceTransaction, or trace_transaction in Parity mode), checks
// them and the given receipt and header as Txs does, and returns each
// bundle.
func (c *Client) txsKnown(ctx context.Context, hashes []common.Hash, receipts, headers []json.RawMessage) ([][]byte, error) {
	if c.opt.Mode == Receipts {
		return nil, errors.New("fetch: fetching traces needs a trace mode")
	}
	traces := make([]json.RawMessage, len(hashes))
	reqs := make([]Request, len(hashes))
	for i, h := range hashes {
		target := "tx " + h.Hex()
		if c.opt.Mode == Parity {
			reqs[i] = Request{Method: "trace_transaction", Args: []any{h}, Result: &traces[i], Target: target}
		} else {
			reqs[i] = Request{Method: "debug_traceTransaction", Args: []any{h, c.tracerConfig()}, Result: &traces[i], Target: target}
		}
	}
	if err := c.batches(ctx, reqs, 32*c.opt.BatchSize); err != nil {
		return nil, err
	}
	out := make([][]byte, len(hashes))
	for i, h := range hashes {
		if isNull(traces[i]) {
			return nil, &Error{Method: reqs[i].Method, Target: "tx " + h.Hex(), Attempts: 1, Err: errors.New("the node returned no trace")}
		}
		if err := c.checkTx(h.Hex(), receipts[i], headers[i], traces[i]); err != nil {
			return nil, err
		}
		list := make(json.RawMessage, 0, len(receipts[i])+2)
		list = append(append(append(list, '['), receipts[i]...), ']')
		out[i] = bundle(headers[i], list, traces[i])
	}
	return out, nil
}
