package trace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/internal/bundles"
	"github.com/flowq/flowq/internal/textdiff"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

// stripTraces is bundles.ReceiptsOnly: a scenario bundle as `flowq fetch
// --mode receipts` saves it.
func stripTraces(t testing.TB, raw []byte) []byte {
	t.Helper()
	out, err := bundles.ReceiptsOnly(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func verdictOf(a *normalform.Analysis) string {
	s := a.Verdict.String()
	if a.Tier != normalform.TierNone {
		s += " (" + a.Tier.String() + ")"
	}
	if p := a.Path(); p != normalform.PathNone {
		s += " " + p.String()
	}
	return s
}

// TestReceiptsOnlyScenarios strips the traces from every scenario bundle
// and analyses it from its receipts alone: every transaction decodes in
// ModeReceipts, every arbitrage it reports carries its Definition 5
// witness and the reason receipts_only, and none is an arbitrage where
// the traced analysis of the same transaction says none. The table of
// both verdicts per scenario is testdata/receipts_scenarios.txt
// (-update rewrites it; ARCHITECTURE.md explains each difference).
func TestReceiptsOnlyScenarios(t *testing.T) {
	files, err := filepath.Glob("../../examples/scenarios/geth/*.json")
	if err != nil || len(files) < 35 {
		t.Fatalf("expected the scenario bundles, found %d (%v)", len(files), err)
	}
	cfg := normalform.DefaultConfig()
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %-32s %-32s %-7s %-5s %s\n", "scenario", "traced", "receipts only", "agree", "gross", "net")
	agree := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		traced := Decode(raw, Options{Config: cfg, Source: name})
		rcpt := Decode(stripTraces(t, raw), Options{Config: cfg, Source: name + " (receipts)"})
		if len(traced.Errors) != 0 || len(rcpt.Errors) != 0 || len(traced.Txs) != len(rcpt.Txs) || len(rcpt.Txs) == 0 {
			t.Fatalf("%s: traced %d txs %v, receipts %d txs %v", name, len(traced.Txs), traced.Errors, len(rcpt.Txs), rcpt.Errors)
		}
		for i := range traced.Txs {
			ta, err := normalform.Analyze(traced.Txs[i], cfg)
			if err != nil {
				t.Fatal(err)
			}
			rtx := rcpt.Txs[i]
			if rtx.Meta.Hash != traced.Txs[i].Meta.Hash || rtx.Mode() != normalform.ModeReceipts || rtx.Shape != normalform.ShapeReceipts {
				t.Fatalf("%s: tx %d is %s in mode %s", name, i, rtx.Meta.Hash.Hex(), rtx.Mode())
			}
			if rtx.Stats.Frames != 1 {
				t.Errorf("%s: receipts-only tree has %d frames, want the root alone", name, rtx.Stats.Frames)
			}
			ra, err := normalform.Analyze(rtx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ra.Detections {
				if d.Witness == nil || len(d.Witness.Pieces) == 0 {
					t.Errorf("%s: receipts-only detection at %s without a witness", name, d.Origin.Hex())
				}
			}
			hasReason := false
			for _, r := range ra.Reasons {
				hasReason = hasReason || r == normalform.ReasonReceiptsOnly
			}
			if hasReason != (len(ra.Detections) > 0) {
				t.Errorf("%s: reasons %v with %d detections: receipts_only must be given exactly with a detection", name, ra.Reasons, len(ra.Detections))
			}
			if ra.Verdict == normalform.VerdictArbitrage && ta.Verdict == normalform.VerdictNone {
				t.Errorf("%s: receipts-only says arbitrage (%v) where the trace says none", name, ra.Reasons)
			}
			label := name
			if len(traced.Txs) > 1 {
				label = fmt.Sprintf("%s[%d]", name, i)
			}
			same := "yes"
			if ta.Verdict != ra.Verdict {
				same = "no"
			} else if verdictOf(ta) != verdictOf(ra) {
				same = "verdict"
			} else {
				agree++
			}
			fmt.Fprintf(&b, "%-24s %-32s %-32s %-7s %-5s %s\n", label, verdictOf(ta), verdictOf(ra), same,
				sameText(show.FormatGross(cfg, ta.Gross), show.FormatGross(cfg, ra.Gross)), sameText(show.FormatDelta(cfg, ta.Net), show.FormatDelta(cfg, ra.Net)))
		}
	}
	fmt.Fprintf(&b, "agree in verdict, tier and path: %d\n", agree)
	got := b.String()
	t.Logf("\n%s", got)
	golden := filepath.Join("testdata", "receipts_scenarios.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestReceiptsOnlyScenarios -update)", err)
	}
	if string(want) != got {
		d := textdiff.FirstLine(string(want), got)
		t.Errorf("the table differs from %s (-update rewrites it):\n%s", golden, d)
	}
}

func sameText(a, b string) string {
	if a == b {
		return "same"
	}
	return "diff"
}

// TestReceiptsOnly checks what a receipts-only transaction is made of,
// on the wrap and unwrap scenarios (the transaction's own value paying a
// Deposit; a Withdrawal whose ETH comes back by an internal call) and on
// a bot's arbitrage, given as receipts and as the eth_getLogs fallback
// (a block's logs and its transactions, no receipt): the transfers the
// trace has, less the native value of internal calls, each log's σ the
// zero address, one frame; in text and JSON the mode.
func TestReceiptsOnly(t *testing.T) {
	cfg := normalform.DefaultConfig()
	for _, c := range []struct {
		name       string
		transfers  int // receipts-only transfers (the trace's, less hidden native value)
		native     int // native legs among them
		logsFormat bool
	}{
		{"wrap", 2, 1, false}, {"unwrap", 2, 1, false}, {"two_pool_arb", 3, 0, false},
		{"wrap", 2, 1, true}, {"unwrap", 2, 1, true},
	} {
		raw, err := os.ReadFile("../../examples/scenarios/geth/" + c.name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		in := stripTraces(t, raw)
		if c.logsFormat {
			var d map[string]json.RawMessage
			if err := json.Unmarshal(in, &d); err != nil {
				t.Fatal(err)
			}
			var rs []struct {
				Logs json.RawMessage `json:"logs"`
			}
			if err := json.Unmarshal(d["receipts"], &rs); err != nil {
				t.Fatal(err)
			}
			delete(d, "receipts")
			d["logs"] = rs[0].Logs
			if in, err = json.Marshal(d); err != nil {
				t.Fatal(err)
			}
		}
		res := Decode(in, Options{Config: cfg})
		if len(res.Errors) != 0 || len(res.Txs) != 1 {
			t.Fatalf("%s: %v, %d txs", c.name, res.Errors, len(res.Txs))
		}
		tx := res.Txs[0]
		native := 0
		for _, tr := range tx.Transfers {
			if tr.Token.Kind == normalform.Native {
				native++
				continue
			}
			if tr.Event == normalform.EvERC20Transfer && tr.Sender != (normalform.Address{}) {
				t.Errorf("%s: transfer #%d has σ %s: a receipt does not say who called the token", c.name, tr.Pos, tr.Sender.Hex())
			}
		}
		if len(tx.Transfers) != c.transfers || native != c.native {
			t.Errorf("%s (logs %v): %d transfers, %d native; want %d, %d", c.name, c.logsFormat, len(tx.Transfers), native, c.transfers, c.native)
		}
		if tx.Meta.HasReceipt == c.logsFormat {
			t.Errorf("%s: has receipt %v", c.name, tx.Meta.HasReceipt)
		}
		a, err := normalform.Analyze(tx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		show.WriteAnalysis(cfg, &text, a, false)
		if !strings.Contains(text.String(), "\n  mode: receipts (no trace: ") {
			t.Errorf("%s: the text does not give the mode:\n%s", c.name, text.String())
		}
		js, err := show.MarshalAnalysis(cfg, a, false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(js), `"mode":"receipts"`) {
			t.Errorf("%s: JSON without the mode: %.200s", c.name, js)
		}
	}
}
