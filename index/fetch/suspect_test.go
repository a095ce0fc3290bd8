package fetch

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch/screen"
	"github.com/flowq/flowq/internal/bundles"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// receiptsOnly is bundles.ReceiptsOnly: a scenario bundle (either trace
// shape) as a receipts-mode fetch saves it.
func receiptsOnly(t *testing.T, raw []byte) []byte {
	t.Helper()
	out, err := bundles.ReceiptsOnly(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSuspectEveryScenario analyses every scenario bundle, both shapes
// (geth's callTracer and Parity's flat traces), traced and from its
// receipts alone, and checks that every transaction the trace calls
// arbitrage is a suspect from its receipts-only record (Suspect, on the
// record as the index keeps it): among them the three whose cycle closes
// through ETH moved by internal calls (wrap_cycle_refund, v4_v2_arb,
// v4_ur_v2_arb), which receipts call none. It logs the suspects among
// the others, by reason.
func TestSuspectEveryScenario(t *testing.T) {
	cfg := normalform.DefaultConfig()
	var arb, arbNone, others int
	cost := map[screen.Reason][]string{}
	for _, shape := range []string{"geth", "parity"} {
		files, err := filepath.Glob(filepath.Join("..", "..", "examples", "scenarios", shape, "*.json"))
		if err != nil || len(files) < 40 {
			t.Fatalf("%s: expected the scenario bundles, found %d (%v)", shape, len(files), err)
		}
		for _, f := range files {
			name := shape + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			traced := trace.Decode(raw, trace.Options{Config: cfg, Source: name})
			rcpt := trace.Decode(receiptsOnly(t, raw), trace.Options{Config: cfg, Source: name + " (receipts)"})
			if len(traced.Errors) != 0 || len(rcpt.Errors) != 0 || len(traced.Txs) != 1 || len(rcpt.Txs) != 1 {
				t.Fatalf("%s: traced %d txs %v, receipts %d txs %v", name, len(traced.Txs), traced.Errors, len(rcpt.Txs), rcpt.Errors)
			}
			ta, err := normalform.Analyze(traced.Txs[0], cfg)
			if err != nil {
				t.Fatal(err)
			}
			ra, err := normalform.Analyze(rcpt.Txs[0], cfg)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := index.NewRecord(ra, 0)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Mode != normalform.ModeReceipts {
				t.Fatalf("%s: the receipts-only record is in mode %s", name, rec.Mode)
			}
			why, err := SuspectWhy(rec, cfg)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if ok, _ := Suspect(rec, cfg); ok != (why != "") {
				t.Fatalf("%s: Suspect %v, SuspectWhy %q", name, ok, why)
			}
			if ta.Verdict == normalform.VerdictArbitrage {
				arb++
				if ra.Verdict == normalform.VerdictNone {
					arbNone++
				}
				if why == "" {
					t.Errorf("%s: traced arbitrage, receipts-only %s, not a suspect", name, ra.Verdict)
				}
				continue
			}
			others++
			if why != "" {
				cost[why] = append(cost[why], name)
			}
		}
	}
	if arbNone != 6 {
		t.Errorf("%d traced arbitrages are none from receipts, want 6 (wrap_cycle_refund, v4_v2_arb, v4_ur_v2_arb in both shapes)", arbNone)
	}
	var b strings.Builder
	n := 0
	for _, w := range screen.Reasons {
		sort.Strings(cost[w])
		n += len(cost[w])
		fmt.Fprintf(&b, "\n  %s %d: %s", w, len(cost[w]), strings.Join(cost[w], " "))
	}
	t.Logf("%d traced arbitrages (%d none from receipts), all suspects; of the other %d, suspects %d:%s", arb, arbNone, others, n, b.String())
}
