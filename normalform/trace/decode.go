package trace

import (
	"fmt"
	"sort"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/normalform"
)

// Options configure decoding.
type Options struct {
	// Config gives the wrapped-native contracts whose Deposit and Withdrawal
	// events are transfers. Nil means Ethereum mainnet defaults.
	Config *normalform.Config
	// Source names the input in errors (a file name, "stdin").
	Source string
}

// Error is a decoding failure: the input, the transaction when known, the
// JSON path and byte offset where decoding stopped, and what was wrong.
type Error struct {
	Source string
	Tx     normalform.Hash
	HasTx  bool
	Path   string
	Offset int // byte offset in the input, -1 when not meaningful
	Msg    string
}

func (e *Error) Error() string {
	s := ""
	if e.Source != "" {
		s = e.Source + ": "
	}
	if e.HasTx {
		s += "tx " + e.Tx.Hex() + ": "
	}
	if e.Path != "" {
		s += "at " + e.Path
		if e.Offset >= 0 {
			s += fmt.Sprintf(" (byte %d)", e.Offset)
		}
		s += ": "
	}
	return s + e.Msg
}

// Result is what Decode returns: the transactions it could decode, in input
// order, and an error for each transaction (or part of the input) it could
// not. One bad transaction never hides the others.
type Result struct {
	Txs    []*normalform.Tx
	Errors []*Error
}

// Decode reads any of the supported input shapes (see the package
// documentation) and builds each transaction's T0.
func Decode(data []byte, opt Options) *Result {
	if opt.Config == nil {
		opt.Config = normalform.DefaultConfig()
	}
	d := &decoder{data: data, opt: opt, res: &Result{}}
	d.document()
	return d.res
}

type decoder struct {
	data []byte
	opt  Options
	res  *Result
}

func (d *decoder) fail(sErr *scanError, tx *normalform.Hash) {
	e := &Error{Source: d.opt.Source, Path: sErr.path, Offset: sErr.offset, Msg: sErr.msg}
	if tx != nil {
		e.Tx, e.HasTx = *tx, true
	}
	d.res.Errors = append(d.res.Errors, e)
}

func (d *decoder) failMsg(tx *normalform.Hash, path, msg string) {
	d.fail(&scanError{path: path, offset: -1, msg: msg}, tx)
}

// kind is what a JSON object is, judged by its keys.
type kind int

const (
	kUnknown kind = iota
	kEnvelope
	kTracetest
	kBlock
	kReceipt
	kLog
	kParityFrame
	kGethItem
	kBundle
	kGethFrame
)

var kindNames = map[kind]string{kUnknown: "unknown object", kEnvelope: "JSON-RPC response", kTracetest: "go-ethereum tracer test",
	kBlock: "block", kReceipt: "receipt", kLog: "log", kParityFrame: "Parity trace frame", kGethItem: "debug_traceBlock entry",
	kBundle: "bundle", kGethFrame: "callTracer frame"}

// keysAt lists the keys of the object at offset off with their value
// offsets. It does not decode the values.
func (d *decoder) keysAt(off int, base string) (map[string]int, *scanError) {
	s := newScanner(d.data, off, base)
	keys := map[string]int{}
	if !s.objBegin() {
		return nil, s.err
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		keys[string(key)] = s.i
		s.skip()
	}
	return keys, s.err
}

func classify(keys map[string]int) kind {
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("jsonrpc") || (has("id") && (has("result") || has("error"))):
		return kEnvelope
	case has("result") && (has("genesis") || has("context") || has("input")):
		return kTracetest
	case has("parentHash") || has("miner") || has("stateRoot"):
		return kBlock
	case has("transactionHash") && (has("cumulativeGasUsed") || has("logsBloom") || has("gasUsed") || has("status")):
		return kReceipt
	case has("topics"):
		return kLog
	case has("action") || has("traceAddress"):
		return kParityFrame
	case has("txHash") || (has("result") && len(keys) <= 3):
		return kGethItem
	case has("traces") || has("receipts") || has("block") || has("header") || has("logs") || has("trace"):
		return kBundle
	case has("from") && (has("type") || has("calls") || has("gas")):
		return kGethFrame
	}
	return kUnknown
}

// document dispatches on the top-level value.
func (d *decoder) document() {
	s := newScanner(d.data, 0, "")
	switch s.peek() {
	case '{':
		g := newGroup(d)
		d.object(0, "$", g)
		g.assemble()
	case '[':
		d.topArray(s)
	default:
		s.unexpected("a JSON object or array")
		d.fail(s.err, nil)
	}
	// Anything after the value?
	if s.peek() == '{' || s.peek() == '[' {
		s.skip()
		if s.err == nil {
			s.end()
			if s.err != nil {
				d.fail(s.err, nil)
			}
		}
	}
}

// topArray handles a top-level list: of bundles (one group each), of
// JSON-RPC responses (one group for the batch), or of frames, receipts or
// logs (one group).
func (d *decoder) topArray(s *scanner) {
	offs := s.elementOffsets()
	if s.err != nil {
		defer d.fail(s.err, nil)
	}
	if len(offs) == 0 {
		return
	}
	first, err := d.keysAt(offs[0], "$[0]")
	if err != nil {
		d.fail(err, nil)
		return
	}
	if classify(first) == kBundle || classify(first) == kTracetest {
		for i, off := range offs {
			g := newGroup(d)
			d.object(off, fmt.Sprintf("$[%d]", i), g)
			g.assemble()
		}
		return
	}
	g := newGroup(d)
	d.elements(offs, "$", g, kUnknown)
	g.assemble()
}

// object reads one object of any kind into g.
func (d *decoder) object(off int, path string, g *group) {
	keys, err := d.keysAt(off, path)
	if err != nil {
		d.fail(err, nil)
		return
	}
	k := classify(keys)
	switch k {
	case kEnvelope:
		if eo, ok := keys["error"]; ok {
			s := newScanner(d.data, eo, path+".error")
			msg := "JSON-RPC error"
			if s.peek() == '{' {
				ek, _ := d.keysAt(eo, path+".error")
				if mo, ok := ek["message"]; ok {
					ms := newScanner(d.data, mo, "")
					msg += ": " + ms.str()
				}
			} else {
				msg += ": " + clip(d.data[eo:min(len(d.data), eo+200)])
			}
			d.failMsg(nil, path+".error", msg)
			return
		}
		d.value(keys["result"], path+".result", g, kUnknown)
	case kTracetest:
		d.tracetest(keys, path, g)
	case kBundle:
		d.bundle(keys, path, g)
	default:
		d.single(k, off, path, g)
	}
}

// value reads a value that is an object or a list of objects.
func (d *decoder) value(off int, path string, g *group, hint kind) {
	s := newScanner(d.data, off, path)
	switch s.peek() {
	case '{':
		if hint == kUnknown {
			d.object(off, path, g)
		} else {
			d.single(hint, off, path, g)
		}
	case '[':
		offs := s.elementOffsets()
		d.elements(offs, path, g, hint)
		if s.err != nil {
			d.fail(s.err, nil)
		}
	case 'n':
		// null result: nothing to read
	default:
		s.unexpected("an object or an array")
		d.fail(s.err, nil)
	}
}

// elements reads the elements of a list, each on its own: a bad element
// is reported and the others are still read.
func (d *decoder) elements(offs []int, path string, g *group, hint kind) {
	k := hint
	for i, off := range offs {
		p := fmt.Sprintf("%s[%d]", path, i)
		if k == kUnknown || k == kEnvelope || k == kBundle {
			keys, err := d.keysAt(off, p)
			if err != nil {
				d.fail(err, d.txHashAt(off))
				continue
			}
			kk := classify(keys)
			if kk == kEnvelope || kk == kBundle || kk == kTracetest {
				d.object(off, p, g)
				continue
			}
			k = kk
		}
		d.single(k, off, p, g)
	}
}

// single reads one object whose kind is known.
func (d *decoder) single(k kind, off int, path string, g *group) {
	s := newScanner(d.data, off, path)
	switch k {
	case kGethFrame:
		f := gethFrame(s, 0)
		if s.err != nil {
			d.fail(s.err, nil)
			return
		}
		g.geth = append(g.geth, gethTx{root: f, path: path})
	case kGethItem:
		d.gethItem(off, path, g)
	case kParityFrame:
		p := parityFrame(s)
		if s.err != nil {
			g.failed(d.txHashAt(off), s.err)
			return
		}
		if !p.reward {
			g.parity = append(g.parity, p)
		}
	case kReceipt:
		r := readReceipt(s)
		if s.err != nil {
			g.failed(d.txHashAt(off), s.err)
			return
		}
		g.receipts = append(g.receipts, r)
	case kLog:
		l := readLog(s, false)
		if s.err != nil {
			g.failed(d.txHashAt(off), s.err)
			return
		}
		g.logs = append(g.logs, l)
		g.logsGiven = true
	case kBlock:
		h := readHeader(s)
		if s.err != nil {
			d.fail(s.err, nil)
			return
		}
		g.headers = append(g.headers, h)
	default:
		d.failMsg(nil, path, "unrecognised object: not a trace frame, receipt, log, block or bundle")
	}
}

// gethItem reads {"txHash": ..., "result": frame} or {"txHash", "error"}.
func (d *decoder) gethItem(off int, path string, g *group) {
	keys, _ := d.keysAt(off, path)
	var h normalform.Hash
	var hasHash bool
	if ho, ok := keys["txHash"]; ok {
		s := newScanner(d.data, ho, path+".txHash")
		h = s.hash()
		if s.err != nil {
			d.fail(s.err, nil)
			return
		}
		hasHash = true
	}
	var hp *normalform.Hash
	if hasHash {
		hp = &h
	}
	if eo, ok := keys["error"]; ok {
		s := newScanner(d.data, eo, path+".error")
		if !s.isNull() {
			d.failMsg(hp, path+".error", "the node could not trace this transaction: "+clip(d.data[eo:min(len(d.data), eo+200)]))
			return
		}
	}
	ro, ok := keys["result"]
	if !ok {
		d.failMsg(hp, path, "debug_traceBlock entry has no \"result\"")
		return
	}
	s := newScanner(d.data, ro, path+".result")
	f := gethFrame(s, 0)
	if s.err != nil {
		d.fail(s.err, hp)
		return
	}
	g.geth = append(g.geth, gethTx{root: f, hash: h, hasHash: hasHash, path: path})
}

// bundle reads {"block", "receipts", "traces", "logs"} (any subset).
func (d *decoder) bundle(keys map[string]int, path string, g *group) {
	for _, name := range []string{"block", "header"} {
		if off, ok := keys[name]; ok {
			d.value(off, path+"."+name, g, kBlock)
		}
	}
	if off, ok := keys["receipts"]; ok {
		d.value(off, path+".receipts", g, kReceipt)
	}
	if off, ok := keys["logs"]; ok {
		g.logsGiven = true
		d.value(off, path+".logs", g, kLog)
	}
	for _, name := range []string{"traces", "trace"} {
		if off, ok := keys[name]; ok {
			d.value(off, path+"."+name, g, kUnknown)
		}
	}
}

// tracetest reads a go-ethereum tracer test file: {"genesis", "context",
// "input", "result"}. The transaction hash is the hash of the raw signed
// transaction in "input"; the block number and miner come from "context".
func (d *decoder) tracetest(keys map[string]int, path string, g *group) {
	gt := gethTx{path: path}
	if io, ok := keys["input"]; ok {
		s := newScanner(d.data, io, path+".input")
		raw := s.hexBytes()
		if s.err != nil {
			d.fail(s.err, nil)
			return
		}
		gt.hash = normalform.Hash(crypto.Keccak256Hash(raw))
		gt.hasHash = true
	}
	if co, ok := keys["context"]; ok {
		s := newScanner(d.data, co, path+".context")
		h := &header{}
		if s.objBegin() {
			for key, ok := s.objNext(); ok; key, ok = s.objNext() {
				switch string(key) {
				case "number":
					h.number = s.u64()
					h.hasNumber = true
				case "miner":
					h.miner = s.address()
				case "baseFee", "baseFeePerGas":
					h.baseFee = s.quantity()
					h.hasBase = true
				case "timestamp":
					h.timestamp = s.u64()
				default:
					s.skip()
				}
			}
		}
		if s.err != nil {
			d.fail(s.err, gtHash(&gt))
			return
		}
		g.headers = append(g.headers, h)
	}
	s := newScanner(d.data, keys["result"], path+".result")
	f := gethFrame(s, 0)
	if s.err != nil {
		d.fail(s.err, gtHash(&gt))
		return
	}
	gt.root = f
	g.geth = append(g.geth, gt)
}

func gtHash(g *gethTx) *normalform.Hash {
	if g.hasHash {
		return &g.hash
	}
	return nil
}

// txHashAt makes a best effort to read "transactionHash" (or "txHash") of
// a malformed element, so that its failure is charged to its transaction.
func (d *decoder) txHashAt(off int) *normalform.Hash {
	s := newScanner(d.data, off, "")
	if !s.objBegin() {
		return nil
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		if string(key) == "transactionHash" || string(key) == "txHash" {
			h := s.hash()
			if s.err != nil {
				return nil
			}
			return &h
		}
		s.skip()
	}
	return nil
}

// --- groups -------------------------------------------------------------

type gethTx struct {
	root    *frame
	hash    normalform.Hash
	hasHash bool
	path    string
}

// group is everything read from one bundle (or one top-level document):
// traces, logs, receipts and headers that describe the same transactions.
type group struct {
	d         *decoder
	geth      []gethTx
	parity    []*pframe
	logs      []rlog
	logsGiven bool
	receipts  []*receipt
	headers   []*header
	badTx     map[normalform.Hash]bool
	badOrder  []normalform.Hash
}

func newGroup(d *decoder) *group { return &group{d: d, badTx: map[normalform.Hash]bool{}} }

// failed records an element's failure; when its transaction is known, the
// whole transaction is left out (its data is incomplete) and the others go on.
func (g *group) failed(tx *normalform.Hash, err *scanError) {
	g.d.fail(err, tx)
	if tx != nil && !g.badTx[*tx] {
		g.badTx[*tx] = true
		g.badOrder = append(g.badOrder, *tx)
	}
}

// assemble turns the group's pieces into transactions.
func (g *group) assemble() {
	rcpt := map[normalform.Hash]*receipt{}
	for _, r := range g.receipts {
		rcpt[r.hash] = r
	}
	body := map[normalform.Hash]*bodyTx{}
	for _, h := range g.headers {
		for i := range h.txs {
			body[h.txs[i].hash] = &h.txs[i]
		}
	}
	type item struct {
		tx    *normalform.Tx
		order int
	}
	var out []item
	emit := func(tx *normalform.Tx, order int) { out = append(out, item{tx, order}) }

	// geth-shape transactions
	for i, gt := range g.geth {
		if !gt.hasHash && len(g.geth) == 1 && len(g.receipts) == 1 {
			gt.hash, gt.hasHash = g.receipts[0].hash, true
		}
		if !gt.hasHash {
			for _, bt := range body {
				if len(g.geth) == len(body) && bt.hasIndex && bt.index == i {
					gt.hash, gt.hasHash = bt.hash, true
				}
			}
		}
		tx := &normalform.Tx{Shape: "geth"}
		tx.Meta.Hash, tx.Meta.HasHash = gt.hash, gt.hasHash
		g.meta(tx, rcpt, body)
		if !tx.Meta.HasIndex && len(g.geth) > 1 {
			tx.Meta.Index, tx.Meta.HasIndex = i, true
		}
		if err := g.d.build(tx, gt.root); err != nil {
			g.d.fail(err, gtHash(&gt))
			continue
		}
		emit(tx, i)
	}

	// parity-shape transactions: group frames by transaction
	if len(g.parity) > 0 {
		byTx := map[normalform.Hash][]*pframe{}
		var order []normalform.Hash
		var noHash []*pframe
		for _, p := range g.parity {
			if !p.hasTx {
				noHash = append(noHash, p)
				continue
			}
			if _, ok := byTx[p.txHash]; !ok {
				order = append(order, p.txHash)
			}
			byTx[p.txHash] = append(byTx[p.txHash], p)
		}
		if len(noHash) > 0 {
			if len(order) == 0 && len(g.receipts) <= 1 {
				var h normalform.Hash
				if len(g.receipts) == 1 {
					h = g.receipts[0].hash
				}
				order = append(order, h)
				byTx[h] = noHash
			} else {
				g.d.failMsg(nil, noHash[0].path, fmt.Sprintf("%d trace frames have no transactionHash and cannot be assigned to a transaction", len(noHash)))
			}
		}
		logsByTx := map[normalform.Hash][]rlog{}
		for _, l := range g.logs {
			logsByTx[l.txHash] = append(logsByTx[l.txHash], l)
		}
		for n, h := range order {
			if g.badTx[h] {
				continue
			}
			hp := h
			tx := &normalform.Tx{Shape: "parity"}
			tx.Meta.Hash, tx.Meta.HasHash = h, h != (normalform.Hash{})
			frames := byTx[h]
			if frames[0].hasBlock {
				tx.Meta.Block, tx.Meta.HasBlock = frames[0].block, true
			}
			if frames[0].hasPos {
				tx.Meta.Index, tx.Meta.HasIndex = frames[0].txPos, true
			}
			g.meta(tx, rcpt, body)
			var logs []rlog
			switch {
			case g.logsGiven:
				logs = logsByTx[h]
				if len(g.parity) > 0 && len(order) == 1 && len(logsByTx) == 1 && len(logs) == 0 {
					// logs without transactionHash, single transaction
					for _, l := range logsByTx {
						logs = l
					}
				}
			case rcpt[h] != nil:
				logs = rcpt[h].logs
			default:
				g.d.failMsg(&hp, frames[0].path, "a Parity-style trace carries no logs: give the transaction's logs (\"logs\" from eth_getLogs, or \"receipts\") so that token transfers can be seen")
				continue
			}
			root, serr := linkParity(frames)
			if serr != nil {
				g.d.fail(serr, &hp)
				continue
			}
			if serr := attribute(root, logs); serr != nil {
				g.d.fail(serr, &hp)
				continue
			}
			if err := g.d.build(tx, root); err != nil {
				g.d.fail(err, &hp)
				continue
			}
			emit(tx, len(g.geth)+n)
		}
	}
	if len(g.geth) == 0 && len(g.parity) == 0 && len(g.badTx) == 0 && (len(g.receipts) > 0 || len(g.headers) > 0 || len(g.logs) > 0) {
		g.d.failMsg(nil, "$", "the input has receipts, logs or a block header but no trace: nothing to analyse")
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].tx.Meta, out[j].tx.Meta
		if a.HasBlock && b.HasBlock && a.Block != b.Block {
			return a.Block < b.Block
		}
		if a.HasIndex && b.HasIndex && a.HasBlock == b.HasBlock && a.Block == b.Block {
			return a.Index < b.Index
		}
		return out[i].order < out[j].order
	})
	for _, it := range out {
		g.d.res.Txs = append(g.d.res.Txs, it.tx)
	}
}

// meta fills a transaction's metadata from its receipt, block body and
// header.
func (g *group) meta(tx *normalform.Tx, rcpt map[normalform.Hash]*receipt, body map[normalform.Hash]*bodyTx) {
	m := &tx.Meta
	if r := rcpt[m.Hash]; m.HasHash && r != nil {
		m.HasReceipt = true
		m.Status, m.Type, m.GasUsed = r.status, r.typ, r.gasUsed
		m.From, m.HasFrom = r.from, true
		if r.hasTo {
			m.To, m.HasTo = r.to, true
		}
		if r.hasBlock {
			m.Block, m.HasBlock = r.block, true
		}
		if r.hasIndex {
			m.Index, m.HasIndex = r.index, true
		}
		if r.hasPrice {
			m.EffectiveGasPrice = r.gasPrice
		} else if bt := body[m.Hash]; bt != nil && bt.hasPrice {
			m.EffectiveGasPrice = bt.gasPrice // pre-London receipts
		} else {
			m.HasReceipt = false
			tx.Notes = append(tx.Notes, "receipt has no effectiveGasPrice and no block body gives the gas price: costs unknown")
		}
	}
	if bt := body[m.Hash]; m.HasHash && bt != nil {
		if !m.HasIndex && bt.hasIndex {
			m.Index, m.HasIndex = bt.index, true
		}
		if !m.HasFrom && bt.from != (normalform.Address{}) {
			m.From, m.HasFrom = bt.from, true
		}
	}
	var h *header
	if len(g.headers) == 1 {
		h = g.headers[0]
	} else {
		for _, x := range g.headers {
			if m.HasBlock && x.hasNumber && x.number == m.Block {
				h = x
			}
		}
	}
	if h != nil && (!m.HasBlock || !h.hasNumber || h.number == m.Block) {
		m.HasHeader = true
		m.Miner, m.Timestamp = h.miner, h.timestamp
		m.BaseFee, m.HasBaseFee = h.baseFee, h.hasBase
		if h.hasNumber && !m.HasBlock {
			m.Block, m.HasBlock = h.number, true
		}
	}
}

// linkParity builds the frame tree of one transaction from its flat frames.
func linkParity(frames []*pframe) (*frame, *scanError) {
	sorted := make([]*pframe, len(frames))
	copy(sorted, frames)
	sort.SliceStable(sorted, func(i, j int) bool { return lessAddr(sorted[i].addr, sorted[j].addr) })
	if len(sorted[0].addr) != 0 {
		return nil, &scanError{path: sorted[0].path, offset: -1, msg: "the transaction has no top-level frame (traceAddress [])"}
	}
	root := &sorted[0].frame
	stack := []*frame{root}
	for _, p := range sorted[1:] {
		f := &p.frame
		depth := len(p.addr)
		if depth > len(stack) {
			return nil, &scanError{path: p.path, offset: -1, msg: fmt.Sprintf("frame %v has no parent frame %v", p.addr, p.addr[:depth-1])}
		}
		stack = stack[:depth]
		parent := stack[depth-1]
		if p.addr[depth-1] != len(parent.calls) {
			if p.addr[depth-1] < len(parent.calls) {
				return nil, &scanError{path: p.path, offset: -1, msg: fmt.Sprintf("frame %v appears twice", p.addr)}
			}
			return nil, &scanError{path: p.path, offset: -1, msg: fmt.Sprintf("frame %v is missing its sibling %v", p.addr, append(append([]int{}, p.addr[:depth-1]...), len(parent.calls)))}
		}
		f.depth = depth
		parent.calls = append(parent.calls, f)
		stack = append(stack, f)
	}
	for _, p := range sorted {
		if p.subtr != len(p.calls) {
			return nil, &scanError{path: p.path, offset: -1, msg: fmt.Sprintf("frame %v declares %d subtraces but %d are present (incomplete trace)", p.addr, p.subtr, len(p.calls))}
		}
	}
	return root, nil
}

func lessAddr(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}
