package trace

// TestTransferCountIndependent checks the decoder's transfer extraction
// against a second implementation that shares no code with it: the corpus is
// read with encoding/json into generic maps, and the transfers are counted by
// the rules of the package documentation, written out again from scratch.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/normalform"
)

// indWETH is WETH9 on Ethereum mainnet, the default wrapped-native contract.
const indWETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"

func indTopic(sig string) string {
	return "0x" + hex.EncodeToString(crypto.Keccak256([]byte(sig)))
}

var (
	indSigTransfer   = indTopic("Transfer(address,address,uint256)")
	indSigSingle     = indTopic("TransferSingle(address,address,address,uint256,uint256)")
	indSigBatch      = indTopic("TransferBatch(address,address,address,uint256[],uint256[])")
	indSigDeposit    = indTopic("Deposit(address,uint256)")
	indSigWithdrawal = indTopic("Withdrawal(address,uint256)")
)

// indCount is what the independent counter finds in one transaction.
type indCount struct {
	ERC20, ERC721, Single, Batch, Deposit, Withdrawal, Native int
	Frames, Reverted, Logs                                    int
}

func (c *indCount) total() int {
	return c.ERC20 + c.ERC721 + c.Single + c.Batch + c.Deposit + c.Withdrawal + c.Native
}

func (c *indCount) add(o *indCount) {
	c.ERC20 += o.ERC20
	c.ERC721 += o.ERC721
	c.Single += o.Single
	c.Batch += o.Batch
	c.Deposit += o.Deposit
	c.Withdrawal += o.Withdrawal
	c.Native += o.Native
	c.Frames += o.Frames
	c.Reverted += o.Reverted
	c.Logs += o.Logs
}

// indFile is the independent reading of one corpus file: a count per
// transaction hash (lowercase 0x hex), in first-seen order.
type indFile struct {
	counts map[string]*indCount
	order  []string
}

func (f *indFile) tx(h string) *indCount {
	h = strings.ToLower(h)
	c, ok := f.counts[h]
	if !ok {
		c = &indCount{}
		f.counts[h] = c
		f.order = append(f.order, h)
	}
	return c
}

func indStr(v any) string {
	s, _ := v.(string)
	return s
}

func indList(v any) []any {
	l, _ := v.([]any)
	return l
}

func indObj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// indFailed: a frame failed when it carries a non-empty "error".
func indFailed(fr map[string]any) bool {
	return indStr(fr["error"]) != ""
}

func indHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if len(s)%2 == 1 {
		s = "0" + s
	}
	return hex.DecodeString(s)
}

// indPositive reports whether a hex quantity ("0x1bc16d674ec80000") is > 0.
func indPositive(v any) (bool, error) {
	s := indStr(v)
	if s == "" {
		return false, nil
	}
	n, ok := new(big.Int).SetString(strings.TrimPrefix(s, "0x"), 16)
	if !ok {
		return false, fmt.Errorf("bad quantity %q", s)
	}
	return n.Sign() > 0, nil
}

// indBatchLen returns the number of ids of a TransferBatch data field
// (abi-encoded uint256[] ids, uint256[] values), when both arrays are
// well-formed and of equal length.
func indBatchLen(data []byte) (int, bool) {
	arr := func(k int) (int, bool) {
		if len(data) < 32*(k+1) {
			return 0, false
		}
		off := new(big.Int).SetBytes(data[32*k : 32*(k+1)])
		if !off.IsInt64() || off.Int64()+32 > int64(len(data)) {
			return 0, false
		}
		o := int(off.Int64())
		n := new(big.Int).SetBytes(data[o : o+32])
		if !n.IsInt64() || int64(o)+32+32*n.Int64() > int64(len(data)) {
			return 0, false
		}
		return int(n.Int64()), true
	}
	ids, ok1 := arr(0)
	vals, ok2 := arr(1)
	if !ok1 || !ok2 || ids != vals {
		return 0, false
	}
	return ids, true
}

// indLog counts the transfers one log carries.
func indLog(l map[string]any, c *indCount) error {
	c.Logs++
	var topics []string
	for _, t := range indList(l["topics"]) {
		topics = append(topics, strings.ToLower(indStr(t)))
	}
	if len(topics) == 0 {
		return nil
	}
	data, err := indHex(indStr(l["data"]))
	if err != nil {
		return fmt.Errorf("log data: %v", err)
	}
	addr := strings.ToLower(indStr(l["address"]))
	switch topics[0] {
	case indSigTransfer:
		switch {
		case len(topics) == 3 && len(data) == 32:
			c.ERC20++
		case len(topics) == 4 && len(data) == 0:
			c.ERC721++
		}
	case indSigSingle:
		if len(topics) == 4 && len(data) == 64 {
			c.Single++
		}
	case indSigBatch:
		if len(topics) == 4 {
			if n, ok := indBatchLen(data); ok {
				c.Batch += n
			}
		}
	case indSigDeposit, indSigWithdrawal:
		if addr == indWETH && len(topics) == 2 && len(data) == 32 {
			if topics[0] == indSigDeposit {
				c.Deposit++
			} else {
				c.Withdrawal++
			}
		}
	}
	return nil
}

// indGethFrame counts a callTracer frame and its descendants.
func indGethFrame(fr map[string]any, reverted bool, c *indCount) error {
	c.Frames++
	reverted = reverted || indFailed(fr)
	if reverted {
		c.Reverted++
	} else {
		switch strings.ToUpper(indStr(fr["type"])) {
		case "CALL", "CREATE", "CREATE2", "SELFDESTRUCT":
			pos, err := indPositive(fr["value"])
			if err != nil {
				return err
			}
			if pos {
				c.Native++
			}
		}
		for _, l := range indList(fr["logs"]) {
			if err := indLog(indObj(l), c); err != nil {
				return err
			}
		}
	}
	for _, ch := range indList(fr["calls"]) {
		if err := indGethFrame(indObj(ch), reverted, c); err != nil {
			return err
		}
	}
	return nil
}

func indTraceAddr(v any) []int {
	var out []int
	for _, x := range indList(v) {
		f, _ := x.(float64)
		out = append(out, int(f))
	}
	return out
}

func indHasPrefix(a, p []int) bool {
	if len(p) > len(a) {
		return false
	}
	for i := range p {
		if a[i] != p[i] {
			return false
		}
	}
	return true
}

// indParity counts Parity-style bundles: {"traces": [...], "logs": [...]}.
func indParity(bundles []map[string]any, out *indFile) error {
	type pf struct {
		fr   map[string]any
		addr []int
	}
	frames := map[string][]pf{}
	var order []string
	for _, b := range bundles {
		for _, x := range indList(b["traces"]) {
			fr := indObj(x)
			if indStr(fr["type"]) == "reward" {
				continue
			}
			h := strings.ToLower(indStr(fr["transactionHash"]))
			if _, ok := frames[h]; !ok {
				order = append(order, h)
			}
			frames[h] = append(frames[h], pf{fr, indTraceAddr(fr["traceAddress"])})
		}
	}
	for _, h := range order {
		c := out.tx(h)
		var failed [][]int
		for _, p := range frames[h] {
			if indFailed(p.fr) {
				failed = append(failed, p.addr)
			}
		}
		for _, p := range frames[h] {
			c.Frames++
			rev := false
			for _, f := range failed {
				if indHasPrefix(p.addr, f) {
					rev = true
				}
			}
			if rev {
				c.Reverted++
				continue
			}
			act := indObj(p.fr["action"])
			var v any
			switch indStr(p.fr["type"]) {
			case "call":
				if indStr(act["callType"]) == "call" {
					v = act["value"]
				}
			case "create":
				v = act["value"]
			case "suicide", "selfdestruct":
				v = act["balance"]
			}
			pos, err := indPositive(v)
			if err != nil {
				return err
			}
			if pos {
				c.Native++
			}
		}
	}
	for _, b := range bundles {
		for _, x := range indList(b["logs"]) {
			l := indObj(x)
			if err := indLog(l, out.tx(indStr(l["transactionHash"]))); err != nil {
				return err
			}
		}
	}
	return nil
}

// indCountFile reads one corpus file with encoding/json and counts what each
// of its transactions carries.
func indCountFile(data []byte) (*indFile, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	out := &indFile{counts: map[string]*indCount{}}
	var bundles []map[string]any
	switch d := doc.(type) {
	case map[string]any:
		if res, ok := d["result"]; ok && d["input"] != nil {
			// go-ethereum tracer test: the hash is keccak of the raw tx.
			raw, err := indHex(indStr(d["input"]))
			if err != nil {
				return nil, fmt.Errorf("input: %v", err)
			}
			h := "0x" + hex.EncodeToString(crypto.Keccak256(raw))
			if err := indGethFrame(indObj(res), false, out.tx(h)); err != nil {
				return nil, err
			}
			return out, nil
		}
		bundles = append(bundles, d)
	case []any:
		for _, x := range d {
			bundles = append(bundles, indObj(x))
		}
	default:
		return nil, fmt.Errorf("unexpected top-level JSON %T", doc)
	}
	for _, b := range bundles {
		if b == nil || b["traces"] == nil {
			return nil, fmt.Errorf("not a {traces, logs} bundle")
		}
	}
	if err := indParity(bundles, out); err != nil {
		return nil, err
	}
	return out, nil
}

// indCorpus lists the corpus files: ten geth tracer tests, sixteen Parity
// bundles.
func indCorpus(t *testing.T) []string {
	t.Helper()
	geth, err1 := filepath.Glob("testdata/corpus/go-ethereum/call_tracer_withLog/*.json")
	par, err2 := filepath.Glob("testdata/corpus/mev-inspect-rs/res/*.data.json")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if len(geth) != 10 || len(par) != 16 {
		t.Fatalf("corpus: want 10 geth and 16 Parity files, found %d and %d", len(geth), len(par))
	}
	files := append(geth, par...)
	sort.Strings(files)
	return files
}

// indDecodedByEvent tallies a decoded transaction's transfers in the
// independent counter's categories.
func indDecodedByEvent(tx *normalform.Tx) indCount {
	var c indCount
	for i := range tx.Transfers {
		switch tx.Transfers[i].Event {
		case normalform.EvERC20Transfer:
			c.ERC20++
		case normalform.EvERC721Transfer:
			c.ERC721++
		case normalform.EvTransferSingle:
			c.Single++
		case normalform.EvTransferBatch:
			c.Batch++
		case normalform.EvDeposit:
			c.Deposit++
		case normalform.EvWithdrawal:
			c.Withdrawal++
		case normalform.EvNativeCall, normalform.EvNativeCreate, normalform.EvNativeSelfdestruct:
			c.Native++
		}
	}
	return c
}

// indCheckTree checks T0 against tx.Transfers: every transfer is a leaf or a
// dropped degenerate transfer, and the leaves point into tx.Transfers.
func indCheckTree(t *testing.T, where string, tx *normalform.Tx) (leaves int) {
	t.Helper()
	for i := range tx.Transfers {
		if tx.Transfers[i].Pos != int32(i) {
			t.Errorf("%s: Transfers[%d].Pos = %d, want %d", where, i, tx.Transfers[i].Pos, i)
		}
	}
	ls := tx.Root.Leaves(nil)
	if len(ls)+tx.Stats.Degenerate != len(tx.Transfers) {
		t.Errorf("%s: %d leaves + %d degenerate != %d transfers", where, len(ls), tx.Stats.Degenerate, len(tx.Transfers))
	}
	kept := map[int32]bool{}
	for _, l := range ls {
		p := l.Pos
		if p < 0 || int(p) >= len(tx.Transfers) || l != &tx.Transfers[p] {
			t.Errorf("%s: leaf with Pos %d does not point at tx.Transfers[%d]", where, p, p)
			continue
		}
		if kept[p] {
			t.Errorf("%s: transfer %d is a leaf twice", where, p)
		}
		kept[p] = true
	}
	dropped := 0
	for i := range tx.Transfers {
		tr := &tx.Transfers[i]
		if kept[tr.Pos] {
			continue
		}
		dropped++
		if !tr.Amount.IsZero() || tr.Sender != tr.From {
			t.Errorf("%s: transfer %d (%v) was dropped from T0 but is not degenerate: amount %s, sender %s, from %s",
				where, i, tr.Event, tr.Amount.Dec(), tr.Sender.Hex(), tr.From.Hex())
		}
	}
	if dropped != tx.Stats.Degenerate {
		t.Errorf("%s: %d transfers dropped from T0, Stats.Degenerate = %d", where, dropped, tx.Stats.Degenerate)
	}
	return len(ls)
}

func TestTransferCountIndependent(t *testing.T) {
	files := indCorpus(t)
	t.Logf("%-52s %4s %6s %5s %5s | %5s %4s %4s %4s %4s %4s %6s | %5s %5s %5s %4s",
		"file", "txs", "frames", "rev", "logs", "erc20", "721", "1155", "dep", "wdr", "nat", "expect", "decod", "leafs", "degen", "ignL")
	var sum indCount
	var sumTx, sumDec, sumLeaves, sumDegen, sumIgn int
	for _, path := range files {
		name := strings.TrimPrefix(path, "testdata/corpus/")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := indCountFile(data)
		if err != nil {
			t.Fatalf("%s: independent reading: %v", name, err)
		}
		res := Decode(data, Options{Source: name})
		for _, e := range res.Errors {
			t.Errorf("%s: decode error: %v", name, e)
		}
		got := map[string]*normalform.Tx{}
		for _, tx := range res.Txs {
			h := strings.ToLower(tx.Meta.Hash.Hex())
			if !tx.Meta.HasHash {
				t.Errorf("%s: decoded transaction without a hash", name)
			}
			if got[h] != nil {
				t.Errorf("%s: transaction %s decoded twice", name, h)
			}
			got[h] = tx
		}
		if len(res.Txs) != len(want.order) {
			t.Errorf("%s: decoded %d transactions, the file holds %d", name, len(res.Txs), len(want.order))
		}
		var fileSum indCount
		dec, leaves, degen, ign := 0, 0, 0, 0
		for _, h := range want.order {
			w := want.counts[h]
			fileSum.add(w)
			tx := got[h]
			if tx == nil {
				t.Errorf("%s: transaction %s (%d transfers expected) was not decoded", name, h, w.total())
				continue
			}
			delete(got, h)
			where := name + " tx " + h[:10]
			if len(tx.Transfers) != w.total() {
				t.Errorf("%s: %d transfers decoded, %d expected", where, len(tx.Transfers), w.total())
			}
			g := indDecodedByEvent(tx)
			if g.ERC20 != w.ERC20 || g.ERC721 != w.ERC721 || g.Single != w.Single || g.Batch != w.Batch ||
				g.Deposit != w.Deposit || g.Withdrawal != w.Withdrawal || g.Native != w.Native {
				t.Errorf("%s: by kind decoded erc20/721/single/batch/deposit/withdrawal/native = %d/%d/%d/%d/%d/%d/%d, expected %d/%d/%d/%d/%d/%d/%d",
					where, g.ERC20, g.ERC721, g.Single, g.Batch, g.Deposit, g.Withdrawal, g.Native,
					w.ERC20, w.ERC721, w.Single, w.Batch, w.Deposit, w.Withdrawal, w.Native)
			}
			if tx.Stats.Frames != w.Frames || tx.Stats.RevertedFrames != w.Reverted || tx.Stats.Logs != w.Logs {
				t.Errorf("%s: stats frames/reverted/logs = %d/%d/%d, expected %d/%d/%d",
					where, tx.Stats.Frames, tx.Stats.RevertedFrames, tx.Stats.Logs, w.Frames, w.Reverted, w.Logs)
			}
			dec += len(tx.Transfers)
			leaves += indCheckTree(t, where, tx)
			degen += tx.Stats.Degenerate
			ign += tx.Stats.IgnoredLogs
		}
		for h := range got {
			t.Errorf("%s: decoded transaction %s is not in the file", name, h)
		}
		t.Logf("%-52s %4d %6d %5d %5d | %5d %4d %4d %4d %4d %4d %6d | %5d %5d %5d %4d",
			name, len(want.order), fileSum.Frames, fileSum.Reverted, fileSum.Logs,
			fileSum.ERC20, fileSum.ERC721, fileSum.Single+fileSum.Batch, fileSum.Deposit, fileSum.Withdrawal, fileSum.Native,
			fileSum.total(), dec, leaves, degen, ign)
		sum.add(&fileSum)
		sumTx += len(want.order)
		sumDec += dec
		sumLeaves += leaves
		sumDegen += degen
		sumIgn += ign
	}
	t.Logf("%-52s %4d %6d %5d %5d | %5d %4d %4d %4d %4d %4d %6d | %5d %5d %5d %4d",
		"TOTAL", sumTx, sum.Frames, sum.Reverted, sum.Logs,
		sum.ERC20, sum.ERC721, sum.Single+sum.Batch, sum.Deposit, sum.Withdrawal, sum.Native,
		sum.total(), sumDec, sumLeaves, sumDegen, sumIgn)
	if sumTx != 10+15+124 {
		t.Errorf("corpus holds %d transactions, want 149", sumTx)
	}
	if sum.total() == 0 || sum.ERC20 == 0 || sum.Native == 0 || sum.Deposit+sum.Withdrawal == 0 {
		t.Errorf("the corpus should exercise ERC-20, native and WETH transfers: %+v", sum)
	}
}

// TestTransferCountIndependentSelfCheck shows that the counter and the
// comparison can fail: doctored copies of corpus files must change the counts
// by exactly what was doctored, on both sides.
func TestTransferCountIndependentSelfCheck(t *testing.T) {
	count := func(data []byte) (int, *indCount) {
		t.Helper()
		f, err := indCountFile(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.order) != 1 {
			t.Fatalf("want one transaction, got %d", len(f.order))
		}
		return len(f.order), f.counts[f.order[0]]
	}
	decoded := func(data []byte) *normalform.Tx {
		t.Helper()
		res := Decode(data, Options{})
		if len(res.Errors) != 0 || len(res.Txs) != 1 {
			t.Fatalf("decode: %d txs, errors %v", len(res.Txs), res.Errors)
		}
		return res.Txs[0]
	}
	load := func(path string) ([]byte, map[string]any) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return data, m
	}
	marshal := func(m map[string]any) []byte {
		t.Helper()
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	isTransfer := func(l any) bool {
		ts := indList(indObj(l)["topics"])
		return len(ts) == 3 && strings.ToLower(indStr(ts[0])) == indSigTransfer
	}

	// 1. Parity: remove one ERC-20 Transfer from the receipt's logs.
	orig, m := load("testdata/corpus/mev-inspect-rs/res/triangular_arb.data.json")
	_, before := count(orig)
	logs := indList(m["logs"])
	k := -1
	for i, l := range logs {
		if isTransfer(l) {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatal("triangular_arb has no Transfer log")
	}
	m["logs"] = append(append([]any{}, logs[:k]...), logs[k+1:]...)
	doctored := marshal(m)
	_, after := count(doctored)
	if after.total() != before.total()-1 || after.ERC20 != before.ERC20-1 {
		t.Errorf("parity, one Transfer log removed: counter went %d -> %d (erc20 %d -> %d), want one less",
			before.total(), after.total(), before.ERC20, after.ERC20)
	}
	if n0 := len(decoded(orig).Transfers); n0 != before.total() {
		t.Errorf("parity: decoder %d transfers, counter %d", n0, before.total())
	}
	// The decoder sees that the log is missing (the frame that made the
	// transfer returned true and emitted no Transfer): it refuses the
	// transaction rather than lose the transfer (logcheck.go).
	if res := Decode(doctored, Options{}); len(res.Txs) != 0 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Msg, "logs are missing") {
		t.Errorf("parity, one Transfer log removed: decoder gave %d transactions, errors %v; want the missing log named", len(res.Txs), res.Errors)
	}

	// 2. Parity: make one Transfer non-standard (64 data bytes): not counted.
	_, m = load("testdata/corpus/mev-inspect-rs/res/triangular_arb.data.json")
	logs = indList(m["logs"])
	l := indObj(logs[k])
	l["data"] = indStr(l["data"]) + strings.Repeat("00", 32)
	doctored = marshal(m)
	_, after = count(doctored)
	if after.total() != before.total()-1 {
		t.Errorf("parity, one Transfer with 64 data bytes: counter %d -> %d, want one less", before.total(), after.total())
	}
	if tx := decoded(doctored); len(tx.Transfers) != after.total() || tx.Stats.IgnoredLogs != 1 {
		t.Errorf("parity, one Transfer with 64 data bytes: decoder %d transfers, %d ignored logs; counter %d",
			len(tx.Transfers), tx.Stats.IgnoredLogs, after.total())
	}

	// 3. geth: remove the Transfer log of simple.json.
	orig, m = load("testdata/corpus/go-ethereum/call_tracer_withLog/simple.json")
	_, before = count(orig)
	res := indObj(m["result"])
	var kept []any
	removed := 0
	for _, l := range indList(res["logs"]) {
		if removed == 0 && isTransfer(l) {
			removed++
			continue
		}
		kept = append(kept, l)
	}
	if removed != 1 {
		t.Fatal("simple.json has no Transfer log")
	}
	res["logs"] = kept
	doctored = marshal(m)
	_, after = count(doctored)
	if after.total() != before.total()-1 {
		t.Errorf("geth, one Transfer log removed: counter %d -> %d, want one less", before.total(), after.total())
	}
	if n0, n1 := len(decoded(orig).Transfers), len(decoded(doctored).Transfers); n0 != before.total() || n1 != after.total() {
		t.Errorf("geth, one Transfer log removed: decoder %d -> %d, counter %d -> %d", n0, n1, before.total(), after.total())
	}

	// 4. geth: a failing frame takes its subtree's transfers with it. In
	// delegatecall.json, frame [13] (four calls, two Transfers) is made to fail.
	orig, m = load("testdata/corpus/go-ethereum/call_tracer_withLog/delegatecall.json")
	_, before = count(orig)
	res = indObj(m["result"])
	calls := indList(res["calls"])
	var sub indCount
	victim := indObj(calls[5])
	if err := indGethFrame(victim, false, &sub); err != nil {
		t.Fatal(err)
	}
	if sub.total() == 0 {
		t.Fatal("delegatecall.json: the chosen frame carries no transfer")
	}
	victim["error"] = "execution reverted"
	doctored = marshal(m)
	_, after = count(doctored)
	if after.total() != before.total()-sub.total() || after.Reverted != before.Reverted+sub.Frames {
		t.Errorf("geth, frame made to fail: counter %d -> %d (reverted %d -> %d), want -%d (+%d)",
			before.total(), after.total(), before.Reverted, after.Reverted, sub.total(), sub.Frames)
	}
	if tx := decoded(doctored); len(tx.Transfers) != after.total() || tx.Stats.RevertedFrames != after.Reverted {
		t.Errorf("geth, frame made to fail: decoder %d transfers, %d reverted frames; counter %d, %d",
			len(tx.Transfers), tx.Stats.RevertedFrames, after.total(), after.Reverted)
	}
	t.Logf("self-check: removing / spoiling one Transfer and failing a frame of %d transfers all changed both counts as expected", sub.total())
}
