package trace

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// Parity-style traces (trace_transaction, trace_block) carry no logs; the
// receipt's logs are in execution order but not attached to frames. attribute
// puts each log back in a frame and a position within it.
//
// Execution visits the frames' "gaps" in a fixed order: frame F's gap 0, then
// F's first child subtree, then F's gap 1, and so on (an Euler tour). A log
// can sit in gap g of F only if F's execution context (the callee, or the
// caller for DELEGATECALL and CALLCODE) is the log's address, and F did not
// revert (receipts drop the logs of reverted frames), and F is not inside a
// STATICCALL (no log can be emitted there). Logs are in execution
// order, so an attribution is a non-decreasing map from logs to gaps. Among
// all such maps, attribute picks the one that maximises, in this order:
//
//  1. the number of logs whose frame was entered by the standard call that
//     emits exactly that event (transfer / transferFrom with the same
//     addresses and amount, deposit with the same value, withdraw with the
//     same amount, the ERC-721, ERC-1155 and ERC-6909 transfer calls, and
//     the PoolManager's mint and burn of its ERC-6909 claims), so
//     that two transfers of one token land in the two token calls that made
//     them. A DELEGATECALL frame is judged by its whole context chain (the
//     CALL into the proxy and the delegations below it), since a proxy may
//     forward the call under another selector;
//  2. the sum of the frames' depths, so that a proxy's log lands in the
//     DELEGATECALL frame that ran the implementation, not in the proxy frame;
//  3. then, on a tie, the latest gap: a log goes after the child calls of its
//     frame that it cannot be placed before (WETH9's Withdrawal follows the
//     value transfer it makes).
//
// The optimum is found by dynamic programming over each log's candidate gaps
// in O(total candidates). When no non-decreasing map exists, the log that
// cannot be placed is named in the error.

// attributor holds attribute's working memory, reused from one
// transaction to the next of a decoding (decoder.attr): after the first
// transactions, attributing a transaction's logs allocates nothing (the
// slab its frames' logs are cut from is reused too).
type attributor struct {
	slots  []attrSlot
	arena  []*frame
	frames []*frame // the frames that can emit, in walk order
	// The execution contexts (addresses) of the transaction's frames,
	// numbered in order of appearance: searched in ctxs while there are
	// few, through ctxOf (ctxMapped) beyond ctxLinear.
	ctxs      []normalform.Address
	ctxOf     map[normalform.Address]int32
	ctxMapped bool
	grp       []int32 // per slot: its context's number
	fgrp      []int32 // per frame: its context's number (-1: not looked up yet)
	gStart    []int32 // per context: where its slots start in cands (counting sort)
	cands     []int32 // slot numbers grouped by context, increasing within each
	fill      []int32 // per context: the next place of cands to fill
	cells     []attrCell
	rows      [][]attrCell
	assign    []int32
	count     []int32 // per frame: logs assigned to it
	// logSlab is what the frames' log lists are cut from, reused by the
	// next transaction (T0 keeps none of it).
	logSlab []rlog
}

type attrSlot struct {
	f   *frame
	fi  int32 // f's number in attributor.frames
	gap int
	// chain is the CALL (or CREATE) frame that established f's execution
	// context followed by the DELEGATECALL / CALLCODE frames down to f:
	// the frames whose call data can explain what f emits.
	chain []*frame
}

type attrCell struct {
	slot  int32
	back  int32
	m, d  int64
	valid bool
}

func (a *attributor) walk(f *frame, chain []*frame) {
	// A STATICCALL frame and everything below it cannot emit logs (the
	// EVM forbids LOG in a static context); a reverted frame's logs are
	// not in the receipt; SELFDESTRUCT runs no code.
	if f.failed || f.typ == normalform.SelfDestruct || f.typ == normalform.StaticCall {
		return
	}
	// Chains are cut from one growing arena (a chain, once made, is never
	// written again, so an arena that moves leaves the old ones intact).
	start := len(a.arena)
	if f.typ == normalform.DelegateCall || f.typ == normalform.CallCode {
		a.arena = append(a.arena, chain...)
	}
	a.arena = append(a.arena, f)
	chain = a.arena[start:len(a.arena):len(a.arena)]
	fi := int32(len(a.frames))
	a.frames = append(a.frames, f)
	for g := 0; g <= len(f.calls); g++ {
		a.slots = append(a.slots, attrSlot{f, fi, g, chain})
		if g < len(f.calls) {
			a.walk(f.calls[g], chain)
		}
	}
}

// ctxLinear is the number of contexts searched one by one before a map
// is built.
const ctxLinear = 8

// ctxNum returns the number of context c, or -1.
func (a *attributor) ctxNum(c normalform.Address) int32 {
	if a.ctxMapped {
		if g, ok := a.ctxOf[c]; ok {
			return g
		}
		return -1
	}
	for i := range a.ctxs {
		if a.ctxs[i] == c {
			return int32(i)
		}
	}
	return -1
}

// addCtx numbers a new context c.
func (a *attributor) addCtx(c normalform.Address) int32 {
	g := int32(len(a.ctxs))
	a.ctxs = append(a.ctxs, c)
	switch {
	case a.ctxMapped:
		a.ctxOf[c] = g
	case len(a.ctxs) > ctxLinear:
		if a.ctxOf == nil {
			a.ctxOf = map[normalform.Address]int32{}
		}
		clear(a.ctxOf)
		for i := range a.ctxs {
			a.ctxOf[a.ctxs[i]] = int32(i)
		}
		a.ctxMapped = true
	}
	return g
}

// better reports whether cell x is at least as good as y.
func better(x, y *attrCell) bool {
	if x.m != y.m {
		return x.m > y.m
	}
	return x.d >= y.d
}

// candidates returns the slots whose frame runs at addr, in walk order.
func (a *attributor) candidates(addr normalform.Address) []int32 {
	g := a.ctxNum(addr)
	if g < 0 {
		return nil
	}
	return a.cands[a.gStart[g]:a.gStart[g+1]]
}

// attribute places logs, the transaction's in execution order, in the
// frames under root (the method described at the top of this file).
func (a *attributor) attribute(root *frame, logs []rlog) *scanError {
	if len(logs) == 0 {
		return nil
	}
	if allIndexed(logs) {
		slices.SortStableFunc(logs, func(a, b rlog) int { return cmp.Compare(a.index, b.index) })
	}
	a.slots, a.arena, a.frames = a.slots[:0], a.arena[:0], a.frames[:0]
	a.walk(root, nil)
	slots := a.slots
	// Group the slots by context (a counting sort: the slots of each
	// context stay in walk order).
	a.ctxs, a.ctxMapped = a.ctxs[:0], false
	a.grp = a.grp[:0]
	a.gStart = a.gStart[:0]
	// Each frame's context looked up once (a frame has a slot per gap).
	a.fgrp = slices.Grow(a.fgrp[:0], len(a.frames))[:len(a.frames)]
	for fi := range a.fgrp {
		a.fgrp[fi] = -1
	}
	for i := range slots {
		fi := slots[i].fi
		g := a.fgrp[fi]
		if g < 0 {
			c := slots[i].f.context()
			if g = a.ctxNum(c); g < 0 {
				g = a.addCtx(c)
				a.gStart = append(a.gStart, 0)
			}
			a.fgrp[fi] = g
		}
		a.grp = append(a.grp, g)
		a.gStart[g]++
	}
	sum := int32(0)
	for g, n := range a.gStart {
		a.gStart[g] = sum
		sum += n
	}
	a.gStart = append(a.gStart, sum)
	a.cands = slices.Grow(a.cands[:0], len(slots))[:len(slots)]
	a.fill = append(a.fill[:0], a.gStart[:len(a.gStart)-1]...)
	for i, g := range a.grp {
		a.cands[a.fill[g]] = int32(i)
		a.fill[g]++
	}

	ncells := 0
	for i := range logs {
		ncells += len(a.candidates(logs[i].addr))
	}
	if cap(a.cells) < ncells {
		a.cells = make([]attrCell, ncells)
	}
	cells := a.cells[:ncells] // every row's cells, in one buffer
	clear(cells)
	a.rows = slices.Grow(a.rows[:0], len(logs))[:len(logs)]
	rows := a.rows
	for i := range logs {
		l := &logs[i]
		cands := a.candidates(l.addr)
		if len(cands) == 0 {
			return errAt(l.off, fmt.Sprintf("log %s of %s: no frame of the trace runs at that address, so no frame can have emitted it", logName(l, i), l.addr.Hex()))
		}
		row := cells[:len(cands):len(cands)]
		cells = cells[len(cands):]
		var prev []attrCell
		if i > 0 {
			prev = rows[i-1]
		}
		p, best := 0, -1
		any := false
		for k, sl := range cands {
			var base attrCell
			if i > 0 {
				for p < len(prev) && prev[p].slot <= sl {
					if prev[p].valid && (best < 0 || better(&prev[p], &prev[best])) {
						best = p
					}
					p++
				}
				if best < 0 {
					continue
				}
				base = prev[best]
			}
			f := slots[sl].f
			c := attrCell{slot: sl, back: int32(best), m: base.m, d: base.d + int64(f.depth), valid: true}
			for _, cf := range slots[sl].chain {
				if callEmits(cf, l) {
					c.m++
					break
				}
			}
			row[k] = c
			any = true
		}
		if !any {
			return errAt(l.off, fmt.Sprintf("log %s of %s comes after the logs before it in execution order, but no frame at that address runs after them: no frame can have emitted it", logName(l, i), l.addr.Hex()))
		}
		rows[i] = row
	}
	// Reconstruct from the best cell of the last row, latest on ties.
	k := -1
	last := rows[len(rows)-1]
	for j := range last {
		if last[j].valid && (k < 0 || better(&last[j], &last[k])) {
			k = j
		}
	}
	a.assign = slices.Grow(a.assign[:0], len(logs))[:len(logs)]
	assigned := a.assign
	for i := len(logs) - 1; i >= 0; i-- {
		assigned[i] = rows[i][k].slot
		k = int(rows[i][k].back)
	}
	// Each frame's logs are cut from one slab: count them per frame, then
	// hand each frame its part.
	a.count = slices.Grow(a.count[:0], len(a.frames))[:len(a.frames)]
	clear(a.count)
	for _, sl := range assigned {
		a.count[slots[sl].fi]++
	}
	// The slab is the last transaction's: its frames have been built.
	if cap(a.logSlab) < len(logs) {
		a.logSlab = make([]rlog, len(logs))
	}
	slab := a.logSlab[:len(logs)]
	at := 0
	for fi, n := range a.count {
		if n == 0 {
			continue
		}
		f := a.frames[fi]
		f.logs = slab[at : at : at+int(n)]
		at += int(n)
	}
	for i := range logs {
		s := &slots[assigned[i]]
		l := logs[i]
		l.pos = s.gap
		s.f.logs = append(s.f.logs, l)
	}
	return nil
}

func allIndexed(logs []rlog) bool {
	for i := range logs {
		if logs[i].index < 0 {
			return false
		}
	}
	return true
}

func logName(l *rlog, i int) string {
	if l.index >= 0 {
		return fmt.Sprintf("#%d (logIndex %d)", i, l.index)
	}
	return fmt.Sprintf("#%d", i)
}

func selector(sig string) [4]byte {
	var s [4]byte
	copy(s[:], crypto.Keccak256([]byte(sig)))
	return s
}

var (
	selTransfer      = selector("transfer(address,uint256)")
	selTransferFrom  = selector("transferFrom(address,address,uint256)")
	selSafeTransfer  = selector("safeTransferFrom(address,address,uint256)")
	selSafeTransferD = selector("safeTransferFrom(address,address,uint256,bytes)")
	sel1155Single    = selector("safeTransferFrom(address,address,uint256,uint256,bytes)")
	sel1155Batch     = selector("safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)")
	sel6909Transfer  = selector("transfer(address,uint256,uint256)")
	sel6909From      = selector("transferFrom(address,address,uint256,uint256)")
	// Uniswap V4's PoolManager mints and burns its ERC-6909 claims with
	// these (ERC6909Claims): the frame that emits a claim's mint or burn.
	sel6909Mint = selector("mint(address,uint256,uint256)")
	sel6909Burn = selector("burn(address,uint256,uint256)")
	selDeposit  = selector("deposit()")
	selWithdraw = selector("withdraw(uint256)")
)

// calldata gives access to the undecoded hex call data of a frame.
type calldata []byte

func (c calldata) selector() ([4]byte, bool) {
	var s [4]byte
	if len(c) < 8 {
		return s, false
	}
	for i := range s {
		hi, lo := unhex(c[2*i]), unhex(c[2*i+1])
		if hi > 15 || lo > 15 {
			return s, false
		}
		s[i] = hi<<4 | lo
	}
	return s, true
}

// word returns argument k as 32 bytes.
func (c calldata) word(k int) ([32]byte, bool) {
	var w [32]byte
	off := 8 + 64*k
	if len(c) < off+64 {
		return w, false
	}
	// Eight digits at a time (hexWords: the same digits accepted).
	return w, hexWords(w[:], c[off:off+64])
}

func (c calldata) wordIs(k int, want []byte) bool {
	w, ok := c.word(k)
	return ok && bytes.Equal(w[:], want)
}

// topicIsAddr reports whether an indexed topic holds the address a.
func topicIsAddr(t normalform.Hash, a normalform.Address) bool {
	for _, b := range t[:12] {
		if b != 0 {
			return false
		}
	}
	return bytes.Equal(t[12:], a[:])
}

// callEmits reports whether f's call data is the standard call that emits
// exactly the event l.
func callEmits(f *frame, l *rlog) bool {
	if len(l.topics) == 0 {
		return false
	}
	cd := calldata(f.input)
	sel, ok := cd.selector()
	switch l.topics[0] {
	case sigTransfer:
		if !ok || len(l.topics) < 3 {
			return false
		}
		if len(l.topics) == 3 && len(l.data) == 32 {
			switch sel {
			case selTransfer:
				// transfer(to, amount) moves the caller's tokens: the log's
				// from is the frame's caller. Without this check, two frames
				// making the same call from different callers (an even split)
				// could swap their logs.
				return topicIsAddr(l.topics[1], f.from) && cd.wordIs(0, l.topics[2][:]) && cd.wordIs(1, l.data)
			case selTransferFrom:
				return cd.wordIs(0, l.topics[1][:]) && cd.wordIs(1, l.topics[2][:]) && cd.wordIs(2, l.data)
			}
		}
		if len(l.topics) == 4 && (sel == selTransferFrom || sel == selSafeTransfer || sel == selSafeTransferD) {
			return cd.wordIs(0, l.topics[1][:]) && cd.wordIs(1, l.topics[2][:]) && cd.wordIs(2, l.topics[3][:])
		}
	case sigTransferSingle:
		if ok && sel == sel1155Single && len(l.topics) == 4 && len(l.data) == 64 {
			return cd.wordIs(0, l.topics[2][:]) && cd.wordIs(1, l.topics[3][:]) && cd.wordIs(2, l.data[:32]) && cd.wordIs(3, l.data[32:])
		}
	case sigTransferBatch:
		if ok && sel == sel1155Batch && len(l.topics) == 4 {
			return cd.wordIs(0, l.topics[2][:]) && cd.wordIs(1, l.topics[3][:])
		}
	case sigTransfer6909:
		if ok && len(l.topics) == 4 && len(l.data) == 64 {
			switch sel {
			case sel6909Transfer: // transfer(receiver, id, amount) moves the caller's claims
				return topicIsAddr(l.topics[1], f.from) && cd.wordIs(0, l.topics[2][:]) && cd.wordIs(1, l.topics[3][:]) && cd.wordIs(2, l.data[32:])
			case sel6909From:
				return cd.wordIs(0, l.topics[1][:]) && cd.wordIs(1, l.topics[2][:]) && cd.wordIs(2, l.topics[3][:]) && cd.wordIs(3, l.data[32:])
			case sel6909Mint: // mint(to, id, amount): from the null address
				return l.topics[1] == (normalform.Hash{}) && cd.wordIs(0, l.topics[2][:]) && cd.wordIs(1, l.topics[3][:]) && cd.wordIs(2, l.data[32:])
			case sel6909Burn: // burn(from, id, amount): to the null address
				return l.topics[2] == (normalform.Hash{}) && cd.wordIs(0, l.topics[1][:]) && cd.wordIs(1, l.topics[3][:]) && cd.wordIs(2, l.data[32:])
			}
		}
	case sigDeposit:
		if len(l.data) == 32 && (!ok || sel == selDeposit) && f.hasValue {
			var v uint256.Int
			v.SetBytes32(l.data)
			return v.Eq(&f.value)
		}
	case sigWithdrawal:
		if ok && sel == selWithdraw && len(l.data) == 32 {
			return cd.wordIs(0, l.data)
		}
	}
	return false
}
