package trace

// TestFlattenGethToParity turns each go-ethereum callTracer test trace into
// the Parity shape (trace_transaction frames plus the receipt's logs), as
// Parity/Erigon and go-ethereum's flatCallTracer emit it, and checks that
// both decode to the same transfers and the same T0. The Parity shape has
// lost which frame emitted which log: equal results mean the attribution
// put every log back where the EVM emitted it.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/normalform"
)

func flatStr(v any) string {
	s, _ := v.(string)
	return s
}

func flatList(v any) []any {
	l, _ := v.([]any)
	return l
}

func flatObj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func flatOr(v any, def string) string {
	if s := flatStr(v); s != "" {
		return s
	}
	return def
}

// flatParityErrors is go-ethereum's mapping of its error texts to Parity's.
var flatParityErrors = map[string]string{
	"contract creation code storage out of gas": "Out of gas",
	"out of gas":                      "Out of gas",
	"gas uint64 overflow":             "Out of gas",
	"max code size exceeded":          "Out of gas",
	"invalid jump destination":        "Bad jump destination",
	"execution reverted":              "Reverted",
	"return data out of bounds":       "Out of bounds",
	"stack limit reached 1024 (1023)": "Out of stack",
	"precompiled failed":              "Built-in failed",
	"invalid input length":            "Built-in failed",
}

func flatParityError(e string) string {
	if p, ok := flatParityErrors[e]; ok {
		return p
	}
	if strings.HasPrefix(e, "invalid opcode:") {
		return "Bad instruction"
	}
	if strings.HasPrefix(e, "stack underflow") {
		return "Stack underflow"
	}
	return e
}

// flattener accumulates the flat frames and the receipt logs of one
// transaction.
type flattener struct {
	hash     string // 0x transaction hash
	block    uint64
	txPos    int
	logIndex int // next logIndex
	traces   []any
	logs     []any
	dropped  int // logs of reverted frames left out
}

// frame appends fr (at traceAddress addr) and its descendants in pre-order,
// and its logs, interleaved with its child calls by "position", unless the
// frame or an ancestor reverted.
func (f *flattener) frame(fr map[string]any, addr []int, reverted bool) error {
	typ := strings.ToUpper(flatStr(fr["type"]))
	calls := flatList(fr["calls"])
	errText := flatStr(fr["error"])
	reverted = reverted || errText != ""
	value := flatOr(fr["value"], "0x0")
	out := map[string]any{
		"traceAddress":        append([]int{}, addr...),
		"subtraces":           len(calls),
		"transactionHash":     f.hash,
		"transactionPosition": f.txPos,
		"blockNumber":         f.block,
	}
	switch typ {
	case "CALL", "STATICCALL", "DELEGATECALL", "CALLCODE":
		out["type"] = "call"
		out["action"] = map[string]any{
			"from":     fr["from"],
			"to":       fr["to"],
			"value":    value,
			"gas":      fr["gas"],
			"input":    flatOr(fr["input"], "0x"),
			"callType": strings.ToLower(typ),
		}
		out["result"] = map[string]any{"gasUsed": fr["gasUsed"], "output": flatOr(fr["output"], "0x")}
	case "CREATE", "CREATE2":
		out["type"] = "create"
		out["action"] = map[string]any{
			"from":  fr["from"],
			"value": value,
			"gas":   fr["gas"],
			"init":  flatOr(fr["input"], "0x"),
		}
		res := map[string]any{"gasUsed": fr["gasUsed"], "code": flatOr(fr["output"], "0x")}
		if to := flatStr(fr["to"]); to != "" {
			res["address"] = to
		}
		out["result"] = res
	case "SELFDESTRUCT":
		out["type"] = "suicide"
		out["action"] = map[string]any{
			"address":       fr["from"],
			"refundAddress": fr["to"],
			"balance":       value,
		}
		out["result"] = nil
	default:
		return fmt.Errorf("frame %v: unknown type %q", addr, typ)
	}
	if errText != "" {
		out["error"] = flatParityError(errText)
		if errText != "execution reverted" {
			delete(out, "result")
		}
	}
	f.traces = append(f.traces, out)

	logs := flatList(fr["logs"])
	li := 0
	for gap := 0; gap <= len(calls); gap++ {
		for ; li < len(logs); li++ {
			l := flatObj(logs[li])
			p, err := strconv.ParseUint(strings.TrimPrefix(flatStr(l["position"]), "0x"), 16, 32)
			if err != nil {
				return fmt.Errorf("frame %v log %d: position: %v", addr, li, err)
			}
			if int(p) != gap {
				break
			}
			if reverted {
				f.dropped++
				continue
			}
			f.logs = append(f.logs, map[string]any{
				"address":          l["address"],
				"topics":           l["topics"],
				"data":             l["data"],
				"logIndex":         fmt.Sprintf("0x%x", f.logIndex),
				"transactionHash":  f.hash,
				"transactionIndex": fmt.Sprintf("0x%x", f.txPos),
				"blockNumber":      fmt.Sprintf("0x%x", f.block),
				"removed":          false,
			})
			f.logIndex++
		}
		if gap == len(calls) {
			break
		}
		if err := f.frame(flatObj(calls[gap]), append(append([]int{}, addr...), gap), reverted); err != nil {
			return err
		}
	}
	if li != len(logs) {
		return fmt.Errorf("frame %v: log %d has a position out of order or past the %d calls", addr, li, len(calls))
	}
	return nil
}

// flatTracetest reads a go-ethereum tracer test file.
func flatTracetest(t *testing.T, path string) (data []byte, doc map[string]any, hash string, block uint64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(strings.TrimPrefix(flatStr(doc["input"]), "0x"))
	if err != nil {
		t.Fatalf("%s: input: %v", path, err)
	}
	hash = "0x" + hex.EncodeToString(crypto.Keccak256(raw))
	block, err = strconv.ParseUint(flatStr(flatObj(doc["context"])["number"]), 10, 64)
	if err != nil {
		t.Fatalf("%s: context.number: %v", path, err)
	}
	return data, doc, hash, block
}

// flatten turns a tracer test's "result" into a flattener holding the
// Parity-shaped frames and logs.
func flatten(t *testing.T, doc map[string]any, hash string, block uint64, txPos, firstLogIndex int) *flattener {
	t.Helper()
	f := &flattener{hash: hash, block: block, txPos: txPos, logIndex: firstLogIndex}
	if err := f.frame(flatObj(doc["result"]), []int{}, false); err != nil {
		t.Fatal(err)
	}
	return f
}

func flatMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// flatReverted lists the pre-order indices (root = 0, every frame counted,
// SELFDESTRUCT frames included) of frames that failed or whose ancestor
// failed, from the raw callTracer JSON.
func flatReverted(fr map[string]any) map[int32]bool {
	out := map[int32]bool{}
	var n int32
	var walk func(fr map[string]any, rev bool)
	walk = func(fr map[string]any, rev bool) {
		idx := n
		n++
		rev = rev || flatStr(fr["error"]) != ""
		if rev {
			out[idx] = true
		}
		for _, c := range flatList(fr["calls"]) {
			walk(flatObj(c), rev)
		}
	}
	walk(fr, false)
	return out
}

func flatSameTransfer(a, b *normalform.Transfer) bool {
	return a.From == b.From && a.To == b.To && a.Amount.Eq(&b.Amount) && a.Token == b.Token &&
		a.Sender == b.Sender && a.Pos == b.Pos && a.Flags == b.Flags && a.Event == b.Event && a.Frame == b.Frame
}

func flatTransferString(x *normalform.Transfer) string {
	return fmt.Sprintf("pos %d frame %d %v %s -> %s amount %s token %s sender %s flags [%v] logIndex %d",
		x.Pos, x.Frame, x.Event, x.From.Hex(), x.To.Hex(), x.Amount.Dec(), x.Token.Key(), x.Sender.Hex(), x.Flags, x.LogIndex)
}

// flatTreeDiff returns the first difference between two trees, or "".
func flatTreeDiff(a, b *normalform.Node, path string) string {
	switch {
	case a == nil && b == nil:
		return ""
	case a == nil || b == nil:
		return fmt.Sprintf("%s: one tree is nil (%v vs %v)", path, a == nil, b == nil)
	case a.IsLeaf() != b.IsLeaf():
		return fmt.Sprintf("%s: leaf vs call node (%v vs %v)", path, a.IsLeaf(), b.IsLeaf())
	case a.IsLeaf():
		if a.Leaf.Pos != b.Leaf.Pos {
			return fmt.Sprintf("%s: leaf Pos %d vs %d", path, a.Leaf.Pos, b.Leaf.Pos)
		}
		return ""
	}
	fa, fb := a.Frame, b.Frame
	if fa == nil || fb == nil {
		return fmt.Sprintf("%s: call node without frame", path)
	}
	if fa.Type != fb.Type || fa.From != fb.From || fa.To != fb.To || fa.Index != fb.Index || fa.Depth != fb.Depth {
		return fmt.Sprintf("%s: frame %v %s->%s #%d d%d vs %v %s->%s #%d d%d", path,
			fa.Type, fa.From.Hex(), fa.To.Hex(), fa.Index, fa.Depth, fb.Type, fb.From.Hex(), fb.To.Hex(), fb.Index, fb.Depth)
	}
	if len(a.Children) != len(b.Children) {
		return fmt.Sprintf("%s (frame #%d): %d children vs %d", path, fa.Index, len(a.Children), len(b.Children))
	}
	for i := range a.Children {
		if d := flatTreeDiff(a.Children[i], b.Children[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// flatTreeFrames lists the frame indices of a tree's call nodes and leaves.
func flatTreeFrames(n *normalform.Node, dst []int32) []int32 {
	if n == nil {
		return dst
	}
	if n.Leaf != nil {
		return append(dst, n.Leaf.Frame)
	}
	dst = append(dst, n.Frame.Index)
	for _, c := range n.Children {
		dst = flatTreeFrames(c, dst)
	}
	return dst
}

// flatCompare reports every difference between two decodings of the same
// transaction; LogIndex is not compared.
func flatCompare(t *testing.T, name string, g, p *normalform.Tx) bool {
	t.Helper()
	ok := true
	if g.Meta.Hash != p.Meta.Hash {
		t.Errorf("%s: hash %s vs %s", name, g.Meta.Hash.Hex(), p.Meta.Hash.Hex())
		ok = false
	}
	if g.Stats != p.Stats {
		t.Errorf("%s: stats differ:\n  geth   %+v\n  parity %+v", name, g.Stats, p.Stats)
		ok = false
	}
	if len(g.Transfers) != len(p.Transfers) {
		t.Errorf("%s: %d transfers from geth, %d from parity", name, len(g.Transfers), len(p.Transfers))
		ok = false
	}
	for i := 0; i < len(g.Transfers) || i < len(p.Transfers); i++ {
		switch {
		case i >= len(g.Transfers):
			t.Errorf("%s: transfer %d only in parity: %s", name, i, flatTransferString(&p.Transfers[i]))
		case i >= len(p.Transfers):
			t.Errorf("%s: transfer %d only in geth: %s", name, i, flatTransferString(&g.Transfers[i]))
		case !flatSameTransfer(&g.Transfers[i], &p.Transfers[i]):
			t.Errorf("%s: transfer %d differs:\n  geth   %s\n  parity %s", name, i,
				flatTransferString(&g.Transfers[i]), flatTransferString(&p.Transfers[i]))
		default:
			continue
		}
		ok = false
	}
	if d := flatTreeDiff(g.Root, p.Root, "T0"); d != "" {
		t.Errorf("%s: T0 differs at %s", name, d)
		ok = false
	}
	return ok
}

func flatDecodeOne(t *testing.T, name string, data []byte) *normalform.Tx {
	t.Helper()
	res := Decode(data, Options{Source: name})
	for _, e := range res.Errors {
		t.Errorf("%s: decode error: %v", name, e)
	}
	if len(res.Txs) != 1 {
		t.Errorf("%s: %d transactions decoded, want 1", name, len(res.Txs))
		return nil
	}
	return res.Txs[0]
}

func TestFlattenGethToParity(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/go-ethereum/call_tracer_withLog/*.json")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) != 10 {
		t.Fatalf("want 10 geth files, found %d", len(files))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			data, doc, hash, block := flatTracetest(t, path)
			f := flatten(t, doc, hash, block, 0, 0)
			flat := flatMarshal(t, map[string]any{"traces": f.traces, "logs": f.logs})

			gres := Decode(data, Options{Source: name})
			pres := Decode(flat, Options{Source: name + " (flattened)"})
			for _, e := range gres.Errors {
				t.Errorf("geth decode error: %v", e)
			}
			for _, e := range pres.Errors {
				t.Errorf("parity decode error: %v", e)
			}
			if len(gres.Txs) != len(pres.Txs) || len(gres.Txs) != 1 {
				t.Fatalf("%d transactions from geth, %d from parity (want 1)", len(gres.Txs), len(pres.Txs))
			}
			g, p := gres.Txs[0], pres.Txs[0]
			if g.Shape != "geth" || p.Shape != "parity" {
				t.Errorf("shapes %q / %q, want geth / parity", g.Shape, p.Shape)
			}
			same := flatCompare(t, name, g, p)
			t.Logf("%-36s frames %3d (flat %3d), logs kept %2d dropped %d, transfers %d, T0 leaves %d, identical %v",
				name, g.Stats.Frames, len(f.traces), len(f.logs), f.dropped, len(g.Transfers), len(g.Root.Leaves(nil)), same)

			rev := flatReverted(flatObj(doc["result"]))
			if name == "tx_failed.json" || name == "tx_partial_failed.json" {
				if len(rev) == 0 {
					t.Errorf("%s should have reverted frames", name)
				}
				var idx []int
				for i := range rev {
					idx = append(idx, int(i))
				}
				sort.Ints(idx)
				t.Logf("%s: %d frames, reverted pre-order indices %v; %d logs kept, %d dropped; %d transfers; status %v",
					name, g.Stats.Frames, idx, len(f.logs), f.dropped, len(g.Transfers), g.Meta.Status)
				for _, tx := range []*normalform.Tx{g, p} {
					for i := range tx.Transfers {
						tr := &tx.Transfers[i]
						t.Logf("  %s transfer: %s", tx.Shape, flatTransferString(tr))
						if rev[tr.Frame] {
							t.Errorf("%s: %s transfer %d is in reverted frame %d", name, tx.Shape, i, tr.Frame)
						}
					}
					for _, fi := range flatTreeFrames(tx.Root, nil) {
						if rev[fi] {
							t.Errorf("%s: %s T0 holds reverted frame %d", name, tx.Shape, fi)
						}
					}
				}
			}
			if g.Stats.RevertedFrames != len(rev) {
				t.Errorf("decoder counts %d reverted frames, the raw trace has %d", g.Stats.RevertedFrames, len(rev))
			}
		})
	}
}

// TestFlattenParityBlock builds a harder Parity input by hand from two
// flattened traces: a trace_block-style list holding both transactions'
// frames plus a block reward frame, and the block's logs with block-wide
// logIndex values, listed in reverse. Each transaction must decode exactly as
// its own flattened trace does, its log indices shifted by the logs of the
// transactions before it.
func TestFlattenParityBlock(t *testing.T) {
	dir := "testdata/corpus/go-ethereum/call_tracer_withLog/"
	names := []string{"delegatecall.json", "multi_contracts.json"}
	var single []*normalform.Tx
	var traces, logs []any
	const block = 1_000_000
	logBase := 0
	var firstLog []int
	for i, name := range names {
		_, doc, hash, _ := flatTracetest(t, dir+name)
		alone := flatten(t, doc, hash, block, i, 0)
		tx := flatDecodeOne(t, name+" (flattened)", flatMarshal(t, map[string]any{"traces": alone.traces, "logs": alone.logs}))
		if tx == nil {
			t.FailNow()
		}
		single = append(single, tx)
		f := flatten(t, doc, hash, block, i, logBase)
		firstLog = append(firstLog, logBase)
		logBase = f.logIndex
		traces = append(traces, f.traces...)
		logs = append(logs, f.logs...)
	}
	traces = append(traces, map[string]any{
		"action":       map[string]any{"author": "0x61c808d82a3ac53231750dadc13c777b59310bd9", "rewardType": "block", "value": "0x4563918244f40000"},
		"blockNumber":  block,
		"result":       nil,
		"subtraces":    0,
		"traceAddress": []int{},
		"type":         "reward",
	})
	for i, j := 0, len(logs)-1; i < j; i, j = i+1, j-1 {
		logs[i], logs[j] = logs[j], logs[i]
	}
	data := flatMarshal(t, map[string]any{"traces": traces, "logs": logs})
	res := Decode(data, Options{Source: "synthetic block"})
	for _, e := range res.Errors {
		t.Errorf("decode error: %v", e)
	}
	if len(res.Txs) != len(names) {
		t.Fatalf("%d transactions decoded, want %d", len(res.Txs), len(names))
	}
	for i, tx := range res.Txs {
		want := single[i]
		if !tx.Meta.HasIndex || tx.Meta.Index != i || !tx.Meta.HasBlock || tx.Meta.Block != block {
			t.Errorf("%s: index %d/%v block %d/%v", names[i], tx.Meta.Index, tx.Meta.HasIndex, tx.Meta.Block, tx.Meta.HasBlock)
		}
		flatCompare(t, names[i]+" in block", want, tx)
		for k := range tx.Transfers {
			if k >= len(want.Transfers) {
				break
			}
			w, g := want.Transfers[k].LogIndex, tx.Transfers[k].LogIndex
			if w >= 0 {
				w += int32(firstLog[i])
			}
			if g != w {
				t.Errorf("%s: transfer %d logIndex %d, want %d", names[i], k, g, w)
			}
		}
		t.Logf("%s in block: %d transfers, logs from index %d", names[i], len(tx.Transfers), firstLog[i])
	}
}

// TestFlattenBareLogs strips the flattened logs down to address, topics and
// data, as a caller holding only a single transaction's raw logs would give
// them: no logIndex (array order is execution order) and no transactionHash
// (the single transaction owns them). The decoding must still match geth's.
func TestFlattenBareLogs(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/go-ethereum/call_tracer_withLog/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 10 {
		t.Fatalf("want 10 geth files, found %d", len(files))
	}
	for _, path := range files {
		name := filepath.Base(path)
		data, doc, hash, block := flatTracetest(t, path)
		f := flatten(t, doc, hash, block, 0, 0)
		bare := make([]any, len(f.logs))
		for i, l := range f.logs {
			m := flatObj(l)
			bare[i] = map[string]any{"address": m["address"], "topics": m["topics"], "data": m["data"]}
		}
		g := flatDecodeOne(t, name, data)
		p := flatDecodeOne(t, name+" (flattened, bare logs)", flatMarshal(t, map[string]any{"traces": f.traces, "logs": bare}))
		if g == nil || p == nil {
			continue
		}
		flatCompare(t, name+" (bare logs)", g, p)
		for i := range p.Transfers {
			if p.Transfers[i].Event >= normalform.EvERC20Transfer && p.Transfers[i].LogIndex != -1 {
				t.Errorf("%s (bare logs): transfer %d has logIndex %d, want -1", name, i, p.Transfers[i].LogIndex)
			}
		}
	}
}
