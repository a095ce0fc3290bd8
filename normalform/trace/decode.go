package trace

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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

	// Limits. Zero takes the default; a negative value lifts the limit.
	//
	// MaxBytes bounds the size of the input: a larger one is refused whole,
	// before any parsing (default DefaultMaxBytes).
	MaxBytes int
	// MaxDepth bounds the nesting of call frames below the top frame: a
	// transaction nested deeper fails (default and ceiling: the EVM's own
	// limit, 1025; a negative value means that ceiling).
	MaxDepth int
	// MaxTransfers bounds the transfers of one transaction: a transaction
	// with more fails, naming the limit (default DefaultMaxTransfers).
	MaxTransfers int
}

// Default limits (Options).
const (
	// DefaultMaxBytes is 1 GiB: far above any block bundle seen on
	// mainnet, low enough to refuse a runaway input before it is parsed.
	DefaultMaxBytes = 1 << 30
	// DefaultMaxTransfers is 262144: a 60M-gas block holds fewer than
	// 40000 Transfer events, and every transfer costs memory in T0.
	DefaultMaxTransfers = 1 << 18
)

// Messages of the limits: each names the limit and its value.
const (
	limitBytesMsg     = "the input is %d bytes, over the limit of %d bytes (flowq --max-bytes)"
	limitDepthMsg     = "call frames nested %d deep, deeper than the limit of %d (flowq --max-depth)"
	limitTransfersMsg = "more than %d transfers in one transaction, over the limit of %d (flowq --max-transfers)"
)

func (o *Options) limits() {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxDepth <= 0 || o.MaxDepth > maxCallDepth {
		o.MaxDepth = maxCallDepth
	}
	if o.MaxTransfers == 0 {
		o.MaxTransfers = DefaultMaxTransfers
	}
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

// Paths in errors are kept short: a path of more than pathKeep keys
// keeps its first and last pathKeep/2, with the count of those left out
// between them ($.result.calls[0]…(1,014 more)….calls[0]), and a key
// longer than keyKeep bytes is clipped.
const (
	pathKeep = 12
	keyKeep  = 48
)

// shortPath abbreviates a JSON path for an error (see pathKeep).
func shortPath(p string) string {
	// A segment is a key with the indexes after it (.calls[0]); it
	// begins at a '.' (a key holding one is cut in two, which only moves
	// where the path is shortened).
	var segs []string
	start := 0
	for i := 1; i < len(p); i++ {
		if p[i] == '.' {
			segs = append(segs, p[start:i])
			start = i
		}
	}
	segs = append(segs, p[start:])
	long := false
	for i, s := range segs {
		if len(s) > keyKeep {
			segs[i] = clipUTF8(s, keyKeep) + "…"
			long = true
		}
	}
	if len(segs) <= pathKeep+1 { // the root, and pathKeep segments
		if !long {
			return p
		}
		return strings.Join(segs, "")
	}
	head, tail := segs[:1+pathKeep/2], segs[len(segs)-pathKeep/2:]
	left := len(segs) - len(head) - len(tail)
	return strings.Join(head, "") + fmt.Sprintf("…(%s more)…", groupThousands(left)) + strings.Join(tail, "")
}

// clipUTF8 cuts s to at most n bytes, not inside a UTF-8 sequence.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Result is what Decode returns: the transactions it could decode, in input
// order, and an error for each transaction (or part of the input) it could
// not. One bad transaction never hides the others.
type Result struct {
	Txs    []*normalform.Tx
	Errors []*Error
	// BlockTxs is, for each block whose header the input gives with its
	// number and its transaction list (hashes or objects), the number of
	// transactions the block holds: block analysis reads it to report the
	// last transactions of a block missing from the input
	// (block.AnalyzeCount). Blocks without such a header are not listed.
	BlockTxs map[uint64]int
}

// Decode reads any of the supported input shapes (see the package
// documentation) and builds each transaction's T0.
func Decode(data []byte, opt Options) *Result {
	if opt.Config == nil {
		opt.Config = normalform.DefaultConfig()
	}
	opt.limits()
	res := &Result{}
	if opt.MaxBytes > 0 && len(data) > opt.MaxBytes {
		res.Errors = append(res.Errors, &Error{Source: opt.Source, Offset: -1, Msg: fmt.Sprintf(limitBytesMsg, len(data), opt.MaxBytes)})
		return res
	}
	d, _ := decoders.Get().(*decoder)
	if d == nil {
		d = new(decoder)
	}
	d.data, d.opt, d.res = data, opt, res
	defer d.release()
	d.document()
	return res
}

// decoders keeps decoders between documents: their working memory (the
// attributor's, linkParity's, build's, the spare lists, the scanners'
// tables; the hash and byte chunks, which grow with a document's
// topics and data, up to about half of them), is then not allocated
// and collected again for every block decoded.
var decoders sync.Pool

// release empties everything the decoder holds of this document (each
// pointer into its input, its frames or its result), so that a decoder
// waiting in the pool keeps nothing alive, and puts it back.
func (d *decoder) release() {
	d.data, d.res, d.opt = nil, nil, Options{}
	d.keyScan.restart(nil, 0, false)
	clearAll(d.keyBuf)
	clearAll(d.spareParity)
	clearAll(d.spareLogs)
	clearAll(d.linkSorted)
	clearAll(d.linkStack)
	clearAll(d.callSlab)
	clearAll(d.buildScratch)
	clearAll(d.buildLeaves)
	clearAll(d.logBuf)
	clearAll(d.logTmp)
	clearAll(d.callBuf)
	clearAll(d.callTmp)
	a := &d.attr
	clearAll(a.slots)
	clearAll(a.arena)
	clearAll(a.frames)
	clearAll(a.logSlab)
	clearAll(a.rows)
	decoders.Put(d)
}

// clearAll zeroes s up to its capacity.
func clearAll[E any](s []E) { clear(s[:cap(s)]) }

type decoder struct {
	data    []byte
	opt     Options
	res     *Result
	keyScan scanner // keysAt's, reused
	keyBuf  keySet  // classifyAt's, reused
	// A group's lists of frames and logs, handed to the next group once
	// it is assembled (spare).
	spareParity []*pframe
	spareLogs   []rlog
	attr        attributor // attribute's working memory, reused
	// linkParity's working memory, reused from one transaction to the
	// next: the sorted copy (when the frames come out of order), the
	// path of open frames, and the slab children lists are carved from.
	linkSorted []*pframe
	linkStack  []*frame
	callSlab   []*frame
	// build's stack of children (builder.scratch) and its leaves waiting
	// for their transfer's address (builder.leaves), reused.
	buildScratch []*normalform.Node
	buildLeaves  []pendingLeaf
	// The document scanner's tables of what it has read (memoSeps).
	seps  []sepMemo
	hexes *[hexSlots]hexMemo
	// settleLogs' stack of pins.
	pinStack []int
	// The document scanner's last chunks of ints, hashes and bytes, and
	// of logs and children lists, with their stacks (scanner.logs, calls).
	intBuf           []int
	hashBuf          []normalform.Hash
	byteBuf          []byte
	logBuf, logTmp   []rlog
	callBuf, callTmp []*frame
}

func (d *decoder) fail(sErr *scanError, tx *normalform.Hash) {
	path := sErr.path
	if path == "" {
		path = locate(d.data, sErr.offset)
	}
	e := &Error{Source: d.opt.Source, Path: shortPath(path), Offset: sErr.offset, Msg: sErr.msg}
	if tx != nil {
		e.Tx, e.HasTx = *tx, true
	}
	d.res.Errors = append(d.res.Errors, e)
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

// keysAt lists the keys of the object at offset off with their value
// offsets. It does not decode the values, and it steps over them with
// skipLax: it only finds where they are. The scanner that reads the object
// afterwards (decoding it, or skipDecoded) validates every byte of it.
func (d *decoder) keysAt(off int) (keySet, *scanError) {
	return d.keysInto(make(keySet, 0, 16), off)
}

// classifyAt classifies the object at off, its keys listed in a buffer
// reused from one call to the next.
func (d *decoder) classifyAt(off int) (kind, *scanError) {
	keys, err := d.keysInto(d.keyBuf[:0], off)
	d.keyBuf = keys[:0]
	if err != nil {
		return kUnknown, err
	}
	return classify(keys), nil
}

// keysInto is keysAt appending to keys.
func (d *decoder) keysInto(keys keySet, off int) (keySet, *scanError) {
	s := &d.keyScan
	s.restart(d.data, off, true)
	if !s.objBegin() {
		return nil, s.err
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		keys = append(keys, keyOff{key, s.here()})
		s.skipLax()
	}
	return keys, s.err
}

// keySet is an object's keys with the offsets of their values, in input
// order: a handful of keys, searched linearly, without allocating a string
// per key.
type keySet []keyOff

type keyOff struct {
	key []byte
	off int
}

// at returns the offset of the value of key k (the last one when k
// repeats, as a map would keep).
func (ks keySet) at(k string) (int, bool) {
	for i := len(ks) - 1; i >= 0; i-- {
		if string(ks[i].key) == k {
			return ks[i].off, true
		}
	}
	return 0, false
}

// distinct is the number of different keys.
func (ks keySet) distinct() int {
	n := 0
	for i := range ks {
		if off, _ := ks[i:].at(string(ks[i].key)); off == ks[i].off {
			n++ // the last key of its name: each name counted once
		}
	}
	return n
}

// The keys classify looks at, as bits of a set.
const (
	ckJsonrpc = 1 << iota
	ckID
	ckResult
	ckError
	ckGenesis
	ckContext
	ckInput
	ckParentHash
	ckMiner
	ckStateRoot
	ckTransactionHash
	ckCumulativeGasUsed
	ckLogsBloom
	ckGasUsed
	ckStatus
	ckTopics
	ckAction
	ckTraceAddress
	ckTxHash
	ckFrom
	ckType
	ckCalls
	ckGas
	ckTraces
	ckReceipts
	ckBlock
	ckHeader
	ckLogs
	ckTrace
)

// classBit is the bit of a key classify looks at (0 for any other key): a
// switch, not a map, since it is asked for every key of the first Parity
// frame of each bundle (parityFirst).
func classBit(key []byte) uint32 {
	switch string(key) {
	case "jsonrpc":
		return ckJsonrpc
	case "id":
		return ckID
	case "result":
		return ckResult
	case "error":
		return ckError
	case "genesis":
		return ckGenesis
	case "context":
		return ckContext
	case "input":
		return ckInput
	case "parentHash":
		return ckParentHash
	case "miner":
		return ckMiner
	case "stateRoot":
		return ckStateRoot
	case "transactionHash":
		return ckTransactionHash
	case "cumulativeGasUsed":
		return ckCumulativeGasUsed
	case "logsBloom":
		return ckLogsBloom
	case "gasUsed":
		return ckGasUsed
	case "status":
		return ckStatus
	case "topics":
		return ckTopics
	case "action":
		return ckAction
	case "traceAddress":
		return ckTraceAddress
	case "txHash":
		return ckTxHash
	case "from":
		return ckFrom
	case "type":
		return ckType
	case "calls":
		return ckCalls
	case "gas":
		return ckGas
	case "traces":
		return ckTraces
	case "receipts":
		return ckReceipts
	case "block":
		return ckBlock
	case "header":
		return ckHeader
	case "logs":
		return ckLogs
	case "trace":
		return ckTrace
	}
	return 0
}

func classify(keys keySet) kind {
	// The set of keys present, looked up once each.
	var set uint32
	for i := range keys {
		set |= classBit(keys[i].key)
	}
	return classifySet(set, keys)
}

// classifySet is classify given the set of keys present; keys is read only
// to tell a debug_traceBlock entry by its number of keys, after every
// other kind but a callTracer frame and a bundle has been ruled out.
func classifySet(set uint32, keys keySet) kind {
	has := func(bits uint32) bool { return set&bits != 0 } // any of them
	switch {
	case has(ckJsonrpc) || (has(ckID) && has(ckResult|ckError)):
		return kEnvelope
	case has(ckResult) && has(ckGenesis|ckContext|ckInput):
		return kTracetest
	case has(ckParentHash | ckMiner | ckStateRoot):
		return kBlock
	case has(ckTransactionHash) && has(ckCumulativeGasUsed|ckLogsBloom|ckGasUsed|ckStatus):
		return kReceipt
	case has(ckTopics):
		return kLog
	case has(ckAction | ckTraceAddress):
		return kParityFrame
	case has(ckTxHash) || (has(ckResult) && keys.distinct() <= 3):
		return kGethItem
	case has(ckFrom) && has(ckType|ckCalls|ckGas):
		// before bundles: a callTracer frame traced withLog has "logs"
		return kGethFrame
	case has(ckTraces | ckReceipts | ckBlock | ckHeader | ckLogs | ckTrace):
		return kBundle
	}
	return kUnknown
}

// bundleKeys are the keys of a bundle object. An object whose first key is
// one of them is read as a bundle in a single pass.
var bundleKeys = map[string]bool{"traces": true, "trace": true, "logs": true, "receipts": true, "block": true, "header": true}

// document dispatches on the top-level value.
func (d *decoder) document() {
	s := newScanner(d.data, 0)
	if fastPaths {
		s.memoSeps(d)
	}
	// The chunks of ints, hashes and bytes the readers cut from: the last
	// document's (nothing of it is alive), kept for the next one.
	s.intBuf, s.hashBuf, s.byteBuf = d.intBuf[:0], d.hashBuf[:0], d.byteBuf[:0]
	s.logBuf, s.logTmp, s.callBuf, s.callTmp = d.logBuf[:0], d.logTmp[:0], d.callBuf[:0], d.callTmp[:0]
	defer func() {
		d.intBuf, d.hashBuf, d.byteBuf = s.intBuf[:0], s.hashBuf[:0], s.byteBuf[:0]
		d.logBuf, d.logTmp, d.callBuf, d.callTmp = s.logBuf[:0], s.logTmp[:0], s.callBuf[:0], s.callTmp[:0]
	}()
	defer s.release()
	switch s.peek() {
	case '{':
		g := newGroup(d)
		d.object(s, g)
		g.cut = s.err != nil
		g.assemble()
	case '[':
		d.topArray(s)
	default:
		s.unexpected("a JSON object or array")
	}
	if s.err == nil {
		s.end()
	}
	if s.err != nil && s.err != errStop {
		d.fail(s.err, nil)
	}
}

// topArray handles a top-level list: of bundles (one group each), or of
// JSON-RPC responses, frames, receipts or logs (one group for the list).
func (d *decoder) topArray(s *scanner) {
	first := s.i + 1
	for first < len(d.data) && isSpace(d.data[first]) {
		first++
	}
	if first < len(d.data) && d.data[first] == '{' {
		if k, err := d.classifyAt(first); err == nil && (k == kBundle || k == kTracetest) {
			if !s.arrBegin() {
				return
			}
			depth := len(s.path)
			for s.arrNext() {
				off := s.i
				g := newGroup(d)
				d.object(s, g)
				g.cut = s.err != nil
				g.assemble()
				s.reuse()
				g.spare()
				if !d.resync(s, depth, off, nil) {
					return
				}
			}
			return
		}
	}
	g := newGroup(d)
	d.array(s, g, kUnknown)
	g.cut = s.err != nil
	g.assemble()
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// resync is called after each element of a list. If the element failed,
// it reports the error (charged to the element's transaction when that can
// be read) and skips the element structurally (skipLax: the element has
// failed already, so its grammar is not checked again), so that the next
// one can be read. It returns false when the list cannot be read further (a syntax
// error: the input is truncated or is not JSON), after reporting it.
func (d *decoder) resync(s *scanner, depth, off int, g *group) bool {
	if s.err == nil {
		return true
	}
	if s.err == errStop {
		return false
	}
	elemErr := s.err
	s.err = nil
	s.path = s.path[:depth]
	s.i = off
	s.skipLax()
	syntax := s.err != nil
	tx := d.txHashAt(off)
	if g != nil {
		g.failed(tx, elemErr)
	} else {
		d.fail(elemErr, tx)
	}
	if syntax {
		// The element is not well-formed JSON: nothing after it can be
		// found. Its error (the more precise one) has been reported.
		s.err = errStop
		return false
	}
	return true
}

// errStop unwinds the decoding of a document whose syntax error has
// already been reported.
var errStop = &scanError{msg: "stopped"}

// object reads one object of any kind into g, leaving s after it.
func (d *decoder) object(s *scanner, g *group) {
	off := s.here()
	if k, ok := d.firstKey(off); ok && bundleKeys[string(k)] {
		d.bundle(s, g)
		return
	}
	keys, err := d.keysAt(off)
	if err != nil {
		s.err = err
		return
	}
	k := classify(keys)
	if k == kEnvelope || k == kTracetest {
		// Its values are read by scanners of their own, at the offsets
		// keysAt found: validate the whole object first, so that a
		// malformed part nobody decodes (a tracer test's "genesis") fails
		// the object before anything is taken from it.
		skipDecoded(s)
		if s.err != nil {
			return
		}
	}
	switch k {
	case kEnvelope:
		if eo, ok := keys.at("error"); ok && d.data[eo] != 'n' {
			msg := "the node answered with a JSON-RPC error"
			if ek, _ := d.keysAt(eo); ek != nil {
				if mo, ok := ek.at("message"); ok {
					msg += ": " + d.text(mo)
				}
			} else {
				msg += ": " + d.text(eo)
			}
			g.failed(nil, errAt(eo, msg))
			return
		}
		if ro, ok := keys.at("result"); ok {
			if d.data[ro] == 'n' {
				// A node answers null for a transaction or block it does not
				// have (unknown hash, pruned state, a block not yet mined).
				g.failed(nil, errAt(ro, "the node returned null: it does not have this transaction or block (unknown hash, or pruned history?)"))
				return
			}
			sub := newScanner(d.data, ro)
			d.value(sub, g, kUnknown)
			if sub.err != nil {
				s.err = sub.err
				return
			}
		}
	case kTracetest:
		d.tracetest(keys, g)
	case kBundle:
		d.bundle(s, g)
	default:
		d.single(s, k, g)
	}
}

// skipDecoded steps over, and validates, an object that is decoded through
// scanners of their own, whatever its depth: the decoding checks the depth
// of what it reads.
func skipDecoded(s *scanner) {
	s.anyDepth = true
	s.skip()
	s.anyDepth = false
}

// text renders the value at off for a message: a string's content, or
// the value's JSON text, clipped.
func (d *decoder) text(off int) string {
	s := newScanner(d.data, off)
	if s.peek() == '"' {
		if str := s.rawString(); s.err == nil {
			return clip(str)
		}
	}
	s = newScanner(d.data, off)
	start := s.here()
	s.skipLax()
	return clip(d.data[start:s.i])
}

// firstKey returns the first key of the object at off (a slice of the
// input, or of its unescaped copy).
func (d *decoder) firstKey(off int) ([]byte, bool) {
	s := &d.keyScan
	s.restart(d.data, off, false)
	if !s.objBegin() {
		return nil, false
	}
	return s.objNext()
}

// value reads a value that is an object, a list of objects, or null.
func (d *decoder) value(s *scanner, g *group, hint kind) {
	switch s.peek() {
	case '{':
		if hint == kUnknown {
			d.object(s, g)
		} else {
			d.single(s, hint, g)
		}
	case '[':
		d.array(s, g, hint)
	case 'n':
		s.isNull()
	default:
		s.unexpected("an object or an array")
	}
}

// array reads the elements of a list in one pass. Its elements are of one
// kind (judged from the first unless hint says), except JSON-RPC responses
// and bundles, which are judged one by one. A bad element is reported and
// skipped; the others are still read.
func (d *decoder) array(s *scanner, g *group, hint kind) {
	if !s.arrBegin() {
		return
	}
	depth := len(s.path)
	k := hint
	perElement := false
	for s.arrNext() {
		off := s.i
		if k == kUnknown && !perElement && fastPaths && d.parityFirst(s, g, off) {
			k = kParityFrame // and the element has been read
			continue
		}
		if k == kUnknown && !perElement {
			kk, err := d.classifyAt(off)
			if err != nil {
				s.err = err
				if !d.resync(s, depth, off, g) {
					return
				}
				continue
			}
			if k = kk; k == kEnvelope || k == kBundle || k == kTracetest {
				perElement = true
			}
		}
		if perElement {
			d.object(s, g)
		} else {
			d.single(s, k, g)
		}
		if !d.resync(s, depth, off, g) {
			return
		}
	}
}

// fastPaths turns on the decoder's shortcuts that rest on what it has
// read already (objNext's member text, the document scanner's table of
// addresses and hashes read before, parityFirst; hash()'s last hash and
// skipSame are on either way). Tests turn it off to
// check that the results are the same without them (TestFastPathsSame).
var fastPaths = true

// parityFirst reads the first element of a list, at off, as a Parity
// frame when its first key is "action" (as nodes write them), noting the
// classifying bits of its keys as it goes, and keeps it when classify
// would have judged the element a Parity frame from those keys: the list
// is then read in one pass, without the classifying pass over its first
// element (keysAt). Otherwise, or when the frame fails, it undoes what the
// read did to the scanner (position, nesting, error, the frame and
// traceAddress taken from its chunks) and returns false: the element goes
// the usual way, classified first, with the same result and errors as
// without this.
func (d *decoder) parityFirst(s *scanner, g *group, off int) bool {
	if k, ok := d.firstKey(off); !ok || string(k) != "action" {
		return false
	}
	depth, tooDeep := len(s.path), s.tooDeep
	pfMark, intBuf := s.pframes.mark(), s.intBuf
	var set uint32
	p := parityFrame(s, &set)
	if s.err == nil && classifySet(set, nil) == kParityFrame {
		if !p.reward {
			g.parity = append(g.parity, p)
		}
		return true
	}
	s.err, s.tooDeep = nil, tooDeep
	s.path = s.path[:depth]
	s.i = off
	s.pframes.undo(pfMark)
	s.intBuf = intBuf
	return false
}

// single reads one object whose kind is known.
func (d *decoder) single(s *scanner, k kind, g *group) {
	switch k {
	case kGethFrame:
		off := s.here()
		f := gethFrame(s, 0)
		if s.err == nil {
			g.geth = append(g.geth, gethTx{root: f, off: off})
		}
	case kGethItem:
		d.gethItem(s, g)
	case kParityFrame:
		p := parityFrame(s, nil)
		if s.err == nil && !p.reward {
			g.parity = append(g.parity, p)
		}
	case kReceipt:
		r := readReceipt(s)
		if s.err == nil {
			g.receipts = append(g.receipts, r)
		}
	case kLog:
		l := readLog(s, false)
		if s.err == nil {
			g.logs = append(g.logs, l)
			g.logsGiven = true
		}
	case kBlock:
		h := readHeader(s)
		if s.err == nil {
			g.headers = append(g.headers, h)
		}
	default:
		s.failAt(s.here(), "unrecognised object: not a trace frame, receipt, log, block or bundle")
	}
}

// gethItem reads {"txHash": ..., "result": frame} or {"txHash", "error"}.
func (d *decoder) gethItem(s *scanner, g *group) {
	gt := gethTx{off: s.here()}
	var errMsg string
	if !s.objBegin() {
		return
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		switch string(key) {
		case "txHash":
			if !s.isNull() {
				gt.hash, gt.hasHash = s.hash(), true
			}
		case "result":
			if !s.isNull() {
				gt.root = gethFrame(s, 0)
			}
		case "error":
			if !s.isNull() {
				if s.peek() == '"' {
					errMsg = s.str()
				} else {
					start := s.i
					s.skip()
					errMsg = clip(d.data[start:s.i])
				}
			}
		default:
			s.skip()
		}
	}
	if s.err != nil {
		return
	}
	switch {
	case errMsg != "":
		g.failed(gtHash(&gt), errAt(gt.off, "the node could not trace this transaction: "+errMsg))
	case gt.root == nil:
		g.failed(gtHash(&gt), errAt(gt.off, "debug_traceBlock entry has no \"result\""))
	default:
		g.geth = append(g.geth, gt)
	}
}

// bundle reads {"block", "receipts", "traces", "logs"} (any subset) in one
// pass; every value is read exactly as the node returned it.
func (d *decoder) bundle(s *scanner, g *group) {
	if !s.objBegin() {
		return
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		switch string(key) {
		case "block", "header":
			// A bad header is reported alone: the transactions are still
			// read, without what the header says.
			off, depth := s.here(), len(s.path)
			d.value(s, g, kBlock)
			if !d.resync(s, depth, off, g) {
				return
			}
		case "receipts":
			d.value(s, g, kReceipt)
		case "logs":
			g.logsGiven = true
			d.value(s, g, kLog)
		case "traces", "trace":
			d.value(s, g, kUnknown)
		default:
			s.skip()
		}
	}
}

// tracetest reads a go-ethereum tracer test file: {"genesis", "context",
// "input", "result"}. The transaction hash is the hash of the raw signed
// transaction in "input"; the block number and miner come from "context".
func (d *decoder) tracetest(keys keySet, g *group) {
	ro, _ := keys.at("result")
	gt := gethTx{off: ro}
	if io, ok := keys.at("input"); ok {
		s := newScanner(d.data, io)
		raw := s.hexBytes()
		if s.err != nil {
			g.failed(nil, s.err)
			return
		}
		gt.hash = normalform.Hash(crypto.Keccak256Hash(raw))
		gt.hasHash = true
	}
	if co, ok := keys.at("context"); ok {
		s := newScanner(d.data, co)
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
			g.failed(gtHash(&gt), s.err)
			return
		}
		g.headers = append(g.headers, h)
	}
	s := newScanner(d.data, ro)
	gt.root = gethFrame(s, 0)
	if s.err != nil {
		g.failed(gtHash(&gt), s.err)
		return
	}
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
	s := newScanner(d.data, off)
	s.anyDepth = true
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
		s.skipLax()
	}
	return nil
}

// --- groups -------------------------------------------------------------

type gethTx struct {
	root    *frame
	hash    normalform.Hash
	hasHash bool
	off     int
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
	// cut: the group could not be read to its end (its error is reported).
	// A Parity transaction's frames and logs may then be incomplete, so
	// none is assembled; callTracer trees are only kept when complete.
	cut bool
}

func newGroup(d *decoder) *group {
	return &group{d: d, parity: d.spareParity[:0], logs: d.spareLogs[:0]}
}

// spare hands the group's lists to the next group: it has been
// assembled, and no transaction keeps them.
func (g *group) spare() {
	clear(g.parity)
	clear(g.logs)
	g.d.spareParity, g.d.spareLogs = g.parity[:0], g.logs[:0]
	g.parity, g.logs = nil, nil
}

// failed records an element's failure; when its transaction is known, the
// whole transaction is left out (its data is incomplete) and the others go on.
func (g *group) failed(tx *normalform.Hash, err *scanError) {
	g.d.fail(err, tx)
	if tx != nil && !g.badTx[*tx] {
		if g.badTx == nil {
			g.badTx = map[normalform.Hash]bool{}
		}
		g.badTx[*tx] = true
		g.badOrder = append(g.badOrder, *tx)
	}
}

// assemble turns the group's pieces into transactions.
func (g *group) assemble() {
	// Maps only where there is something to find (a nil map reads empty).
	var rcpt map[normalform.Hash]*receipt
	if len(g.receipts) > 0 {
		rcpt = make(map[normalform.Hash]*receipt, len(g.receipts))
	}
	for _, r := range g.receipts {
		rcpt[r.hash] = r
	}
	var body map[normalform.Hash]*bodyTx
	for _, h := range g.headers {
		if body == nil && len(h.txs) > 0 {
			body = map[normalform.Hash]*bodyTx{}
		}
		for i := range h.txs {
			body[h.txs[i].hash] = &h.txs[i]
		}
		if h.hasNumber && h.hasTxs {
			if g.d.res.BlockTxs == nil {
				g.d.res.BlockTxs = map[uint64]int{}
			}
			g.d.res.BlockTxs[h.number] = len(h.txs)
		}
	}
	type item struct {
		tx    *normalform.Tx
		order int
	}
	var one [1]item // a bundle's one transaction, without an allocation
	out := one[:0]
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
		if gt.hasHash && g.badTx[gt.hash] {
			// A part of it did not decode (a malformed receipt field, a
			// log): its error names the part; the transaction is left
			// out whole rather than analysed without it (a receipt taken
			// for absent would make its costs "unknown").
			continue
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
	if len(g.parity) > 0 && !g.cut {
		// A bundle of a block names one transaction in all its frames:
		// its list is the group's, without a map or a copy.
		var byTx map[normalform.Hash][]*pframe
		var order []normalform.Hash
		var noHash []*pframe
		var oneHash [1]normalform.Hash
		if oneTxFrames(g.parity) {
			oneHash[0] = g.parity[0].txHash
			order = oneHash[:]
		} else {
			byTx = map[normalform.Hash][]*pframe{}
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
		}
		framesOf := func(h normalform.Hash) []*pframe {
			if byTx == nil {
				if h == oneHash[0] {
					return g.parity
				}
				return nil
			}
			return byTx[h]
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
				g.d.fail(errAt(noHash[0].off, fmt.Sprintf("%d trace frame(s) have no transactionHash and cannot be assigned to a transaction", len(noHash))), nil)
			}
		}
		logsByTx := map[normalform.Hash][]rlog{}
		if oneTx(g.logs) {
			// All the logs name one transaction (a bundle's): no copy.
			logsByTx[g.logs[0].txHash] = g.logs[:len(g.logs):len(g.logs)]
		} else {
			for _, l := range g.logs {
				logsByTx[l.txHash] = append(logsByTx[l.txHash], l)
			}
		}
		// Logs naming a transaction this input does not trace (nor fails)
		// belong to another transaction: with one transaction traced, its
		// logs are suspect, and it fails; with several, the input reports
		// them and the others go on.
		var foreign *scanError
		for i, l := range g.logs {
			if l.hasTx && framesOf(l.txHash) == nil && !g.badTx[l.txHash] {
				foreign = errAt(l.off, fmt.Sprintf("log %s names transaction %s in its transactionHash, which this input does not trace: a log of another transaction", logName(&g.logs[i], i), l.txHash.Hex()))
				break
			}
		}
		if foreign != nil && len(order) > 1 {
			g.d.fail(foreign, nil)
			foreign = nil
		}
		for n, h := range order {
			if g.badTx[h] {
				continue
			}
			hp := h
			tx := &normalform.Tx{Shape: "parity"}
			tx.Meta.Hash, tx.Meta.HasHash = h, h != (normalform.Hash{})
			frames := framesOf(h)
			if frames[0].hasBlock {
				tx.Meta.Block, tx.Meta.HasBlock = frames[0].block, true
			}
			if frames[0].hasPos {
				tx.Meta.Index, tx.Meta.HasIndex = frames[0].txPos, true
			}
			hdr := g.meta(tx, rcpt, body)
			if foreign != nil {
				g.d.fail(foreign, &hp)
				continue
			}
			var logs []rlog
			switch {
			case g.logsGiven:
				logs = logsByTx[h]
				if len(g.parity) > 0 && len(order) == 1 && len(logs) == 0 {
					// logs without transactionHash, single transaction
					logs = logsByTx[normalform.Hash{}]
				}
			case rcpt[h] != nil:
				logs = rcpt[h].logs
			default:
				g.d.fail(errAt(frames[0].off, "a Parity-style trace carries no logs: give the transaction's logs (\"logs\" from eth_getLogs, or \"receipts\") so that token transfers can be seen"), &hp)
				continue
			}
			if serr := checkLogs(h, logs, rcpt[h], !g.logsGiven, hdr); serr != nil {
				g.d.fail(serr, &hp)
				continue
			}
			root, serr := g.d.linkParity(frames)
			if serr != nil {
				g.d.fail(serr, &hp)
				continue
			}
			if serr := g.d.attr.attribute(root, logs); serr != nil {
				g.d.fail(serr, &hp)
				continue
			}
			if serr := checkEmitted(root); serr != nil {
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
	if !g.cut && len(g.geth) == 0 && len(g.parity) == 0 && (len(g.receipts) > 0 || len(g.headers) > 0 || len(g.logs) > 0) {
		// No trace: receipts-only mode (receipts.go).
		g.receiptsOnly(rcpt, body, emit)
	}
	slices.SortStableFunc(out, func(x, y item) int {
		a, b := &x.tx.Meta, &y.tx.Meta
		if a.HasBlock && b.HasBlock && a.Block != b.Block {
			return cmp.Compare(a.Block, b.Block)
		}
		if a.HasIndex && b.HasIndex && a.HasBlock == b.HasBlock && a.Block == b.Block {
			return cmp.Compare(a.Index, b.Index)
		}
		return cmp.Compare(x.order, y.order)
	})
	for _, it := range out {
		g.d.res.Txs = append(g.d.res.Txs, it.tx)
	}
}

// oneTxFrames reports whether every frame names the same transaction.
func oneTxFrames(frames []*pframe) bool {
	for _, p := range frames {
		if !p.hasTx || p.txHash != frames[0].txHash {
			return false
		}
	}
	return len(frames) > 0
}

// oneTx reports whether there are logs and all of them name the same
// transaction (or none).
func oneTx(logs []rlog) bool {
	if len(logs) == 0 {
		return false
	}
	for i := range logs[1:] {
		if logs[i+1].txHash != logs[0].txHash {
			return false
		}
	}
	return true
}

// meta fills a transaction's metadata from its receipt, block body and
// header, and returns the header (nil: none is the transaction's).
func (g *group) meta(tx *normalform.Tx, rcpt map[normalform.Hash]*receipt, body map[normalform.Hash]*bodyTx) *header {
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
		return h
	}
	return nil
}

// linkParity builds the frame tree of one transaction from its flat frames.
// Nodes list them in traceAddress order (depth first, which is the
// lexicographic order of traceAddress): such a list is linked as it is,
// without the sorted copy. The children lists are carved from one slab of
// the decoder's, handed out again to the next transaction (the frame tree
// lives until the transaction's T0 is built, and T0 keeps none of it).
func (d *decoder) linkParity(frames []*pframe) (*frame, *scanError) {
	byAddr := func(a, b *pframe) int { return slices.Compare(a.addr, b.addr) }
	sorted := frames
	if !slices.IsSortedFunc(frames, byAddr) {
		sorted = append(d.linkSorted[:0], frames...)
		slices.SortStableFunc(sorted, byAddr)
		d.linkSorted = sorted[:0]
		defer clear(sorted)
	}
	if len(sorted[0].addr) != 0 {
		return nil, errAt(sorted[0].off, "the transaction has no top-level frame (traceAddress [])")
	}
	if cap(d.callSlab) < len(sorted) {
		d.callSlab = make([]*frame, len(sorted))
	}
	slab := d.callSlab[:len(sorted)] // the last transaction's lists: it has been built
	root := &sorted[0].frame
	stack := append(d.linkStack[:0], root)
	defer func() { clear(stack); d.linkStack = stack[:0] }()
	for _, p := range sorted[1:] {
		f := &p.frame
		depth := len(p.addr)
		if depth == 0 {
			return nil, errAt(p.off, "frame [] appears twice")
		}
		if depth > len(stack) || !sameAddr(stack[depth-1].addr, p.addr[:depth-1]) {
			return nil, errAt(p.off, fmt.Sprintf("frame %v has no parent frame %v", p.addr, p.addr[:depth-1]))
		}
		stack = stack[:depth]
		parent := stack[depth-1]
		if p.addr[depth-1] != len(parent.calls) {
			if p.addr[depth-1] < len(parent.calls) {
				return nil, errAt(p.off, fmt.Sprintf("frame %v appears twice", p.addr))
			}
			return nil, errAt(p.off, fmt.Sprintf("frame %v is missing its sibling %v", p.addr, append(append([]int{}, p.addr[:depth-1]...), len(parent.calls))))
		}
		f.depth = depth
		if parent.calls == nil && parent.subtr > 0 {
			if n := min(parent.subtr, len(sorted)); n <= len(slab) {
				parent.calls, slab = slab[:0:n], slab[n:]
			} else {
				parent.calls = make([]*frame, 0, n)
			}
		}
		parent.calls = append(parent.calls, f)
		stack = append(stack, f)
	}
	for _, p := range sorted {
		if p.subtr != len(p.calls) {
			return nil, errAt(p.off, fmt.Sprintf("frame %v declares %d subtraces but %d are present (incomplete trace)", p.addr, p.subtr, len(p.calls)))
		}
	}
	return root, nil
}

func sameAddr(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
