package lake

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// Source is one input: a bundle file, a block fetched from a node. Load
// reads it, stopping past max bytes when max > 0.
type Source struct {
	Name string
	Load func(max int) ([]byte, error)
}

// Failure is an input or a transaction that gave no row.
type Failure struct {
	Source string
	Msg    string
}

func (f Failure) String() string { return f.Source + ": " + f.Msg }

// IngestOptions configure Ingest. Zero values take the defaults.
type IngestOptions struct {
	Config  *normalform.Config // nil: Ethereum's defaults
	Workers int                // decoding and analysing goroutines (default: the CPUs)
	Shard   Shard              // the ranges this worker writes (zero: all)
	Write   WriteOptions
	// Limits of the decoder, as trace.Options.
	MaxBytes, MaxDepth, MaxTransfers int
	// OnFailure, when set, is called for each failure (from one goroutine
	// at a time).
	OnFailure func(Failure)
	// Only, when set, keeps the rows of these ranges only (an RPC range's
	// edges); other rows are counted as Outside.
	Only func(Range) bool
}

// Summary is what an ingest did.
type Summary struct {
	Sources    int      // inputs read
	Rows       int      // rows written
	Duplicates int      // rows of a transaction hash a range already had (Dedupe)
	Outside    int      // rows of ranges other workers (shards) write
	Unplaced   int      // transactions without a hash or a block number: not in a lake
	Failed     int      // failures (inputs, transactions)
	Files      []string // the range files written, in order
}

func (s Summary) String() string {
	return fmt.Sprintf("%d transactions written in %d range files, %d repeated transactions dropped, %d of other shards' ranges skipped, %d without a block or hash, %d failures; %d inputs",
		s.Rows, len(s.Files), s.Duplicates, s.Outside, s.Unplaced, s.Failed, s.Sources)
}

// Ingest decodes and analyses the sources on all cores and writes the
// range files of the shard's ranges they hold (each range whole, from
// the rows of these sources only: a range's file is replaced by what this
// run found for it). Transactions of other shards' ranges are dropped
// after analysis.
func Ingest(ctx context.Context, l Layout, srcs []Source, opt IngestOptions) (Summary, error) {
	var sum Summary
	if err := l.Check(); err != nil {
		return sum, err
	}
	rows, err := Analyse(ctx, l, srcs, opt, &sum)
	if err != nil {
		return sum, err
	}
	return sum, WriteRows(ctx, l, rows, opt.Write, &sum)
}

// WriteRows writes rows grouped by range, ranges in order.
func WriteRows(ctx context.Context, l Layout, rows map[Range][]Row, wo WriteOptions, sum *Summary) error {
	keys := make([]Range, 0, len(rows))
	for r := range rows {
		keys = append(keys, r)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].First < keys[j].First })
	for _, r := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, written, err := WriteRange(l, r, rows[r], wo)
		if err != nil {
			return err
		}
		sum.Rows += len(written)
		sum.Duplicates += len(rows[r]) - len(written)
		sum.Files = append(sum.Files, p)
	}
	return nil
}

// Analyse decodes and analyses the sources and returns the rows of the
// shard's ranges, by range.
func Analyse(ctx context.Context, l Layout, srcs []Source, opt IngestOptions, sum *Summary) (map[Range][]Row, error) {
	if opt.Config == nil {
		opt.Config = normalform.DefaultConfig()
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	type out struct {
		row  Row
		ok   bool
		fail *Failure
	}
	jobs := make(chan Source)
	results := make(chan out, 64)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				emit := func(o out) bool {
					select {
					case results <- o:
						return true
					case <-ctx.Done():
						return false
					}
				}
				data, err := s.Load(opt.MaxBytes)
				if err != nil {
					emit(out{fail: &Failure{Source: s.Name, Msg: "read: " + err.Error()}})
					continue
				}
				res := decode(data, trace.Options{Config: opt.Config, Source: s.Name,
					MaxBytes: opt.MaxBytes, MaxDepth: opt.MaxDepth, MaxTransfers: opt.MaxTransfers})
				for _, e := range res.Errors {
					if !emit(out{fail: &Failure{Source: s.Name, Msg: "decode: " + e.Error()}}) {
						break
					}
				}
				for _, tx := range res.Txs {
					row, ok, f := analyse(l.Chain, s.Name, tx, opt.Config)
					if !emit(out{row: row, ok: ok, fail: f}) {
						break
					}
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, s := range srcs {
			select {
			case jobs <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	rows := map[Range][]Row{}
	for o := range results {
		switch {
		case o.fail != nil:
			sum.Failed++
			if opt.OnFailure != nil {
				opt.OnFailure(*o.fail)
			}
		case !o.ok:
			sum.Unplaced++
		case o.row.Block > MaxBlock:
			sum.Unplaced++
		default:
			r := l.RangeOf(o.row.Block)
			if !opt.Shard.Has(l, r) || (opt.Only != nil && !opt.Only(r)) {
				sum.Outside++
				continue
			}
			rows[r] = append(rows[r], o.row)
		}
	}
	sum.Sources += len(srcs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rows, nil
}

func decode(data []byte, opt trace.Options) (res *trace.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = &trace.Result{Errors: []*trace.Error{{Source: opt.Source, Offset: -1, Msg: fmt.Sprintf("decoder panic: %v", p)}}}
		}
	}()
	return trace.Decode(data, opt)
}

func analyse(chain, source string, tx *normalform.Tx, cfg *normalform.Config) (row Row, ok bool, f *Failure) {
	defer func() {
		if p := recover(); p != nil {
			row, ok, f = Row{}, false, &Failure{Source: source, Msg: fmt.Sprintf("tx %s: engine panic: %v", tx.Meta.Hash.Hex(), p)}
		}
	}()
	a, err := normalform.Analyze(tx, cfg)
	if err != nil {
		return Row{}, false, &Failure{Source: source, Msg: fmt.Sprintf("tx %s: %v", tx.Meta.Hash.Hex(), err)}
	}
	row, ok = FromAnalysis(chain, a)
	return row, ok, nil
}
