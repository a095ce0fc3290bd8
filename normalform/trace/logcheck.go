package trace

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/normalform"
)

// Incomplete logs.
//
// A Parity-style trace carries no logs: they come from the input's
// "logs" (eth_getLogs) or its receipts, and token transfers are read from
// them. A log left out of the input is a transfer that silently
// disappears (an arbitrage turns into nothing, with no error), and a log
// of another transaction is a transfer that never happened. So before a
// Parity transaction's logs are attributed, checkLogs compares them with
// everything else the input says of them, and fails the transaction,
// naming what is missing or foreign:
//
//   - a log whose transactionHash names another transaction;
//   - logIndex values that repeat, or leave gaps (a transaction's logs
//     are consecutive in its block);
//   - a receipt of the transaction listing other logs (by logIndex, or by
//     count) than the input's logs;
//   - a receipt's logsBloom that the logs do not give exactly;
//   - a log absent from its block header's logsBloom (it is not of that
//     block);
//
// and after attribution, checkEmitted fails a transaction with a frame
// that called a token's transfer or transferFrom, returned true and
// emitted no Transfer log: ERC-20 requires the event, so its log is
// missing (a check that needs the frames' "output", and finds logs
// missing at either end, where logIndex shows no gap).

// checkLogs checks the logs given for transaction tx (see above). rc is
// its receipt (nil: none), fromReceipt whether logs are rc's logs, hdr
// the block header the transaction was given with (nil: none).
func checkLogs(tx normalform.Hash, logs []rlog, rc *receipt, fromReceipt bool, hdr *header) *scanError {
	for i := range logs {
		l := &logs[i]
		if l.hasTx && l.txHash != tx {
			return errAt(l.off, fmt.Sprintf("log %s names transaction %s in its transactionHash, not this one: a log of another transaction", logName(l, i), l.txHash.Hex()))
		}
	}
	if allIndexed(logs) && len(logs) > 1 {
		idx := make([]int, len(logs))
		for i := range logs {
			idx[i] = logs[i].index
		}
		sort.Ints(idx)
		for i := 1; i < len(idx); i++ {
			if idx[i] == idx[i-1] {
				return errAt(logs[0].off, fmt.Sprintf("two logs have logIndex %d", idx[i]))
			}
		}
		if missing := gaps(idx); len(missing) > 0 {
			return errAt(logs[0].off, fmt.Sprintf("logs are missing: the transaction's logs run from logIndex %d to %d, but %s %s not in the input (%d of %d); give all of its logs (eth_getLogs without a topic filter, or its receipt)",
				idx[0], idx[len(idx)-1], ranges(missing), isAre(len(missing)), len(missing), idx[len(idx)-1]-idx[0]+1))
		}
	}
	if rc != nil && !fromReceipt && rc.hasLogs {
		if msg := compareReceipt(logs, rc.logs); msg != "" {
			return errAt(rc.off, msg)
		}
	}
	if rc != nil && rc.hasBloom {
		if b := bloomOf(logs); b != rc.bloom {
			return errAt(rc.off, fmt.Sprintf("the transaction's %d logs do not give its receipt's logsBloom: logs are missing, or belong to another transaction", len(logs)))
		}
	}
	if hdr != nil && hdr.hasBloom {
		for i := range logs {
			if b := bloomOf(logs[i : i+1]); !b.in(&hdr.bloom) {
				return errAt(logs[i].off, fmt.Sprintf("log %s is not in the logsBloom of block %d: a log of another block", logName(&logs[i], i), hdr.number))
			}
		}
	}
	return nil
}

// compareReceipt compares the logs given for a transaction with its
// receipt's, by logIndex when all have one, else by count.
func compareReceipt(logs, want []rlog) string {
	if allIndexed(logs) && allIndexed(want) {
		have := map[int]bool{}
		for _, l := range logs {
			have[l.index] = true
		}
		var missing, extra []int
		wanted := map[int]bool{}
		for _, l := range want {
			wanted[l.index] = true
			if !have[l.index] {
				missing = append(missing, l.index)
			}
		}
		for _, l := range logs {
			if !wanted[l.index] {
				extra = append(extra, l.index)
			}
		}
		sort.Ints(missing)
		sort.Ints(extra)
		switch {
		case len(missing) > 0:
			return fmt.Sprintf("the receipt lists %d logs, the input's logs %d: logIndex %s %s missing", len(want), len(logs), ranges(missing), isAre(len(missing)))
		case len(extra) > 0:
			return fmt.Sprintf("the receipt lists %d logs, the input's logs %d: logIndex %s %s not in the receipt", len(want), len(logs), ranges(extra), isAre(len(extra)))
		}
		return ""
	}
	if len(logs) != len(want) {
		return fmt.Sprintf("the receipt lists %d logs, the input's logs %d: logs are missing, or belong to another transaction", len(want), len(logs))
	}
	return ""
}

// gaps lists the integers missing from a sorted list of distinct ones,
// between its first and last.
func gaps(idx []int) []int {
	var out []int
	for i := 1; i < len(idx); i++ {
		for k := idx[i-1] + 1; k < idx[i]; k++ {
			out = append(out, k)
			if len(out) > 1<<16 {
				return out // a logIndex far off: enough to say so
			}
		}
	}
	return out
}

// ranges writes sorted integers as ranges: "26, 28 to 36".
func ranges(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, itoa(xs[i]))
		} else {
			parts = append(parts, itoa(xs[i])+" to "+itoa(xs[j]))
		}
		i = j + 1
		if len(parts) == 8 && i < len(xs) {
			parts = append(parts, "...")
			break
		}
	}
	return strings.Join(parts, ", ")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// bloom is a 2048-bit logs bloom filter, as in block headers and receipts.
type bloom [256]byte

// add sets the three bits of data's Keccak-256 hash (Ethereum's bloom9).
func (b *bloom) add(data []byte) {
	h := crypto.Keccak256(data)
	for i := 0; i < 6; i += 2 {
		bit := (uint(h[i])<<8 | uint(h[i+1])) & 2047
		b[255-bit/8] |= 1 << (bit % 8)
	}
}

// in reports whether every bit of b is set in o.
func (b *bloom) in(o *bloom) bool {
	for i := range b {
		if b[i]&^o[i] != 0 {
			return false
		}
	}
	return true
}

// bloomOf is the logs bloom of logs: each one's address and topics.
func bloomOf(logs []rlog) bloom {
	var b bloom
	for i := range logs {
		b.add(logs[i].addr[:])
		for _, t := range logs[i].topics {
			b.add(t[:])
		}
	}
	return b
}

// checkEmitted fails a transaction with a frame that called an ERC-20
// transfer or transferFrom of a non-zero amount and returned true, below
// which (in it or in the frames it called) no Transfer log was emitted at
// all (checkLogs' comment). Only the outermost such call is judged, with
// its whole subtree: a proxy forwards the call to its implementation,
// which may emit the event through the proxy (Synthetix), and a wrapper
// token's transfer moves the token it wraps. Frames that failed, and
// everything below them, are not looked at (their logs are dropped).
func checkEmitted(root *frame) *scanError {
	var bad *frame
	var walk func(f *frame)
	walk = func(f *frame) {
		if bad != nil || f.failed {
			return
		}
		if f.typ == normalform.Call && returnsTrue(f.output) && erc20Transfer(f.input) {
			if !emitsTransfer(f) {
				bad = f
			}
			return
		}
		for _, c := range f.calls {
			walk(c)
		}
	}
	walk(root)
	if bad == nil {
		return nil
	}
	name := "transfer"
	if sel, _ := calldata(bad.input).selector(); sel == selTransferFrom {
		name = "transferFrom"
	}
	return errAt(bad.off, fmt.Sprintf("frame %s called %s of %s, which returned true, but no Transfer log was emitted below it: logs are missing (give all of the transaction's logs)",
		frameName(bad), name, bad.to.Hex()))
}

// erc20Transfer reports whether call data is an ERC-20 transfer(to,
// amount) or transferFrom(from, to, amount) of a non-zero amount.
func erc20Transfer(input []byte) bool {
	cd := calldata(input)
	sel, ok := cd.selector()
	if !ok {
		return false
	}
	k := -1
	switch {
	case sel == selTransfer && len(cd) == 8+2*64:
		k = 1
	case sel == selTransferFrom && len(cd) == 8+3*64:
		k = 2
	}
	if k < 0 {
		return false
	}
	w, ok := cd.word(k)
	return ok && w != [32]byte{}
}

// returnsTrue reports whether a frame's output (hex digits) is the ABI
// encoding of true.
func returnsTrue(output []byte) bool {
	if len(output) != 64 {
		return false
	}
	for i, c := range output {
		want := byte('0')
		if i == 63 {
			want = '1'
		}
		if c != want {
			return false
		}
	}
	return true
}

// emitsTransfer reports whether a Transfer log was emitted in f or in a
// frame below it that did not fail.
func emitsTransfer(f *frame) bool {
	for _, l := range f.logs {
		if len(l.topics) > 0 && l.topics[0] == sigTransfer {
			return true
		}
	}
	for _, c := range f.calls {
		if !c.failed && emitsTransfer(c) {
			return true
		}
	}
	return false
}

// frameName is a frame's traceAddress ([] for the top frame).
func frameName(f *frame) string {
	parts := make([]string, len(f.addr))
	for i, a := range f.addr {
		parts[i] = itoa(a)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
