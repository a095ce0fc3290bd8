package ingest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
	"github.com/flowq/flowq/normalform/trace"
	"github.com/zeebo/xxh3"
)

// Input is one unit of ingestion: a bundle file, a block fetched from a
// node, any bytes trace.Decode reads. Name identifies it in the index (its
// marker and its failures): an absolute path for files, a name such as
// "rpc:block:19000000" for fetched bundles.
type Input struct {
	Name string
	// Load reads the input. max is the size limit in force (<= 0: none):
	// a loader that reads must stop one byte past it and fail with a
	// *SizeError (ReadFile and ReadAll do), so that nothing endless is held
	// in memory whatever stat says; bytes already in memory may be
	// returned as they are (the decoder refuses them when over the limit).
	Load func(max int) ([]byte, error)
	// Size, when set, gives what Load will return before it is called
	// (false: not known): a regular file's size, bytes already in
	// memory. The decoder then takes that much of the byte budget
	// (Options.InFlightBytes) before it loads the input, instead of after,
	// so that an input waiting for its turn is not held in memory.
	Size func() (int64, bool)
	// Release, when set, is called once the ingest no longer reads the
	// bytes Load returned (decoded, skipped, or refused): their owner may
	// reuse them. Nothing decoded from them refers to them
	// (TestReleasedBytesNotRetained).
	Release func()
}

// FileInput is a file named by the user, by its absolute path: read with
// ReadFile (a regular file over the limit is not read; a device, a pipe or
// /dev/stdin is read up to the limit).
func FileInput(path string) Input {
	return Input{Name: absName(path), Load: func(max int) ([]byte, error) { return ReadFile(path, max) }, Size: regularSize(path)}
}

// foundInput is a file found in a folder: read only when it is a regular
// file, or a link to one (ReadRegularFile); a named pipe, a device or a
// socket is a read failure that names what it is.
func foundInput(path string) Input {
	return Input{Name: absName(path), Load: func(max int) ([]byte, error) { return ReadRegularFile(path, max) }, Size: regularSize(path)}
}

// regularSize is an Input's Size for the file at path: its size when it
// is a regular file (a pipe's or a device's is not known).
func regularSize(path string) func() (int64, bool) {
	return func() (int64, bool) {
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			return 0, false
		}
		return st.Size(), true
	}
}

func absName(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// BundleInput is bytes already in memory (the RPC fetcher's bundles).
func BundleInput(name string, b []byte) Input {
	return Input{Name: name, Load: func(int) ([]byte, error) { return b, nil },
		Size: func() (int64, bool) { return int64(len(b)), true }}
}

// Files expands files and directories (every *.json under a directory, in
// lexical order) into inputs. A file given by name is read whatever it is
// (FileInput); one found in a directory only when it is a regular file
// (foundInput).
func Files(paths ...string) ([]Input, error) {
	var out []Input
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, FileInput(p))
			continue
		}
		found, err := dirInputs(p)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// Options configure an ingest. Zero values take the defaults.
type Options struct {
	// Config is the analysis configuration (nil: Ethereum defaults).
	Config *normalform.Config
	// Workers is the number of decoding and of analysing goroutines
	// (default runtime.NumCPU()).
	Workers int
	// BatchTxs is the number of transactions per Badger write (default
	// 256): a write ends at the first end of a block once it holds that
	// many, or wherever it is at twice that many (writer.full).
	BatchTxs int
	// Force ingests inputs even when their marker says they are done.
	Force bool
	// Progress, when set, receives a progress bar (redrawn with \r).
	Progress io.Writer
	// Total is the number of inputs expected, for the bar (Ingest sets it).
	Total int
	// OnFailure, when set, is called (from the writer goroutine) for every
	// failure recorded.
	OnFailure func(index.Failure)
	// Limits of the decoder (trace.Options): an input over MaxBytes, a
	// transaction nested deeper than MaxDepth or with more than
	// MaxTransfers transfers is recorded as a failure naming the limit.
	// Zero takes trace's defaults; negative lifts the limit.
	MaxBytes, MaxDepth, MaxTransfers int
	// InFlightBytes bounds the bytes of the inputs loaded and not yet
	// written (default 256 MiB; an input larger than it is let in when
	// no other is held), beside the bound on their number: at most
	// 64 inputs (or 4×Workers, if more) between Add and the writer.
	// An input whose size is known before it is loaded (Input.Size:
	// files, bytes in memory) is loaded once its bytes are taken; one
	// whose size is not (a pipe, a cryo range, decoded from Parquet), or
	// is over the size limit, is taken once loaded, so each decoder may hold one such input outside
	// the budget while it waits for its turn (budget.go).
	InFlightBytes int64

	// Test hooks: AfterCommit is called after every committed write with
	// the number of inputs finished so far; Clock replaces time.Now for
	// latencies.
	AfterCommit func(finished int)
	Clock       func() time.Time
}

// Summary is what an ingest did.
type Summary struct {
	Inputs        int           // inputs finished (ingested or skipped)
	InputsSkipped int           // inputs skipped: already ingested with the same content and configuration
	Stored        int           // transactions written (new, or changed since the last ingest)
	Unchanged     int           // transactions analysed and found in the index unchanged
	Kept          int           // transactions analysed whose record in the index knows more (a receipt, the block), kept
	Blocks        int           // blocks whose findings were computed (their records changed)
	Skipped       int           // Unchanged, Kept, and the transactions of skipped inputs
	Repeated      int           // of Unchanged: stored by this ingest from another input (the same transaction in two files)
	Failed        int           // failures recorded (inputs or transactions)
	Elapsed       time.Duration // wall time of the ingest
}

// TxPerSecond is the rate of the transactions analysed (stored or
// found unchanged).
func (s Summary) TxPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Stored+s.Unchanged) / s.Elapsed.Seconds()
}

func (s Summary) String() string {
	kept := ""
	if s.Kept > 0 {
		kept = fmt.Sprintf(", %d of them kept as indexed (the index's record knows more: a receipt, the block)", s.Kept)
	}
	why := "already indexed"
	if s.Repeated > 0 {
		why = fmt.Sprintf("%d already indexed, %d repeated from another input of this ingest", s.Skipped-s.Repeated, s.Repeated)
		if s.Skipped == s.Repeated {
			why = "repeated from another input of this ingest"
		}
	}
	return fmt.Sprintf("%d transactions stored, %d skipped (%s%s), %d failed; %d inputs (%d skipped) in %s (%.0f tx/s); findings of %d blocks computed",
		s.Stored, s.Skipped, why, kept, s.Failed, s.Inputs, s.InputsSkipped, s.Elapsed.Round(time.Millisecond), s.TxPerSecond(), s.Blocks)
}

// Ingest ingests inputs: decoding and analysis on all cores, writes
// batched, each input's transactions, failures and marker written in
// order. It is idempotent and resumable: an input ingested completely is
// skipped next time (unless opt.Force), and a partly ingested one is
// ingested again, which changes nothing it had already written. On
// cancellation it stops at once; the batch being assembled is not
// written, as after a crash.
func Ingest(ctx context.Context, ix *index.Index, inputs []Input, opt Options) (Summary, error) {
	if opt.Total == 0 {
		opt.Total = len(inputs)
	}
	g := NewIngester(ctx, ix, opt)
	for _, in := range inputs {
		if err := g.Add(in); err != nil {
			break
		}
	}
	return g.Close()
}

// RetryFailed ingests again every input with recorded failures (reading
// files again, or through load when it is set, for inputs that are not
// files), replacing their failures with those of the new attempt. Files
// are read again only when they are regular files (ReadRegularFile: a
// pipe's content is gone, a device's is not the same), with the size
// limit; load receives the limit too.
func RetryFailed(ctx context.Context, ix *index.Index, opt Options, load func(name string, max int) ([]byte, error)) (Summary, error) {
	var names []string
	seen := map[string]bool{}
	err := ix.Failures(ctx, func(f index.Failure) error {
		if !seen[f.Source] {
			seen[f.Source] = true
			names = append(names, f.Source)
		}
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	inputs := make([]Input, len(names))
	for i, n := range names {
		inputs[i] = namedInput(n)
		if load != nil && !IsCryoName(n) {
			inputs[i].Load = func(max int) ([]byte, error) { return load(n, max) }
			inputs[i].Size = nil // not the file's: load's
		}
	}
	opt.Force = true
	return Ingest(ctx, ix, inputs, opt)
}

// --- the pipeline -------------------------------------------------------------
//
// Add hands inputs to the decoders (at most 4×Workers inputs in flight);
// a decoder reads an input, skips it when its marker matches, decodes it
// and hands each transaction to the analysers; the single writer receives
// the decoders' headers and the analysers' results, puts each input's
// transactions back in order, and writes them in batches, each input's
// failures and marker in the batch with its last transaction.

// Ingester is an ingest in progress, fed one input at a time (the RPC
// fetcher's entry point: Add each bundle as it arrives, then Close).
type Ingester struct {
	ix      *index.Index
	opt     Options
	ctx     context.Context
	cancel  context.CancelFunc
	fp      [8]byte
	jobs    chan job
	tasks   chan task
	results chan any
	slots   chan struct{}
	budget  *budget // the bytes of the inputs in flight (budget.go)
	seq     int
	done    chan struct{}
	decWG   sync.WaitGroup
	anaWG   sync.WaitGroup
	start   time.Time
	sum     Summary
	err     error
	closed  bool

	// storedNow holds the first 8 bytes of the hash of each transaction
	// this ingest stored: one found unchanged after is the same
	// transaction from another input (Summary.Repeated).
	storedNow map[uint64]struct{}
}

type job struct {
	seq int
	in  Input
}

type task struct {
	seq, slot int
	tx        *normalform.Tx
}

// header: what a decoder says of an input.
type header struct {
	seq      int
	name     string
	content  [32]byte
	skip     *index.InputMark // the marker that matched, when skipped
	readFail bool
	size     int64 // the bytes it holds of the budget, given back by the writer
	txs      int
	failures []index.Failure // read and decode failures, in the decoder's order
	blockTxs map[uint64]int  // the transactions each block's header lists
}

// result: what an analyser says of a transaction.
type result struct {
	seq, slot int
	entry     *index.Entry
	failure   *index.Failure
}

// resultsQueue is how many analysed transactions (and input headers) may
// wait for the writer, and inputsInFlight how many inputs may be between
// Add and the writer: enough for the decoders and analysers to go on
// while the writer writes a batch or computes block findings, instead of
// stopping after a few. Memory stays bounded by the inputs in flight, in
// number and in bytes (Options.InFlightBytes, budget.go), whose
// transactions these are. With 8 inputs and 1,024 results the million
// synthetic transactions' ingest kept 1.73–1.79 of 2 cores busy; with
// 64 and 8,192, 1.79–1.81 (six pairs of runs; the rate moved with the
// machine more than with the queues: BENCHMARKS.md, "Session 13").
const (
	resultsQueue         = 8192
	inputsInFlight       = 64
	defaultInFlightBytes = 256 << 20
)

// The largest Workers and BatchTxs an ingest takes. Each worker is two
// goroutines and four places in a queue; a batch is held in memory until
// its write. A billion workers took the process (fatal error: out of
// memory, and a dump of every goroutine) before these bounds.
const (
	MaxWorkers  = 1024
	MaxBatchTxs = 1 << 16
)

// Check reports the first of the options that is out of its range (a
// flag's value, a server's request), naming it; NewIngester itself
// holds them to their bounds.
func (o *Options) Check() error {
	switch {
	case o.Workers < 0 || o.Workers > MaxWorkers:
		return fmt.Errorf("workers %d: want 1 to %d (0: one per CPU)", o.Workers, MaxWorkers)
	case o.BatchTxs < 0 || o.BatchTxs > MaxBatchTxs:
		return fmt.Errorf("batch %d: want 1 to %d transactions a write (0: the default, 256)", o.BatchTxs, MaxBatchTxs)
	}
	return nil
}

// NewIngester starts an ingest.
func NewIngester(ctx context.Context, ix *index.Index, opt Options) *Ingester {
	if opt.Config == nil {
		opt.Config = normalform.DefaultConfig()
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.NumCPU()
	}
	opt.Workers = min(opt.Workers, MaxWorkers)
	if opt.BatchTxs <= 0 {
		opt.BatchTxs = 256
	}
	opt.BatchTxs = min(opt.BatchTxs, MaxBatchTxs)
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	if opt.InFlightBytes <= 0 {
		opt.InFlightBytes = defaultInFlightBytes
	}
	ctx, cancel := context.WithCancel(ctx)
	g := &Ingester{ix: ix, opt: opt, ctx: ctx, cancel: cancel, fp: index.ConfigFingerprint(opt.Config),
		jobs: make(chan job), tasks: make(chan task, 4*opt.Workers), results: make(chan any, resultsQueue),
		slots: make(chan struct{}, max(inputsInFlight, 4*opt.Workers)), budget: newBudget(ctx, opt.InFlightBytes),
		done: make(chan struct{}), start: time.Now()}
	for range opt.Workers {
		g.decWG.Add(1)
		go g.decoder()
		g.anaWG.Add(1)
		go g.analyser()
	}
	go func() { g.decWG.Wait(); close(g.tasks) }()
	go func() { g.anaWG.Wait(); close(g.results) }()
	go g.writer()
	return g
}

// Add queues an input. It blocks while the pipeline is full, and fails
// when the ingest has stopped (cancelled, or a write failed). Add and
// Close are called from one goroutine.
func (g *Ingester) Add(in Input) error {
	if g.closed {
		return errors.New("index: Add after Close")
	}
	select {
	case g.slots <- struct{}{}:
	case <-g.ctx.Done():
		return g.stopErr()
	}
	select {
	case g.jobs <- job{g.seq, in}:
		g.seq++
		return nil
	case <-g.ctx.Done():
		return g.stopErr()
	}
}

func (g *Ingester) stopErr() error {
	select {
	case <-g.done:
		if g.err != nil {
			return g.err
		}
	default:
	}
	return g.ctx.Err()
}

// Close waits for the queued inputs and returns the summary.
func (g *Ingester) Close() (Summary, error) {
	if !g.closed {
		g.closed = true
		close(g.jobs)
	}
	<-g.done
	g.cancel()
	g.decWG.Wait()
	g.anaWG.Wait()
	return g.sum, g.err
}

func (g *Ingester) send(v any) bool {
	select {
	case g.results <- v:
		return true
	case <-g.ctx.Done():
		return false
	}
}

// idleRelease is how long a decoder waits for its next input before it
// gives back its markers' snapshot: Badger keeps every version written
// since a snapshot that is still open.
const idleRelease = time.Second

func (g *Ingester) decoder() {
	defer g.decWG.Done()
	marks := g.ix.MarkReader() // the markers' snapshots (index.MarkReader)
	defer marks.Release()
	idle := time.NewTimer(idleRelease)
	for {
		var j job
		var ok bool
		select {
		case j, ok = <-g.jobs:
		default:
			idle.Reset(idleRelease)
			select {
			case j, ok = <-g.jobs:
			case <-idle.C:
				marks.Release() // no snapshot held by a decoder left idle
				j, ok = <-g.jobs
			}
			idle.Stop()
		}
		if !ok {
			return
		}
		if g.ctx.Err() != nil {
			release(j.in)
			continue // drain
		}
		h := &header{seq: j.seq, name: j.in.Name}
		pre, known := g.preSize(j.in)
		if known && !g.budget.take(j.seq, pre) {
			release(j.in)
			continue // stopped
		}
		data, err := j.in.Load(g.maxBytes())
		if !known && !g.budget.take(j.seq, int64(len(data))) {
			release(j.in)
			continue // stopped
		}
		if known {
			g.budget.adjust(int64(len(data)) - pre) // the file changed since its stat
		}
		h.size = int64(len(data))
		if err != nil {
			release(j.in)
			g.budget.give(h.size)
			h.size = 0
			h.readFail = true
			h.failures = []index.Failure{{Source: j.in.Name, Stage: index.StageRead, Msg: err.Error()}}
			g.send(h)
			continue
		}
		h.content = contentHash(data)
		if !g.opt.Force {
			m, ok, err := marks.Input(j.in.Name)
			if err == nil && ok && m.Content == h.content && m.Schema == index.SchemaVersion &&
				m.Algebra == normalform.AlgebraVersion && m.Config == g.fp {
				h.skip = &m
				release(j.in)
				g.budget.give(h.size)
				h.size = 0
				g.send(h)
				continue
			}
		}
		res := decode(data, trace.Options{Config: g.opt.Config, Source: j.in.Name,
			MaxBytes: g.opt.MaxBytes, MaxDepth: g.opt.MaxDepth, MaxTransfers: g.opt.MaxTransfers})
		h.txs = len(res.Txs)
		h.blockTxs = res.BlockTxs
		for _, e := range res.Errors {
			h.failures = append(h.failures, index.Failure{Source: j.in.Name, Stage: index.StageDecode, Tx: e.Tx, HasTx: e.HasTx, Msg: e.Error()})
		}
		data = nil
		release(j.in) // the transactions decoded hold nothing of the bytes
		if !g.send(h) {
			continue
		}
		for i, tx := range res.Txs {
			select {
			case g.tasks <- task{j.seq, i, tx}:
			case <-g.ctx.Done():
			}
		}
	}
}

// preSize is what an input's load will hold, when known before it
// (Input.Size). Over the size limit it is not: a file so large is
// refused unread (its load holds nothing), bytes in memory are refused
// by the decoder; either takes what its load returns, once loaded.
func (g *Ingester) preSize(in Input) (int64, bool) {
	if in.Size == nil {
		return 0, false
	}
	n, ok := in.Size()
	if m := g.maxBytes(); !ok || n < 0 || m > 0 && n > int64(m) {
		return 0, false
	}
	return n, true
}

// release gives an input's bytes back to their owner (Input.Release).
func release(in Input) {
	if in.Release != nil {
		in.Release()
	}
}

// contentHash is an input's content hash for its marker: XXH3-128 in the
// first 16 bytes, the rest zero. It tells an input changed since its
// marker was written (not an adversary's collision), at a small fraction
// of SHA-256's cost on every whole input (issue 22). A marker written
// with SHA-256 never matches it: that input is ingested again, which
// changes nothing.
func contentHash(data []byte) (h [32]byte) {
	x := xxh3.Hash128(data).Bytes()
	copy(h[:], x[:])
	return h
}

// decode is trace.Decode, with a panic reported as an error.
func decode(data []byte, opt trace.Options) (res *trace.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = &trace.Result{Errors: []*trace.Error{{Source: opt.Source, Offset: -1, Msg: fmt.Sprintf("decoder panic: %v", p)}}}
		}
	}()
	return trace.Decode(data, opt)
}

func (g *Ingester) analyser() {
	defer g.anaWG.Done()
	for t := range g.tasks {
		if g.ctx.Err() != nil {
			continue
		}
		g.send(g.analyse(t))
	}
}

func (g *Ingester) analyse(t task) (r *result) {
	r = &result{seq: t.seq, slot: t.slot}
	m := &t.tx.Meta
	fail := func(st index.Stage, msg string) *result {
		r.failure = &index.Failure{Stage: st, Tx: m.Hash, HasTx: m.HasHash, Msg: msg}
		return r
	}
	defer func() {
		if p := recover(); p != nil {
			r.entry = nil
			fail(index.StageAnalyze, fmt.Sprintf("tx %s: engine panic: %v", m.Hash.Hex(), p))
		}
	}()
	if !m.HasHash {
		return fail(index.StageIndex, index.ErrNoHash.Error())
	}
	start := g.opt.Clock()
	a, err := normalform.Analyze(t.tx, g.opt.Config)
	if err != nil {
		return fail(index.StageAnalyze, err.Error())
	}
	rec, err := index.NewRecord(a, 0)
	if err != nil {
		return fail(index.StageIndex, err.Error())
	}
	rec.Latency = g.opt.Clock().Sub(start)
	r.entry = index.NewEntry(rec)
	if m.HasBlock && m.HasIndex { // what its block's findings read (index.Batches.RefreshBlocks)
		r.entry.Facts = block.FactsOf(a, g.opt.Config)
	}
	return r
}

// --- the writer -------------------------------------------------------------

type inputState struct {
	h       *header
	results []*result
	got     int
}

func (s *inputState) complete() bool { return s.h != nil && s.got == s.h.txs }

type writer struct {
	g        *Ingester
	batches  *index.Batches
	batch    []index.Op
	ntx      int
	finished int
	bar      *Bar
}

func (g *Ingester) writer() {
	defer close(g.done)
	defer func() { // a bug below stops the ingest with an error, not the process
		if p := recover(); p != nil {
			if g.err == nil {
				g.err = fmt.Errorf("internal error writing the index: %v", p)
			}
			g.cancel()
		}
	}()
	w := &writer{g: g, bar: NewBar(g.opt.Progress, g.opt.Total, "inputs")}
	pending := map[int]*inputState{}
	next := 0
	state := func(seq int) *inputState {
		s := pending[seq]
		if s == nil {
			s = &inputState{}
			pending[seq] = s
		}
		return s
	}
	fail := func(err error) {
		if g.err == nil {
			g.err = err
		}
		g.cancel()
	}
	if b, err := g.ix.Batches(g.ctx, g.opt.Config); err != nil {
		fail(err)
	} else {
		w.batches = b
	}
	for {
		var v any
		var ok bool
		select {
		case v, ok = <-g.results:
		case <-g.ctx.Done():
			ok = false
		}
		if !ok {
			break
		}
		switch x := v.(type) {
		case *header:
			s := state(x.seq)
			s.h = x
			if s.results == nil {
				s.results = make([]*result, x.txs)
			} else if len(s.results) < x.txs {
				s.results = append(s.results, make([]*result, x.txs-len(s.results))...)
			}
		case *result:
			s := state(x.seq)
			if len(s.results) <= x.slot {
				s.results = append(s.results, make([]*result, x.slot+1-len(s.results))...)
			}
			s.results[x.slot] = x
			s.got++
		}
		for s := pending[next]; s != nil && s.complete(); s = pending[next] {
			delete(pending, next)
			next++
			if err := w.input(s); err != nil {
				fail(err)
				break
			}
		}
		if g.err != nil {
			break
		}
	}
	if g.ctx.Err() == nil && g.err == nil {
		if err := w.flush(); err != nil {
			fail(err)
		}
	}
	if g.ctx.Err() == nil && g.err == nil { // block findings of the blocks written (blocks.go)
		n, err := w.batches.RefreshBlocks(g.ctx)
		if err != nil {
			fail(err)
		}
		g.sum.Blocks = n
	}
	if g.err == nil && g.ctx.Err() != nil {
		g.err = g.ctx.Err()
	}
	w.bar.Done(g.err == nil)
	g.sum.Elapsed = time.Since(g.start)
}

// input adds a complete input to the batch.
func (w *writer) input(s *inputState) error {
	h := s.h
	<-w.g.slots
	w.g.budget.give(h.size)
	f := &index.Finish{Name: h.name, Content: h.content, Skip: h.skip, ReadFail: h.readFail, Failures: h.failures, BlockTxs: h.blockTxs}
	if h.skip == nil && !h.readFail {
		for i, r := range s.results {
			if r.failure != nil {
				r.failure.Source = h.name
				f.Failures = append(f.Failures, *r.failure)
				continue
			}
			f.Txs++
			w.batch = append(w.batch, index.Op{Entry: r.entry, Owner: f})
			if w.ntx++; w.full(s.results, i) {
				if err := w.flush(); err != nil {
					return err
				}
			}
		}
	}
	w.batch = append(w.batch, index.Op{Fin: f})
	if w.ntx++; w.ntx >= w.g.opt.BatchTxs { // skipped inputs count too: the bar moves, the batch stays small
		return w.flush()
	}
	return nil
}

// full says whether the batch, whose last transaction is results[i]'s,
// is to be written before the input's next transaction is added: once
// it holds BatchTxs transactions, at the end of a block (the next
// transaction of the input is of another block, or of none known); at
// twice BatchTxs, wherever it is. A block cut by two writes has its
// postings, its record pages and its NF page written twice (their
// second versions compacted away later): with blocks of 100 and writes
// of exactly 256, 39% of the blocks were, and about a quarter of the
// ingest's memtable inserts were those second writes (BENCHMARKS.md,
// "Session 12"). The input's last transaction never ends a batch here:
// its finish, added next, does (input), so that the input's marker
// goes with it.
func (w *writer) full(results []*result, i int) bool {
	if w.ntx < w.g.opt.BatchTxs {
		return false
	}
	if w.ntx >= 2*w.g.opt.BatchTxs {
		return true
	}
	return blockEnds(results, i)
}

// blockEnds says whether results[i] (a transaction) is the last of its
// block among the input's transactions: the next one that is not a
// failure has another block, or either block is unknown. The input's
// last is not (its finish follows).
func blockEnds(results []*result, i int) bool {
	b := results[i].entry.Rec.Loc.Block
	for _, r := range results[i+1:] {
		if r == nil || r.entry == nil {
			continue
		}
		n := r.entry.Rec.Loc.Block
		return n != b || b == index.UnknownBlock
	}
	return false
}

// flush writes the batch, splitting it when Badger finds it too big.
func (w *writer) flush() error {
	if len(w.batch) == 0 {
		return nil
	}
	if err := w.batches.Write(w.batch); err != nil {
		return err
	}
	g := w.g
	for _, o := range w.batch {
		switch {
		case o.Entry != nil && o.Changed:
			g.sum.Stored++
			if g.storedNow == nil {
				g.storedNow = map[uint64]struct{}{}
			}
			g.storedNow[binary.BigEndian.Uint64(o.Entry.Rec.Hash[:8])] = struct{}{}
		case o.Entry != nil && o.Kept:
			g.sum.Kept++
			g.sum.Skipped++
		case o.Entry != nil:
			g.sum.Unchanged++
			g.sum.Skipped++
			if _, ok := g.storedNow[binary.BigEndian.Uint64(o.Entry.Rec.Hash[:8])]; ok {
				g.sum.Repeated++
			}
		case o.Fin != nil:
			w.finished++
			g.sum.Inputs++
			g.sum.Failed += len(o.Fin.Failures)
			if o.Fin.Skip != nil {
				g.sum.InputsSkipped++
				g.sum.Skipped += o.Fin.Skip.Txs
			}
			if g.opt.OnFailure != nil {
				for _, f := range o.Fin.Failures {
					g.opt.OnFailure(f)
				}
			}
		}
	}
	w.batch, w.ntx = w.batch[:0], 0
	w.bar.SetTx(w.finished, g.sum.Stored+g.sum.Skipped)
	if g.opt.AfterCommit != nil {
		g.opt.AfterCommit(w.finished)
	}
	return nil
}

// maxBytes is the input size limit in force (the decoder's default when
// unset; zero or less: none).
func (g *Ingester) maxBytes() int {
	if g.opt.MaxBytes == 0 {
		return trace.DefaultMaxBytes
	}
	return g.opt.MaxBytes
}
