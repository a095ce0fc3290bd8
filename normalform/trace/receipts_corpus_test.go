package trace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/flowq/flowq/internal/textdiff"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

// receiptsBundle is what `flowq fetch --mode receipts` would save for one
// traced transaction, when no receipt is at hand: the block (its number)
// with the transaction as a full object (hash, index, sender, recipient,
// value: the trace's top frame's), and the transaction's logs, the
// eth_getLogs fallback (costs unknown).
func receiptsBundle(t testing.TB, tx *normalform.Tx, from, to, value string, logs []json.RawMessage) []byte {
	t.Helper()
	h := tx.Meta.Hash.Hex()
	idx := int64(0)
	if tx.Meta.HasIndex {
		idx = int64(tx.Meta.Index)
	}
	var ls []map[string]any
	for i, raw := range logs {
		var l map[string]any
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		out := map[string]any{"address": l["address"], "topics": l["topics"], "data": l["data"], "transactionHash": h}
		out["logIndex"] = l["logIndex"]
		if out["logIndex"] == nil {
			out["logIndex"] = "0x" + strconv.FormatInt(int64(i), 16)
		}
		if out["topics"] == nil {
			out["topics"] = []any{}
		}
		ls = append(ls, out)
	}
	if ls == nil {
		ls = []map[string]any{}
	}
	if value == "" {
		value = "0x0"
	}
	o := map[string]any{"hash": h, "transactionIndex": "0x" + strconv.FormatInt(idx, 16), "from": from, "to": nil, "value": value}
	if to != "" {
		o["to"] = to
	}
	blk := map[string]any{"number": "0x" + strconv.FormatUint(tx.Meta.Block, 16), "transactions": []any{o}}
	b, err := json.Marshal(map[string]any{"block": blk, "logs": ls})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gethLogs are the logs of a callTracer withLog frame and its calls, in
// log order, those of failed frames (reverted) left out.
func gethLogs(t testing.TB, frame map[string]any) []json.RawMessage {
	type lg struct {
		index int64
		raw   json.RawMessage
	}
	var all []lg
	var walk func(f map[string]any)
	walk = func(f map[string]any) {
		if e, _ := f["error"].(string); e != "" {
			return
		}
		ls, _ := f["logs"].([]any)
		for _, l := range ls {
			m := l.(map[string]any)
			n := int64(len(all)) // no index: in walk order
			if s, _ := m["index"].(string); s != "" {
				n, _ = strconv.ParseInt(strings.TrimPrefix(s, "0x"), 16, 64)
			}
			delete(m, "index")
			raw, _ := json.Marshal(m)
			all = append(all, lg{n, raw})
		}
		cs, _ := f["calls"].([]any)
		for _, c := range cs {
			walk(c.(map[string]any))
		}
	}
	walk(frame)
	sort.SliceStable(all, func(i, j int) bool { return all[i].index < all[j].index })
	out := make([]json.RawMessage, len(all))
	for i, l := range all {
		var m map[string]any
		_ = json.Unmarshal(l.raw, &m)
		m["logIndex"] = "0x" + strconv.FormatInt(int64(i), 16)
		out[i], _ = json.Marshal(m)
	}
	return out
}

type corpusItem struct {
	label  string
	traced []byte                                              // the input as the repository has it
	strip  func(t testing.TB, tx *normalform.Tx, i int) []byte // its receipts-only projection, per decoded transaction
}

// corpusItems are the corpus transactions (mev-inspect-rs's Parity
// traces and logs, block 11017338's 124 transactions among them;
// go-ethereum's callTracer withLog tests) and the Parity scenario
// bundles, each with its receipts-only projection.
func corpusItems(t *testing.T) []corpusItem {
	var items []corpusItem
	parity := func(label string, raw []byte) {
		var one struct {
			Traces []struct {
				Action struct{ From, To, Value string } `json:"action"`
			} `json:"traces"`
			Logs json.RawMessage `json:"logs"`
		}
		if err := json.Unmarshal(raw, &one); err != nil || len(one.Traces) == 0 {
			t.Fatalf("%s: %v", label, err)
		}
		var logs []json.RawMessage
		if len(one.Logs) > 0 {
			if err := json.Unmarshal(one.Logs, &logs); err != nil {
				t.Fatal(err)
			}
		}
		top := one.Traces[0].Action
		items = append(items, corpusItem{label, raw, func(t testing.TB, tx *normalform.Tx, _ int) []byte {
			return receiptsBundle(t, tx, top.From, top.To, top.Value, logs)
		}})
	}
	files, _ := filepath.Glob("testdata/corpus/mev-inspect-rs/res/*.data.json")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".data.json")
		if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
			var list []json.RawMessage
			if err := json.Unmarshal(raw, &list); err != nil {
				t.Fatal(err)
			}
			for i, x := range list {
				parity(fmt.Sprintf("mev-inspect %s[%d]", name, i), x)
			}
			continue
		}
		parity("mev-inspect "+name, raw)
	}
	files, _ = filepath.Glob("testdata/corpus/go-ethereum/*/*.json")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		top := d.Result
		from, _ := top["from"].(string)
		to, _ := top["to"].(string)
		value, _ := top["value"].(string)
		if e, _ := top["error"].(string); e != "" {
			value = "0x0" // a failed transaction moves no value
		}
		logs := gethLogs(t, top)
		items = append(items, corpusItem{"go-ethereum " + strings.TrimSuffix(filepath.Base(f), ".json"), raw, func(t testing.TB, tx *normalform.Tx, _ int) []byte {
			return receiptsBundle(t, tx, from, to, value, logs)
		}})
	}
	files, _ = filepath.Glob("../../examples/scenarios/parity/*.json")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, corpusItem{"parity " + strings.TrimSuffix(filepath.Base(f), ".json"), raw, func(t testing.TB, _ *normalform.Tx, _ int) []byte {
			return stripTraces(t, raw)
		}})
	}
	return items
}

// TestReceiptsOnlyCorpus puts receipts-only verdicts beside traced ones
// on every corpus transaction (mev-inspect-rs's 139, go-ethereum's
// callTracer tests) and on the Parity scenario bundles (the geth ones
// are TestReceiptsOnlyScenarios'): each traced input is decoded and
// analysed, then its receipts-only projection (its logs and the top
// frame's sender, recipient and value, as `fetch --mode receipts`
// saves). The test fails when receipts-only says arbitrage where the
// trace says none without the reason receipts_only, or when a
// receipts-only detection lacks its witness. The table is
// testdata/receipts_corpus.txt (-update rewrites it).
func TestReceiptsOnlyCorpus(t *testing.T) {
	cfg := normalform.DefaultConfig()
	var rows strings.Builder
	type pair struct{ traced, rcpt normalform.Verdict }
	pairs := map[pair]int{}
	agree, total, falseArb := 0, 0, 0
	for _, it := range corpusItems(t) {
		traced := Decode(it.traced, Options{Config: cfg, Source: it.label})
		if len(traced.Txs) == 0 {
			t.Fatalf("%s: no transaction (%v)", it.label, traced.Errors)
		}
		for i, tx := range traced.Txs {
			ta, err := normalform.Analyze(tx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := Decode(it.strip(t, tx, i), Options{Config: cfg, Source: it.label + " (receipts)"})
			if len(res.Errors) != 0 || len(res.Txs) != 1 {
				t.Fatalf("%s: receipts-only: %d txs %v", it.label, len(res.Txs), res.Errors)
			}
			rtx := res.Txs[0]
			if rtx.Mode() != normalform.ModeReceipts || rtx.Meta.Hash != tx.Meta.Hash {
				t.Fatalf("%s: receipts-only tx %s in mode %s", it.label, rtx.Meta.Hash.Hex(), rtx.Mode())
			}
			ra, err := normalform.Analyze(rtx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ra.Detections {
				if d.Witness == nil || len(d.Witness.Pieces) == 0 {
					t.Errorf("%s: receipts-only detection without a witness", it.label)
				}
			}
			total++
			pairs[pair{ta.Verdict, ra.Verdict}]++
			same := "yes"
			switch {
			case ta.Verdict != ra.Verdict:
				same = "no"
			case verdictOf(ta) != verdictOf(ra):
				same = "verdict"
			default:
				agree++
			}
			if ra.Verdict == normalform.VerdictArbitrage && ta.Verdict == normalform.VerdictNone {
				falseArb++
				if !hasReceiptsOnly(ra) {
					t.Errorf("%s: receipts-only arbitrage where the trace says none, without the reason receipts_only", it.label)
				}
			}
			label := it.label
			if len(traced.Txs) > 1 {
				label = fmt.Sprintf("%s[%d]", it.label, i)
			}
			fmt.Fprintf(&rows, "%-40s %-30s %-30s %-7s %s\n", label, verdictOf(ta), verdictOf(ra), same, sameText(show.FormatGross(cfg, ta.Gross), show.FormatGross(cfg, ra.Gross)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %-30s %-30s %-7s %s\n", "transaction", "traced", "receipts only", "agree", "gross")
	b.WriteString(rows.String())
	fmt.Fprintf(&b, "transactions: %d; agree in verdict, tier and path: %d\n", total, agree)
	var ps []string
	for p, n := range pairs {
		ps = append(ps, fmt.Sprintf("traced %s, receipts %s: %d", p.traced, p.rcpt, n))
	}
	sort.Strings(ps)
	for _, p := range ps {
		b.WriteString(p + "\n")
	}
	fmt.Fprintf(&b, "receipts-only arbitrage where the trace says none: %d (each with receipts_only)\n", falseArb)
	got := b.String()
	t.Logf("\n%s", got)
	golden := filepath.Join("testdata", "receipts_corpus.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestReceiptsOnlyCorpus -update)", err)
	}
	if string(want) != got {
		t.Errorf("the table differs from %s (-update rewrites it):\n%s", golden, textdiff.FirstLine(string(want), got))
	}
}

func hasReceiptsOnly(a *normalform.Analysis) bool {
	for _, r := range a.Reasons {
		if r == normalform.ReasonReceiptsOnly {
			return true
		}
	}
	return false
}
