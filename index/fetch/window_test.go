package fetch

import (
	"context"
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/workload"
)

// TestScreenConfirmWindows: ScreenConfirm over 5 synthetic blocks of 20
// transactions (a loopback workload.Node), in windows of 2 blocks (2, 2,
// then 1): every suspect is confirmed with its window's screened receipt
// (Reused), the reports add up the windows (the screening's range is the
// whole one), the most bytes kept at once is exactly the largest
// window's receipts and headers (the windows before it dropped), and the
// records are those of one ScreenConfirm over the whole range in one
// window. A trace client for screening, a receipts client for
// confirming, an empty range and a cancelled context are errors.
func TestScreenConfirmWindows(t *testing.T) {
	sc, err := workload.LoadScenarios("../../examples/scenarios/geth")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 5, BlockTxs: 20})
	if err != nil {
		t.Fatal(err)
	}
	node := workload.NewNode()
	var from, to uint64
	for i := 0; i < 5; i++ {
		b := gen.Block()
		if i == 0 {
			from = b.Number
		}
		to = b.Number
		if err := node.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(node)
	defer srv.Close()
	ctx := context.Background()
	o := Options{Concurrency: 2, BatchSize: 2, Retries: 1, Backoff: time.Millisecond, Timeout: 30 * time.Second}
	ro := o
	ro.Mode = Receipts
	rc, tc := dial(t, srv.URL, ro), dial(t, srv.URL, o)
	var iopt ingest.Options

	// What each block's screening keeps, block by block.
	per := map[uint64]int64{}
	for n := from; n <= to; n++ {
		s := NewScreened()
		if _, err := rc.Screen(ctx, openIndex(t), n, n, iopt, s); err != nil {
			t.Fatal(err)
		}
		per[n] = s.Bytes()
	}
	wantMax := max(per[from]+per[from+1], per[from+2]+per[from+3], per[from+4])

	ix := openIndex(t)
	srep, crep, err := ScreenConfirm(ctx, rc, tc, ix, from, to, 2, iopt)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, srep, crep)
	}
	t.Log(srep, "\n", crep)
	if srep.From != from || srep.To != to || srep.Fetched != 5 || !srep.Complete() || srep.Stored != 100 || srep.Inputs != 5 {
		t.Errorf("screening report: %s, want blocks %d..%d, 5 fetched, 100 stored", srep, from, to)
	}
	if crep.Screened != 100 || crep.Suspects == 0 || crep.Suspects >= 100 || crep.Confirmed != crep.Suspects || crep.Reused != crep.Suspects ||
		len(crep.Missing) != 0 || crep.Stored != crep.Suspects {
		t.Errorf("confirm report: %+v, want 100 screened, every suspect confirmed with its screened receipt", crep)
	}
	by := 0
	for _, n := range crep.SuspectsBy {
		by += n
	}
	if by != crep.Suspects {
		t.Errorf("suspects by reason add up to %d, not %d: %v", by, crep.Suspects, crep.SuspectsBy)
	}
	if crep.KeptMax != wantMax {
		t.Errorf("kept at most %d bytes at once, want %d (the largest window's; blocks: %v)", crep.KeptMax, wantMax, per)
	}

	one := openIndex(t)
	_, crep1, err := ScreenConfirm(ctx, rc, tc, one, from, to, 0, iopt) // the default window holds the 5 blocks
	if err != nil || crep1.Confirmed != crep.Confirmed || crep1.Reused != crep.Reused {
		t.Fatalf("one window: %v, %+v", err, crep1)
	}
	if a, b := records(t, ix), records(t, one); !reflect.DeepEqual(a, b) {
		t.Errorf("windows of 2 and one window give different records (%d and %d)", len(a), len(b))
	}

	for _, c := range []struct {
		name   string
		rc, tc *Client
		lo, hi uint64
		want   string
	}{
		{"trace client screening", tc, tc, from, to, "screening needs a client in receipts mode"},
		{"receipts client confirming", rc, rc, from, to, "confirming needs a trace mode"},
		{"empty range", rc, tc, to, from, "empty block range"},
	} {
		if _, _, err := ScreenConfirm(ctx, c.rc, c.tc, openIndex(t), c.lo, c.hi, 2, iopt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := ScreenConfirm(cctx, rc, tc, openIndex(t), from, to, 2, iopt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
