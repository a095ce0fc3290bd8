package fetch

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// BlockName is the index input name of a block fetched from a node:
// "rpc:block:N". Its marker says the block is ingested; its failures are
// what could not be fetched, decoded or analysed.
func BlockName(n uint64) string { return "rpc:block:" + strconv.FormatUint(n, 10) }

// ParseBlockName is the inverse of BlockName.
func ParseBlockName(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, "rpc:block:")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// ReceiptsBlockName is the input name of a block fetched in receipts
// mode: "rpc:receipts:block:N". A name of its own, so that --retry-failed
// fetches it again in receipts mode, and so that a traced ingest of the
// block later is not skipped as already done.
func ReceiptsBlockName(n uint64) string {
	return "rpc:receipts:block:" + strconv.FormatUint(n, 10)
}

// ParseReceiptsBlockName is the inverse of ReceiptsBlockName.
func ParseReceiptsBlockName(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, "rpc:receipts:block:")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// blockName is the input name of block n in the client's mode.
func (c *Client) blockName(n uint64) string {
	if c.opt.Mode == Receipts {
		return ReceiptsBlockName(n)
	}
	return BlockName(n)
}

// Missing is a block the node did not give: why, as the last attempt
// failed.
type Missing struct {
	Block uint64
	Err   string
}

// IngestReport is what IngestBlocks did: the ingest's summary, and what
// is missing from the index for the range.
type IngestReport struct {
	ingest.Summary
	From, To       uint64
	AlreadyIndexed int       // blocks not fetched: their marker says they are in the index
	Fetched        int       // blocks fetched and handed to the ingest
	Missing        []Missing // blocks that could not be fetched, in block order
	Failures       []index.Failure
}

// String says what was done and what is missing, for people.
func (r IngestReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "blocks %d..%d: %d fetched, %d already indexed, %d missing; %s", r.From, r.To, r.Fetched, r.AlreadyIndexed, len(r.Missing), r.Summary)
	for i, m := range r.Missing {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... %d more missing blocks", len(r.Missing)-10)
			break
		}
		fmt.Fprintf(&b, "\n  missing block %d: %s", m.Block, m.Err)
	}
	txs := 0
	for _, f := range r.Failures {
		if f.Stage != index.StageRead {
			if txs++; txs <= 10 {
				fmt.Fprintf(&b, "\n  failed: %s", f)
			}
		}
	}
	if txs > 10 {
		fmt.Fprintf(&b, "\n  ... %d more failures", txs-10)
	}
	if len(r.Missing) > 0 || txs > 0 {
		b.WriteString("\n  the failures are recorded in the index: run the same fetch again, or retry them (flowq ingest --retry-failed)")
	}
	return b.String()
}

// Complete reports whether every block of the range is in the index with
// no failure.
func (r IngestReport) Complete() bool { return len(r.Missing) == 0 && len(r.Failures) == 0 }

// IngestBlocks fetches the blocks from..to and ingests them into ix, each
// as the input BlockName(n) (ReceiptsBlockName(n) in receipts mode). A block whose marker says it is in the index
// is not fetched again (unless opt.Force). A block the node does not give
// after the retries (timeouts, HTTP errors, JSON-RPC errors, a malformed
// or truncated answer) is recorded in the index as a read failure of its
// input, with the method, the block and the node's error, and the others
// go on; a transaction that does not decode or analyse is recorded as a
// failure of its block, with its hash. Nothing of a block is half-stored:
// each transaction is written whole with its keys, and a block's marker
// only after its last transaction. RetryFailed fetches the failed blocks
// again. Cancellation stops fetch and ingest at once (the error is
// ctx.Err()); running the same range again resumes.
func (c *Client) IngestBlocks(ctx context.Context, ix *index.Index, from, to uint64, opt ingest.Options) (IngestReport, error) {
	return c.ingestBlocks(ctx, ix, from, to, opt, nil)
}

// ingestBlocks is IngestBlocks; keep (when not nil) sees each bundle
// fetched before it is ingested.
func (c *Client) ingestBlocks(ctx context.Context, ix *index.Index, from, to uint64, opt ingest.Options, keep func(n uint64, bundle []byte)) (IngestReport, error) {
	rep := IngestReport{From: from, To: to}
	if to < from {
		return rep, fmt.Errorf("fetch: empty block range %d..%d", from, to)
	}
	// The runs of blocks still to fetch.
	type run struct{ lo, hi uint64 }
	var runs []run
	for n := from; ; n++ {
		done := false
		if !opt.Force {
			// A traced block is done for every mode; a receipts one
			// only for receipts mode (a traced ingest replaces it).
			names := []string{BlockName(n)}
			if c.opt.Mode == Receipts {
				names = append(names, ReceiptsBlockName(n))
			}
			for _, name := range names {
				m, ok, err := ix.Input(name)
				if err != nil {
					return rep, err
				}
				done = done || ok && m.Schema == index.SchemaVersion
			}
		}
		if done {
			rep.AlreadyIndexed++
		} else if k := len(runs); k > 0 && runs[k-1].hi == n-1 {
			runs[k-1].hi = n
		} else {
			runs = append(runs, run{n, n})
		}
		if n == to {
			break
		}
	}
	onFailure := opt.OnFailure
	opt.OnFailure = func(f index.Failure) {
		rep.Failures = append(rep.Failures, f)
		if onFailure != nil {
			onFailure(f)
		}
	}
	g := ingest.NewIngester(ctx, ix, opt)
	var err error
	for _, r := range runs {
		err = c.BlocksEach(ctx, r.lo, r.hi, func(n uint64, b []byte, ferr error) error {
			name := c.blockName(n)
			if ferr != nil {
				rep.Missing = append(rep.Missing, Missing{Block: n, Err: strings.TrimSpace(ferr.Error())})
				return g.Add(ingest.Input{Name: name, Load: func(int) ([]byte, error) { return nil, ferr }})
			}
			rep.Fetched++
			if keep != nil {
				keep(n, b)
			}
			return g.Add(ingest.BundleInput(name, b))
		})
		if err != nil {
			break
		}
	}
	sum, cerr := g.Close()
	rep.Summary = sum
	sort.Slice(rep.Missing, func(i, j int) bool { return rep.Missing[i].Block < rep.Missing[j].Block })
	if err == nil {
		err = cerr
	}
	if err != nil && errors.Is(cerr, context.Canceled) && !errors.Is(err, context.Canceled) {
		err = cerr
	}
	return rep, err
}

// RetryFailed ingests again every input with recorded failures: blocks
// (BlockName) and transactions (TxName, Confirm's) fetched again from the
// node (each answer bounded by the
// client's MaxResponseBytes), files read again when they are regular files
// (ingest.ReadRegularFile, with the ingest's size limit). Their failures
// are replaced by those of the new attempt.
func (c *Client) RetryFailed(ctx context.Context, ix *index.Index, opt ingest.Options) (ingest.Summary, error) {
	var rc *Client // c in receipts mode, for blocks ingested in it
	return ingest.RetryFailed(ctx, ix, opt, func(name string, max int) ([]byte, error) {
		if n, ok := ParseBlockName(name); ok {
			return c.Block(ctx, n)
		}
		if n, ok := ParseReceiptsBlockName(name); ok {
			if c.opt.Mode == Receipts {
				return c.Block(ctx, n)
			}
			if rc == nil {
				o := c.opt
				o.Mode = Receipts
				rc = &Client{url: c.url, rpc: c.rpc, opt: o, scrub: c.scrub}
			}
			return rc.Block(ctx, n)
		}
		if h, ok := ParseTxName(name); ok {
			return c.Tx(ctx, h)
		}
		return ingest.ReadRegularFile(name, max)
	})
}
