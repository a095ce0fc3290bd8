package trace

import (
	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// maxCallDepth is the deepest call frame nesting the EVM allows: 1024 nested
// calls below the transaction's own frame.
const maxCallDepth = 1025

// frame is one call frame as read from either trace shape, before T0 is
// built. Parity frames are linked into the same tree by traceAddress.
type frame struct {
	typ      normalform.CallType
	from, to normalform.Address
	value    uint256.Int
	hasValue bool
	failed   bool   // the frame's own error
	errMsg   string // the node's error text
	input    []byte // hex digits of the call data, undecoded (a slice of the input)
	output   []byte // hex digits of the return data (a slice of the input; nil when not given)
	calls    []*frame
	logs     []rlog // logs this frame emitted, each with its gap position
	off      int    // byte offset of the frame in the input, for errors
	depth    int
	addr     []int // Parity traceAddress
	subtr    int   // Parity subtraces
}

// rlog is one event log.
type rlog struct {
	addr   normalform.Address
	topics []normalform.Hash
	data   []byte
	pos    int // child calls of its frame that precede it
	index  int // logIndex in the receipt, or -1
	txHash normalform.Hash
	hasTx  bool
	off    int // byte offset in the input, for errors
}

// context is the address whose storage and identity the frame's code runs
// with: the log address of anything it emits.
func (f *frame) context() normalform.Address {
	if f.typ == normalform.DelegateCall || f.typ == normalform.CallCode {
		return f.from
	}
	return f.to
}

func callTypeOf(s []byte) (normalform.CallType, bool) {
	switch string(s) {
	case "CALL", "call":
		return normalform.Call, true
	case "STATICCALL", "staticcall":
		return normalform.StaticCall, true
	case "DELEGATECALL", "delegatecall":
		return normalform.DelegateCall, true
	case "CALLCODE", "callcode":
		return normalform.CallCode, true
	case "CREATE", "create":
		return normalform.Create, true
	case "CREATE2", "create2":
		return normalform.Create2, true
	case "SELFDESTRUCT", "selfdestruct", "suicide":
		return normalform.SelfDestruct, true
	}
	return 0, false
}

// gethFrame reads a callTracer frame ({"type","from","to","value","calls",
// "logs",...}) and its descendants.
func gethFrame(s *scanner, depth int) *frame {
	if depth > maxCallDepth {
		s.failf("call frames nested deeper than the EVM allows (%d)", maxCallDepth)
		return nil
	}
	f := s.newFrame()
	f.depth, f.off = depth, s.here()
	if !s.objBegin() {
		return nil
	}
	var typ []byte
	typOff := -1
	// The frame's children and logs are gathered on the scanner's stacks
	// and moved into its chunks after the last key (nested frames take
	// off what they gathered before they return).
	callsAt, logsAt := len(s.callTmp), len(s.logTmp)
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		switch string(key) {
		case "type":
			typOff = s.here()
			typ = s.rawString()
		case "from":
			f.from = s.address()
		case "to":
			f.to, _ = s.optAddress()
		case "value":
			if !s.isNull() {
				f.value = s.quantity()
				f.hasValue = true
			}
		case "error":
			if !s.isNull() {
				f.errMsg = s.str()
				f.failed = true
			}
		case "input":
			if s.isNull() {
				continue
			}
			f.input = s.rawHex()
		case "output":
			f.output = lenientHex(s)
		case "calls":
			if s.isNull() {
				continue
			}
			if s.arrBegin() {
				for s.arrNext() {
					if c := gethFrame(s, depth+1); c != nil {
						s.callTmp = append(s.callTmp, c)
					}
				}
			}
		case "logs":
			if s.isNull() {
				continue
			}
			if s.arrBegin() {
				for s.arrNext() {
					s.logTmp = append(s.logTmp, readLog(s, true))
				}
			}
		default:
			s.skip()
		}
	}
	f.calls, f.logs = s.calls(callsAt), s.logs(logsAt)
	if !s.ok() {
		return nil
	}
	if typ == nil {
		s.failAt(f.off, "call frame has no \"type\"")
		return nil
	}
	t, ok := callTypeOf(typ)
	if !ok {
		s.failAt(typOff, "unknown frame type "+quote(typ))
		return nil
	}
	f.typ = t
	logs := f.logs
	for i := range logs {
		if logs[i].pos > len(f.calls) {
			s.failAt(logs[i].off, "log position "+itoa(logs[i].pos)+" is past the frame's "+itoa(len(f.calls))+" calls: no frame can have emitted it")
			return nil
		}
		if i > 0 && logs[i].pos < logs[i-1].pos {
			s.failAt(logs[i].off, "log position "+itoa(logs[i].pos)+" comes before the position "+itoa(logs[i-1].pos)+" of the log before it: logs must be in execution order")
			return nil
		}
	}
	return f
}

// readLog reads a log in callTracer shape (with "position") or in receipt /
// eth_getLogs shape (with "logIndex", "transactionHash").
func readLog(s *scanner, wantPos bool) rlog {
	l := rlog{index: -1, off: s.here()}
	hasPos := false
	if !s.objBegin() {
		return l
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		switch string(key) {
		case "address":
			l.addr = s.address()
		case "topics":
			if s.arrBegin() {
				var buf [4]normalform.Hash // LOG0 to LOG4, copied into the scanner's chunk
				a := buf[:0]
				for s.arrNext() {
					a = append(a, s.hash())
				}
				l.topics = s.hashes(a)
			}
		case "data":
			l.data = s.hexBytes()
		case "position":
			l.pos = s.count()
			hasPos = true
		case "logIndex", "index":
			if s.isNull() {
				continue
			}
			l.index = s.count()
		case "transactionHash":
			if s.isNull() {
				continue
			}
			l.txHash = s.hash()
			l.hasTx = true
		case "blockHash":
			s.skipSame()
		default:
			s.skip()
		}
	}
	if s.ok() && wantPos && !hasPos {
		s.failf("log in a call frame has no \"position\" (trace it with callTracer and withLog)")
	}
	return l
}

// parityFrame reads one flat frame of trace_transaction / trace_block.
type pframe struct {
	frame
	txHash   normalform.Hash
	hasTx    bool
	txPos    int
	hasPos   bool
	block    uint64
	hasBlock bool
	reward   bool
}

// parityFrame reads one flat frame (a pframe). With keys non-nil, the
// classifying bits of the frame's own keys (classBit) are added to *keys.
func parityFrame(s *scanner, keys *uint32) *pframe {
	p := s.newPframe()
	p.off = s.here()
	p.subtr = -1
	if !s.objBegin() {
		return nil
	}
	var typ []byte
	var callType []byte
	typOff, callTypeOff := -1, -1
	var created normalform.Address
	var hasCreated, create2 bool
	var suicideAddr, refund normalform.Address
	var balance uint256.Int
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		if keys != nil {
			*keys |= classBit(key)
		}
		switch string(key) {
		case "type":
			typOff = s.here()
			typ = s.rawString()
		case "action":
			if !s.objBegin() {
				break
			}
			for k, ok := s.objNext(); ok; k, ok = s.objNext() {
				switch string(k) {
				case "from":
					p.from = s.address()
				case "to":
					p.to, _ = s.optAddress()
				case "value":
					p.value = s.quantity()
					p.hasValue = true
				case "callType":
					callTypeOff = s.here()
					callType = s.rawString()
				case "creationMethod": // Erigon, Reth: "create" or "create2"
					create2 = string(s.rawString()) == "create2"
				case "input", "init":
					if !s.isNull() {
						p.input = s.rawHex()
					}
				case "address":
					suicideAddr = s.address()
				case "refundAddress":
					refund = s.address()
				case "balance":
					balance = s.quantity()
				default:
					s.skip()
				}
			}
		case "result":
			if s.isNull() {
				continue
			}
			if !s.objBegin() {
				break
			}
			for k, ok := s.objNext(); ok; k, ok = s.objNext() {
				switch string(k) {
				case "address":
					created, hasCreated = s.optAddress()
				case "output":
					p.output = lenientHex(s)
				default:
					s.skip()
				}
			}
		case "error":
			if !s.isNull() {
				p.errMsg = s.str()
				p.failed = true
			}
		case "traceAddress":
			if s.arrBegin() {
				var buf [16]int
				a := buf[:0]
				for s.arrNext() {
					a = append(a, s.count())
				}
				p.addr = s.ints(a)
			}
			if len(p.addr) > maxCallDepth {
				s.failf("traceAddress deeper than the EVM allows (%d)", maxCallDepth)
			}
		case "subtraces":
			p.subtr = s.count()
		case "transactionHash":
			if !s.isNull() {
				p.txHash = s.hash()
				p.hasTx = true
			}
		case "transactionPosition":
			if !s.isNull() {
				p.txPos = s.count()
				p.hasPos = true
			}
		case "blockNumber":
			if !s.isNull() {
				p.block = s.u64()
				p.hasBlock = true
			}
		case "blockHash":
			s.skipSame()
		default:
			s.skip()
		}
	}
	if !s.ok() {
		return nil
	}
	switch string(typ) {
	case "call":
		t, ok := callTypeOf(callType)
		if !ok || t == normalform.Create || t == normalform.Create2 || t == normalform.SelfDestruct {
			s.failAt(max(callTypeOff, p.off), "unknown call type "+quote(callType))
			return nil
		}
		p.typ = t
	case "create":
		p.typ = normalform.Create
		if create2 {
			p.typ = normalform.Create2
		}
		if hasCreated {
			p.to = created
		}
	case "suicide", "selfdestruct":
		p.typ = normalform.SelfDestruct
		p.from, p.to, p.value, p.hasValue = suicideAddr, refund, balance, true
	case "reward":
		p.reward = true
	case "":
		s.failAt(p.off, "trace frame has no \"type\"")
		return nil
	default:
		s.failAt(typOff, "unknown frame type "+quote(typ))
		return nil
	}
	if p.subtr < 0 && !p.reward {
		p.subtr = 0
	}
	return p
}

// receipt is what flowq reads of eth_getTransactionReceipt.
type receipt struct {
	hash     normalform.Hash
	index    int
	hasIndex bool
	block    uint64
	hasBlock bool
	from, to normalform.Address
	hasTo    bool
	created  normalform.Address // contractAddress, for a creation
	status   normalform.Status
	typ      uint8
	gasUsed  uint64
	gasPrice uint256.Int
	hasPrice bool
	logs     []rlog
	hasLogs  bool
	bloom    bloom
	hasBloom bool
	off      int
}

func readReceipt(s *scanner) *receipt {
	r := s.newReceipt()
	r.off = s.here()
	hasHash := false
	logsAt := len(s.logTmp)
	if !s.objBegin() {
		return nil
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		switch string(key) {
		case "transactionHash":
			r.hash = s.hash()
			hasHash = true
		case "transactionIndex":
			r.index = s.count()
			r.hasIndex = true
		case "blockNumber":
			r.block = s.u64()
			r.hasBlock = true
		case "from":
			r.from = s.address()
		case "to":
			r.to, r.hasTo = s.optAddress()
		case "contractAddress":
			r.created, _ = s.optAddress()
		case "status":
			if s.isNull() {
				continue
			}
			switch s.u64() {
			case 1:
				r.status = normalform.StatusSuccess
			case 0:
				r.status = normalform.StatusFailed
			default:
				s.failf("receipt status must be 0 or 1")
			}
		case "type":
			if t := s.u64(); t > 255 {
				s.failf("transaction type %d is not a byte", t)
			} else {
				r.typ = uint8(t)
			}
		case "gasUsed":
			r.gasUsed = s.u64()
		case "effectiveGasPrice":
			if !s.isNull() {
				r.gasPrice = s.quantity()
				r.hasPrice = true
			}
		case "logs":
			r.hasLogs = true
			if s.arrBegin() {
				for s.arrNext() {
					s.logTmp = append(s.logTmp, readLog(s, false))
				}
			}
		case "logsBloom":
			r.bloom, r.hasBloom = readBloom(s)
		default:
			s.skip()
		}
	}
	r.logs = s.logs(logsAt)
	if s.ok() && !hasHash {
		s.failAt(r.off, "receipt has no transactionHash")
	}
	if !s.ok() {
		return nil
	}
	return r
}

// header is what flowq reads of eth_getBlockByNumber.
type header struct {
	number    uint64
	hasNumber bool
	miner     normalform.Address
	baseFee   uint256.Int
	hasBase   bool
	timestamp uint64
	txs       []bodyTx
	hasTxs    bool // the header lists its transactions (hashes or objects)
	bloom     bloom
	hasBloom  bool
}

// bodyTx is a transaction object of a block body (eth_getBlockByNumber with
// full transactions).
type bodyTx struct {
	hash     normalform.Hash
	index    int
	hasIndex bool
	from, to normalform.Address
	hasTo    bool
	gasPrice uint256.Int
	hasPrice bool
	typ      uint8
	value    uint256.Int // the value it sends (full transaction objects)
	hasValue bool
	hasFrom  bool // a full transaction object, not a hash
}

func readHeader(s *scanner) *header {
	h := &header{}
	if !s.objBegin() {
		return nil
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		switch string(key) {
		case "number":
			h.number = s.u64()
			h.hasNumber = true
		case "miner", "coinbase", "author":
			h.miner = s.address()
		case "baseFeePerGas":
			if !s.isNull() {
				h.baseFee = s.quantity()
				h.hasBase = true
			}
		case "timestamp":
			h.timestamp = s.u64()
		case "logsBloom":
			h.bloom, h.hasBloom = readBloom(s)
		case "transactions":
			if !s.arrBegin() {
				break
			}
			h.hasTxs = true
			for i := 0; s.arrNext(); i++ {
				if s.peek() == '"' {
					h.txs = append(h.txs, bodyTx{hash: s.hash(), index: i, hasIndex: true})
					continue
				}
				h.txs = append(h.txs, readBodyTx(s, i))
			}
		default:
			s.skip()
		}
	}
	if !s.ok() {
		return nil
	}
	return h
}

func readBodyTx(s *scanner, i int) bodyTx {
	t := bodyTx{index: i, hasIndex: true}
	if !s.objBegin() {
		return t
	}
	for key, ok := s.objNext(); ok; key, ok = s.objNext() {
		switch string(key) {
		case "hash":
			t.hash = s.hash()
		case "from":
			t.from = s.address()
			t.hasFrom = true
		case "to":
			t.to, t.hasTo = s.optAddress()
		case "value":
			if !s.isNull() {
				t.value = s.quantity()
				t.hasValue = true
			}
		case "gasPrice":
			if !s.isNull() {
				t.gasPrice = s.quantity()
				t.hasPrice = true
			}
		case "type":
			t.typ = uint8(s.u64())
		case "transactionIndex":
			if !s.isNull() {
				t.index = s.count()
			}
		default:
			s.skip()
		}
	}
	return t
}

func quote(b []byte) string {
	if b == nil {
		return "(missing)"
	}
	return "\"" + clip(b) + "\""
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	k := len(b)
	for i > 0 {
		k--
		b[k] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		k--
		b[k] = '-'
	}
	return string(b[k:])
}

// lenientHex reads a hex string's digits (without 0x) and skips anything
// else: return data is only ever evidence, never required.
func lenientHex(s *scanner) []byte {
	if s.peek() != '"' {
		s.skip()
		return nil
	}
	txt := s.rawString()
	if len(txt) >= 2 && txt[0] == '0' && (txt[1] == 'x' || txt[1] == 'X') {
		return txt[2:]
	}
	return nil
}

// readBloom reads a logsBloom: 0x and 512 hex digits (null, or any other
// value, is no bloom: it is only ever evidence).
func readBloom(s *scanner) (bloom, bool) {
	var b bloom
	h := lenientHex(s)
	if len(h) != 2*len(b) {
		return b, false
	}
	for i := range b {
		hi, lo := unhex(h[2*i]), unhex(h[2*i+1])
		if hi > 15 || lo > 15 {
			return bloom{}, false
		}
		b[i] = hi<<4 | lo
	}
	return b, true
}
