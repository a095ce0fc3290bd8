// Package fetch reads transactions and blocks from an Ethereum node over
// JSON-RPC, with go-ethereum's rpc client, and returns them as bundles that
// normalform/trace.Decode reads as they are:
//
//	{"block": eth_getBlockByNumber(n, false),
//	 "receipts": [receipts...],
//	 "traces": trace result}
//
// Every value is kept exactly as the node returned it (raw JSON); only the
// flat mode for blocks joins the per-transaction lists of flatCallTracer
// into one list.
//
// Three trace sources (Mode):
//
//   - Geth: debug_traceTransaction / debug_traceBlockByNumber with
//     {"tracer":"callTracer","tracerConfig":{"withLog":true}};
//   - Flat: the same calls with geth's flatCallTracer, which emits the
//     Parity shape (the bundle's receipts carry the logs);
//   - Parity: trace_transaction / trace_block (Erigon, Reth, Nethermind,
//     OpenEthereum), with eth_getTransactionReceipt / eth_getBlockReceipts.
//
// Requests are batched (the calls of one block, or of many transactions,
// go in one JSON-RPC batch), run with bounded concurrency, and retried with
// exponential backoff when the failure is transient: a timeout, a dropped
// connection, a truncated answer, HTTP 408, 429 or 5xx, or a JSON-RPC
// "limit exceeded" error. A refused connection is retried only once the
// node has answered (it is restarting); a node that never answered is
// reported at once. Other failures are reported at once. An error names
// the method and the block or transaction (*Error), never the node URL's
// secrets (RedactURL).
//
// What the node sends is not trusted: an answer is read up to
// MaxResponseBytes and no further, one that stops arriving before its
// Content-Length fails within StallTimeout, one whose structure would
// multiply in go-ethereum's decoding (more messages than calls, an
// "error" member over MaxErrorBytes) is refused as it arrives (guard.go),
// and every block's answers are checked against what was asked
// (check.go): the header's number, the receipts' and traces' block and
// transactions. A block whose trace is null while it has transactions is
// refused, not saved empty.
//
// IngestBlocks (ingest.go) fetches a block range straight into the index,
// each block the input "rpc:block:N": blocks already in the index are not
// fetched again, a block the node does not give after the retries is
// recorded as a failure of its input (and the range goes on: BlocksEach),
// and the IngestReport says what is missing. RetryFailed fetches the failed
// blocks again.
package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform/trace"
)

// Mode selects the node API the traces come from.
type Mode string

const (
	// Geth is debug_trace* with callTracer and withLog: frames nest, logs
	// sit in their frames.
	Geth Mode = "geth"
	// Flat is debug_trace* with geth's flatCallTracer: the Parity shape,
	// logs from receipts.
	Flat Mode = "flat"
	// Parity is trace_transaction / trace_block, logs from receipts.
	Parity Mode = "parity"
	// Receipts is no trace at all: eth_getBlockReceipts (eth_getLogs by
	// block when the node lacks it) and the block with its transactions,
	// for receipts-only analysis (normalform.ModeReceipts).
	Receipts Mode = "receipts"
)

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case Geth, Flat, Parity, Receipts:
		return m, nil
	case "receipt", "logs":
		return Receipts, nil
	case "debug", "calltracer":
		return Geth, nil
	case "trace", "trace_block":
		return Parity, nil
	}
	return "", fmt.Errorf("unknown trace mode %q: use geth (debug_trace* callTracer), flat (debug_trace* flatCallTracer) parity (trace_*) or receipts (no trace: eth_getBlockReceipts or eth_getLogs)", s)
}

// Options configure a Client. Zero values take the defaults.
type Options struct {
	Mode Mode // default Geth
	// Concurrency is the number of requests in flight (default 4).
	Concurrency int
	// BatchSize is the number of blocks whose calls share one JSON-RPC batch
	// (default 1: a block's traces can be large, and nodes cap the size of
	// a batch response), and the number of transactions per batch in Txs
	// (default 16 times that).
	BatchSize int
	// Retries is how many times a transient failure is retried (default 5;
	// negative: none).
	Retries int
	// Backoff is the first retry's delay (default 250ms); it doubles on
	// every retry up to MaxBackoff (default 10s), with ±20% jitter.
	Backoff, MaxBackoff time.Duration
	// Timeout bounds one attempt of one request (default 2 minutes).
	Timeout time.Duration
	// MaxResponseBytes bounds one HTTP answer's body (default
	// trace.DefaultMaxBytes, 1 GiB, the ingest's input limit; negative:
	// no limit). An answer over it is an *AnswerTooLargeError, not
	// retried.
	MaxResponseBytes int
	// StallTimeout bounds how long an answer with a Content-Length may stop
	// arriving before the attempt fails as truncated and is retried
	// (default 15s, at most Timeout).
	StallTimeout time.Duration
	// TracerTimeout is passed to debug_trace* as the tracer's "timeout"
	// (geth's default is 5s, short for large blocks). Default "120s".
	TracerTimeout string
	// Progress, when set, receives a progress bar (Blocks) that redraws
	// itself with carriage returns.
	Progress io.Writer
	// HTTPClient replaces the default HTTP client.
	HTTPClient *http.Client
}

// The largest Concurrency and BatchSize a client takes: each request in
// flight is a goroutine and a connection, and a batch's requests are
// built before it is sent (a concurrency of a billion took the process).
const (
	MaxConcurrency = 256
	MaxBatchSize   = 1024
)

// Check reports the first of the options that is out of its range (a
// flag's value), naming it; Dial itself holds them to their bounds.
func (o *Options) Check() error {
	switch {
	case o.Concurrency < 0 || o.Concurrency > MaxConcurrency:
		return fmt.Errorf("concurrency %d: want 1 to %d requests in flight (0: the default, 4)", o.Concurrency, MaxConcurrency)
	case o.BatchSize < 0 || o.BatchSize > MaxBatchSize:
		return fmt.Errorf("batch %d: want 1 to %d blocks a request (0: the default, 1)", o.BatchSize, MaxBatchSize)
	}
	return nil
}

func (o *Options) defaults() {
	if o.Mode == "" {
		o.Mode = Geth
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	o.Concurrency = min(o.Concurrency, MaxConcurrency)
	if o.BatchSize <= 0 {
		o.BatchSize = 1
	}
	o.BatchSize = min(o.BatchSize, MaxBatchSize)
	if o.Retries == 0 {
		o.Retries = 5
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = 250 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.TracerTimeout == "" {
		o.TracerTimeout = "120s"
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = trace.DefaultMaxBytes
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = 15 * time.Second
	}
	o.StallTimeout = min(o.StallTimeout, o.Timeout)
}

// Client fetches bundles from one node.
type Client struct {
	url   string
	rpc   *rpc.Client
	opt   Options
	scrub *scrubber
	// noBlockReceipts: the node answered eth_getBlockReceipts with
	// "method not found"; receipts mode asks eth_getLogs instead.
	noBlockReceipts atomic.Bool
	// answered: the node has given an HTTP answer (any status) since the
	// client was made; down: a request then gave up on refused
	// connections, and no answer came since. A refused connection is
	// retried only when answered && !down.
	answered, down atomic.Bool
}

// Dial connects to a node's HTTP JSON-RPC endpoint (http or https);
// nothing is sent until the first request. WebSocket endpoints are
// refused.
func Dial(ctx context.Context, endpoint string, opt Options) (*Client, error) {
	opt.defaults()
	if _, err := ParseMode(string(opt.Mode)); err != nil {
		return nil, err
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("fetch: %s is not a node URL (http://host:port)", RedactURL(endpoint))
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "ws", "wss":
		// go-ethereum's client reads a WebSocket's messages itself, past
		// the transport that bounds an answer's size and pace and checks
		// its structure (guard.go): a node's 3 MB array of empty messages
		// takes hundreds of MB once decoded. Refused rather than read
		// unguarded.
		return nil, fmt.Errorf("fetch: %s is a WebSocket endpoint; flowq fetches over HTTP only, where each answer's size, pace and structure are checked as it arrives: give the node's HTTP endpoint (http://host:8545)", RedactURL(endpoint))
	default:
		return nil, fmt.Errorf("fetch: %s is not a node URL (http://host:port)", RedactURL(endpoint))
	}
	c := &Client{url: endpoint, opt: opt, scrub: newScrubber(endpoint)}
	hc := &http.Client{}
	if opt.HTTPClient != nil {
		*hc = *opt.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &guardTransport{base: base, max: int64(opt.MaxResponseBytes), stall: opt.StallTimeout,
		answered: func() { c.answered.Store(true); c.down.Store(false) }}
	rc, err := rpc.DialOptions(ctx, endpoint, rpc.WithHTTPClient(hc))
	if err != nil {
		return nil, fmt.Errorf("fetch: connecting to %s: %w", RedactURL(endpoint), c.scrub.err(err))
	}
	c.rpc = rc
	return c, nil
}

// URL is the node's URL as messages print it (RedactURL).
func (c *Client) URL() string { return c.scrub.redacted }

// Close closes the connection.
func (c *Client) Close() { c.rpc.Close() }

// Options returns the client's options, defaults filled in.
func (c *Client) Options() Options { return c.opt }

// Error is a request that failed: the method, what it was about (a block,
// a transaction), how many attempts were made, and the last failure.
type Error struct {
	Method   string
	Target   string // "block 123", "tx 0xabc...", or empty
	Attempts int
	Err      error
}

func (e *Error) Error() string {
	s := e.Method
	if e.Target != "" {
		s += " for " + e.Target
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(": gave up after %d attempts", e.Attempts)
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Request is one call of a batch: Result receives the decoded result
// (a *json.RawMessage keeps it as the node sent it), Err its failure.
type Request struct {
	Method string
	Args   []any
	Result any
	// Target names what the request is about in errors ("block 12").
	Target string
	Err    error
}

// Call makes one request, retrying transient failures.
func (c *Client) Call(ctx context.Context, result any, method string, args ...any) error {
	reqs := []Request{{Method: method, Args: args, Result: result}}
	if err := c.Batch(ctx, reqs); err != nil {
		return err
	}
	return reqs[0].Err
}

// Batch sends the requests as one JSON-RPC batch. Requests that fail
// transiently (and whole batches that do) are retried with backoff; each
// request's final failure is in its Err as an *Error. The returned error is
// the first of them, or the context's.
func (c *Client) Batch(ctx context.Context, reqs []Request) error {
	pending := make([]int, len(reqs))
	for i := range reqs {
		pending[i] = i
		reqs[i].Err = nil
	}
	attempts := 0
	for len(pending) > 0 {
		attempts++
		elems := make([]rpc.BatchElem, len(pending))
		for j, i := range pending {
			elems[j] = rpc.BatchElem{Method: reqs[i].Method, Args: reqs[i].Args, Result: reqs[i].Result}
		}
		// The transport bounds the answer's messages by the calls sent.
		actx, cancel := context.WithTimeout(withCalls(ctx, len(elems)), c.opt.Timeout)
		var err error
		if len(elems) == 1 {
			err = c.rpc.CallContext(actx, elems[0].Result, elems[0].Method, elems[0].Args...)
			if err != nil && !isWholeRequestError(err) {
				elems[0].Error, err = err, nil
			}
		} else {
			err = c.rpc.BatchCallContext(actx, elems)
		}
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var retry []int
		for j, i := range pending {
			e := elems[j].Error
			if err != nil {
				e = err
			}
			if e == nil {
				continue
			}
			refused := errors.Is(e, syscall.ECONNREFUSED)
			if transient(e) && attempts <= c.opt.Retries && (!refused || c.retryRefused()) {
				retry = append(retry, i)
				continue
			}
			e = c.scrub.err(e)
			if refused {
				if attempts == 1 {
					e = &hinted{e, "not retried: no node has answered at this address"}
				}
				c.down.Store(true)
			}
			reqs[i].Err = &Error{Method: reqs[i].Method, Target: reqs[i].Target, Attempts: attempts, Err: e}
		}
		pending = retry
		if len(pending) > 0 {
			if err := sleep(ctx, c.backoff(attempts)); err != nil {
				return err
			}
		}
	}
	for i := range reqs {
		if reqs[i].Err != nil {
			return reqs[i].Err
		}
	}
	return nil
}

// retryRefused reports whether a refused connection is worth retrying:
// the node has answered before (it is restarting), and no request has
// given up on refusals since.
func (c *Client) retryRefused() bool { return c.answered.Load() && !c.down.Load() }

// hinted is an error with a word on what was done about it.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() + " (" + h.hint + ")" }
func (h *hinted) Unwrap() error { return h.err }

// isWholeRequestError tells a failure of the HTTP exchange from a JSON-RPC
// error answer.
func isWholeRequestError(err error) bool {
	var re rpc.Error
	return !errors.As(err, &re)
}

// backoff is the delay before retry number n (1-based): Backoff·2^(n-1),
// capped at MaxBackoff, with ±20% jitter so that parallel workers spread
// out.
func (c *Client) backoff(n int) time.Duration {
	d := c.opt.Backoff
	for i := 1; i < n && d < c.opt.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.opt.MaxBackoff)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// transient reports whether a failure is worth retrying: timeouts, dropped
// or refused connections, truncated answers, HTTP 408/425/429/5xx, missing
// batch answers and JSON-RPC rate limiting. An answer over the size limit
// is not, nor one refused for its structure: the node would send it
// again.
func transient(err error) bool {
	var big *AnswerTooLargeError
	if errors.As(err, &big) {
		return false
	}
	var shape *AnswerShapeError
	if errors.As(err, &shape) {
		return false
	}
	var cut *AnswerCutError
	if errors.As(err, &cut) {
		return true
	}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusRequestTimeout || he.StatusCode == http.StatusTooEarly ||
			he.StatusCode == http.StatusTooManyRequests || he.StatusCode >= 500
	}
	var re rpc.Error
	if errors.As(err, &re) {
		if re.ErrorCode() == -32005 { // limit exceeded (EIP-1474)
			return true
		}
		m := strings.ToLower(re.Error())
		return strings.Contains(m, "rate limit") || strings.Contains(m, "too many requests") ||
			strings.Contains(m, "try again") || strings.Contains(m, "timeout") || strings.Contains(m, "timed out")
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, rpc.ErrMissingBatchResponse) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// --- what to ask for ------------------------------------------------------

func (c *Client) tracerConfig() map[string]any {
	switch c.opt.Mode {
	case Flat:
		return map[string]any{"tracer": "flatCallTracer", "timeout": c.opt.TracerTimeout}
	default:
		return map[string]any{"tracer": "callTracer", "tracerConfig": map[string]any{"withLog": true}, "timeout": c.opt.TracerTimeout}
	}
}

func hexNum(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }

// bundle writes {"block":..,"receipts":..,"traces":..} from raw values.
func bundle(block, receipts, traces json.RawMessage) []byte {
	out := make([]byte, 0, len(block)+len(receipts)+len(traces)+40)
	out = append(out, `{"block":`...)
	out = append(out, block...)
	out = append(out, `,"receipts":`...)
	out = append(out, receipts...)
	out = append(out, `,"traces":`...)
	out = append(out, traces...)
	out = append(out, "}\n"...)
	return out
}

func isNull(r json.RawMessage) bool {
	s := strings.TrimSpace(string(r))
	return s == "" || s == "null"
}

// --- transactions ---------------------------------------------------------

// Tx fetches one transaction's bundle: its trace, its receipt and its
// block's header (eth_getBlockByNumber without transaction bodies).
func (c *Client) Tx(ctx context.Context, hash common.Hash) ([]byte, error) {
	out, err := c.Txs(ctx, []common.Hash{hash})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Txs fetches the bundles of several transactions, in the order given.
func (c *Client) Txs(ctx context.Context, hashes []common.Hash) ([][]byte, error) {
	type txData struct {
		trace, receipt json.RawMessage
		block          uint64
	}
	data := make([]txData, len(hashes))
	var reqs []Request
	for i, h := range hashes {
		target := "tx " + h.Hex()
		switch c.opt.Mode {
		case Receipts:
			data[i].trace = json.RawMessage("[]") // none asked for
		case Parity:
			reqs = append(reqs, Request{Method: "trace_transaction", Args: []any{h}, Result: &data[i].trace, Target: target})
		default:
			reqs = append(reqs, Request{Method: "debug_traceTransaction", Args: []any{h, c.tracerConfig()}, Result: &data[i].trace, Target: target})
		}
		reqs = append(reqs, Request{Method: "eth_getTransactionReceipt", Args: []any{h}, Result: &data[i].receipt, Target: target})
	}
	if err := c.batches(ctx, reqs, 32*c.opt.BatchSize); err != nil {
		return nil, err
	}
	blocks := map[uint64]*json.RawMessage{}
	var blockReqs []Request
	for i, h := range hashes {
		if isNull(data[i].receipt) {
			return nil, &Error{Method: "eth_getTransactionReceipt", Target: "tx " + h.Hex(), Attempts: 1, Err: errors.New("the node does not know this transaction (no receipt): is it mined, and is this the right chain?")}
		}
		if isNull(data[i].trace) {
			return nil, &Error{Method: reqs[len(reqs)/len(hashes)*i].Method, Target: "tx " + h.Hex(), Attempts: 1, Err: errors.New("the node returned no trace")}
		}
		var r struct {
			BlockNumber string `json:"blockNumber"`
		}
		if err := json.Unmarshal(data[i].receipt, &r); err != nil {
			return nil, &Error{Method: "eth_getTransactionReceipt", Target: "tx " + h.Hex(), Attempts: 1, Err: err}
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(r.BlockNumber, "0x"), 16, 64)
		if err != nil {
			return nil, &Error{Method: "eth_getTransactionReceipt", Target: "tx " + h.Hex(), Attempts: 1, Err: fmt.Errorf("bad blockNumber %q", r.BlockNumber)}
		}
		data[i].block = n
		if _, ok := blocks[n]; !ok {
			raw := new(json.RawMessage)
			blocks[n] = raw
			blockReqs = append(blockReqs, Request{Method: "eth_getBlockByNumber", Args: []any{hexNum(n), c.opt.Mode == Receipts}, Result: raw, Target: fmt.Sprintf("block %d", n)})
		}
	}
	if err := c.batches(ctx, blockReqs, 32*c.opt.BatchSize); err != nil {
		return nil, err
	}
	out := make([][]byte, len(hashes))
	for i, h := range hashes {
		if err := c.checkTx(h.Hex(), data[i].receipt, *blocks[data[i].block], data[i].trace); err != nil {
			return nil, err
		}
		receipts := make(json.RawMessage, 0, len(data[i].receipt)+2)
		receipts = append(append(append(receipts, '['), data[i].receipt...), ']')
		if c.opt.Mode == Receipts {
			out[i] = receiptsBundle(*blocks[data[i].block], "receipts", receipts)
			continue
		}
		out[i] = bundle(*blocks[data[i].block], receipts, data[i].trace)
	}
	return out, nil
}

// batches sends reqs in batches of at most size, Concurrency at a time.
func (c *Client) batches(ctx context.Context, reqs []Request, size int) error {
	if len(reqs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, c.opt.Concurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for lo := 0; lo < len(reqs); lo += size {
		hi := min(lo+size, len(reqs))
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(part []Request) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := c.Batch(ctx, part); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}(reqs[lo:hi])
	}
	wg.Wait()
	return first
}

// --- blocks ---------------------------------------------------------------

// Block fetches one block's bundle: the traces of all its transactions, its
// receipts and its header.
func (c *Client) Block(ctx context.Context, n uint64) ([]byte, error) {
	var out []byte
	err := c.Blocks(ctx, n, n, func(_ uint64, b []byte) error { out = b; return nil })
	return out, err
}

// Blocks fetches the blocks from..to (inclusive), BatchSize blocks per
// JSON-RPC batch, Concurrency batches at a time, and hands each block's
// bundle to fn as it arrives (not in order; fn is never called
// concurrently). It stops at the first error, which names the method and
// the block.
func (c *Client) Blocks(ctx context.Context, from, to uint64, fn func(n uint64, bundle []byte) error) error {
	return c.blocks(ctx, from, to, false, func(n uint64, b []byte, _ error) error { return fn(n, b) })
}

// BlocksEach is Blocks going on past the blocks it cannot fetch: fn
// receives each block's bundle, or (bundle nil) the error that made the
// block's fetch give up after its retries, an *Error naming the method and
// the block. A batch of several blocks that fails is fetched again one
// block at a time, so that one bad block does not take its neighbours
// with it. BlocksEach stops when fn returns an error, which it returns, or
// when ctx is cancelled (ctx.Err(); a block cut short by the cancellation
// is not handed to fn).
func (c *Client) BlocksEach(ctx context.Context, from, to uint64, fn func(n uint64, bundle []byte, err error) error) error {
	return c.blocks(ctx, from, to, true, fn)
}

func (c *Client) blocks(ctx context.Context, from, to uint64, keepGoing bool, fn func(n uint64, bundle []byte, err error) error) error {
	if to < from {
		return fmt.Errorf("fetch: empty block range %d..%d", from, to)
	}
	total := to - from + 1
	bar := ingest.NewBar(c.opt.Progress, int(total), "blocks")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
			cancel()
		}
		mu.Unlock()
	}
	// hand gives fn the bundles (or the error) of blocks lo.. in order.
	hand := func(lo uint64, bundles [][]byte, errs []error) {
		mu.Lock()
		defer mu.Unlock()
		for i := range bundles {
			if first != nil {
				return
			}
			if err := fn(lo+uint64(i), bundles[i], errs[i]); err != nil {
				first = err
				cancel()
				return
			}
			bar.Add(1)
		}
	}
	jobs := make(chan uint64)
	for w := 0; w < c.opt.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := range jobs {
				// min(lo+BatchSize-1, to) without the sum: a range may
				// end at 2^64-1 (ParseRange takes 0xffffffffffffffff), past
				// which it wraps to a small number.
				hi := to
				if to-lo >= uint64(c.opt.BatchSize) {
					hi = lo + uint64(c.opt.BatchSize) - 1
				}
				bundles, err := c.blockBatch(ctx, lo, hi)
				if err == nil {
					hand(lo, bundles, make([]error, len(bundles)))
					continue
				}
				if !keepGoing || ctx.Err() != nil {
					fail(err)
					continue
				}
				for n := lo; ; n++ {
					var b [][]byte
					if hi > lo { // one block at a time
						b, err = c.blockBatch(ctx, n, n)
					}
					if ctx.Err() != nil {
						break
					}
					if err != nil {
						hand(n, [][]byte{nil}, []error{err})
					} else {
						hand(n, b, []error{nil})
					}
					if n == hi { // not n <= hi: n++ past 2^64-1 is 0
						break
					}
				}
			}
		}()
	}
	for lo := from; lo <= to; lo += uint64(c.opt.BatchSize) {
		select {
		case jobs <- lo:
		case <-ctx.Done():
		}
		if ctx.Err() != nil || lo+uint64(c.opt.BatchSize) < lo {
			break
		}
	}
	close(jobs)
	wg.Wait()
	bar.Done(first == nil)
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// blockBatch fetches blocks lo..hi in one JSON-RPC batch.
func (c *Client) blockBatch(ctx context.Context, lo, hi uint64) ([][]byte, error) {
	if c.opt.Mode == Receipts {
		return c.receiptsBatch(ctx, lo, hi)
	}
	k := int(hi - lo + 1)
	traces := make([]json.RawMessage, k)
	receipts := make([]json.RawMessage, k)
	headers := make([]json.RawMessage, k)
	reqs := make([]Request, 0, 3*k)
	for i := 0; i < k; i++ {
		n := lo + uint64(i)
		target := fmt.Sprintf("block %d", n)
		switch c.opt.Mode {
		case Parity:
			reqs = append(reqs, Request{Method: "trace_block", Args: []any{hexNum(n)}, Result: &traces[i], Target: target})
		default:
			reqs = append(reqs, Request{Method: "debug_traceBlockByNumber", Args: []any{hexNum(n), c.tracerConfig()}, Result: &traces[i], Target: target})
		}
		reqs = append(reqs,
			Request{Method: "eth_getBlockReceipts", Args: []any{hexNum(n)}, Result: &receipts[i], Target: target},
			Request{Method: "eth_getBlockByNumber", Args: []any{hexNum(n), false}, Result: &headers[i], Target: target})
	}
	if err := c.Batch(ctx, reqs); err != nil {
		return nil, err
	}
	out := make([][]byte, k)
	for i := 0; i < k; i++ {
		n := lo + uint64(i)
		if isNull(headers[i]) {
			return nil, &Error{Method: "eth_getBlockByNumber", Target: fmt.Sprintf("block %d", n), Attempts: 1, Err: errors.New("the node does not have this block")}
		}
		tr, rc, err := c.checkBlock(n, headers[i], receipts[i], traces[i])
		if err != nil {
			return nil, err
		}
		if c.opt.Mode == Flat {
			joined, err := joinFlat(tr)
			if err != nil {
				return nil, &Error{Method: "debug_traceBlockByNumber", Target: fmt.Sprintf("block %d", n), Attempts: 1, Err: err}
			}
			tr = joined
		}
		out[i] = bundle(headers[i], rc, tr)
	}
	return out, nil
}

// joinFlat turns debug_traceBlock's [{"txHash","result":[frames]}] from
// flatCallTracer into one list of frames. An entry with "error" is kept as
// it is, so that the decoder reports it.
func joinFlat(raw json.RawMessage) (json.RawMessage, error) {
	var entries []struct {
		TxHash json.RawMessage   `json:"txHash"`
		Result []json.RawMessage `json:"result"`
		Error  json.RawMessage   `json:"error"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("flatCallTracer block result: %w", err)
	}
	out := []byte{'['}
	first := true
	add := func(b []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, b...)
	}
	for _, e := range entries {
		if !isNull(e.Error) {
			b, _ := json.Marshal(map[string]json.RawMessage{"txHash": e.TxHash, "error": e.Error})
			add(b)
			continue
		}
		for _, f := range e.Result {
			add(f)
		}
	}
	return append(out, ']'), nil
}

// ParseRange reads "A..B" (inclusive), "A-B" or "A"; numbers are decimal
// or 0x-hex.
func ParseRange(s string) (from, to uint64, err error) {
	s = strings.TrimSpace(s)
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		a, b, ok = strings.Cut(s, "-")
	}
	if !ok {
		b = a
	}
	from, err1 := parseNum(a)
	to, err2 := parseNum(b)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("block range %q: want A..B (inclusive), e.g. 19000000..19000009", s)
	}
	if to < from {
		return 0, 0, fmt.Errorf("block range %q ends before it starts", s)
	}
	return from, to, nil
}

func parseNum(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	return strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
}
