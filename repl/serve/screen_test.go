package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
)

// TestServeScreenConfirmReusesReceipts: an ingest job with mode receipts
// and confirm traces screens the range and traces each suspect alone,
// beside the receipt the screening kept: the node is never asked for a
// transaction's receipt again, and every suspect ends up traced.
func TestServeScreenConfirmReusesReceipts(t *testing.T) {
	if testing.Short() {
		t.Skip("serves synthetic blocks")
	}
	const blocks, txs = 3, 20
	sc, err := workload.LoadScenarios(examples(t, "scenarios/geth"))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 5, BlockTxs: txs})
	if err != nil {
		t.Fatal(err)
	}
	node := workload.NewNode()
	var from, to uint64
	for i := 0; i < blocks; i++ {
		b := gen.Block()
		if i == 0 {
			from = b.Number
		}
		to = b.Number
		if err := node.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(node)
	defer hs.Close()

	srv, c, _ := startServer(t)
	j := ingestJob(t, c, IngestRequest{RPC: hs.URL, Blocks: rangeText(from, to), Mode: "receipts", Confirm: "traces"})
	st := node.Stats()
	if n := st.Methods["eth_getTransactionReceipt"].Requests; n != 0 {
		t.Errorf("eth_getTransactionReceipt asked %d times: the confirmation refetched receipts the screening had", n)
	}
	if n := st.Methods["eth_getBlockByNumber"].Requests; n != blocks {
		t.Errorf("eth_getBlockByNumber asked %d times, want %d (one header a block)", n, blocks)
	}
	traced := st.Methods["debug_traceTransaction"].Requests
	if traced == 0 || traced >= blocks*txs {
		t.Fatalf("debug_traceTransaction asked %d times: want some but not all of %d transactions", traced, blocks*txs)
	}
	if !strings.Contains(j.Report, "with the screened receipt") {
		t.Errorf("the job's report does not say the receipts were reused:\n%s", j.Report)
	}
	n, modes := 0, map[normalform.Mode]int64{}
	err = srv.Ix.Records(context.Background(), index.Blocks(from, to), func(r *index.Record) error {
		n++
		modes[r.Mode]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != blocks*txs || modes[normalform.ModeTraces] != traced {
		t.Errorf("%d records, %d traced: want %d records, %d traced (one per suspect)\n%s", n, modes[normalform.ModeTraces], blocks*txs, traced, j.Report)
	}
}

func rangeText(from, to uint64) string { return fmt.Sprintf("%d..%d", from, to) }
