package fetch

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch/screen"
	"github.com/flowq/flowq/index/ingest"
)

// DefaultScreenWindow is the blocks ScreenConfirm screens and confirms at
// a time when not told: on mainnet (150 to 300 transactions a block) a
// window of 50 keeps 7,500 to 15,000 receipts with their headers, some
// 30 to 90 MB (Screened holds 4 to 6 KB a transaction; 30 MB for 50
// synthetic blocks of 100 transactions).
const DefaultScreenWindow = 50

// ScreenConfirm screens blocks from..to with rc (a receipts client) and
// confirms their suspects with tc (a trace client), window blocks at a
// time (0: DefaultScreenWindow): each window is screened keeping its
// receipts and headers (Screen), its suspects confirmed with them
// (ConfirmScreened: only their traces are fetched), and what was kept is
// dropped before the next window, so that memory is bounded by one
// window. A block of the range already in the index is not fetched, so
// not kept: its suspects still receipts-only are confirmed as Confirm
// does (receipt and header fetched again with the trace), which is how a
// run over a range already screened resumes. The reports add up the
// windows' (Screen's From and To are the whole range; the confirm
// report's KeptMax is the largest window's kept bytes). It stops at the
// first error (the context's, or the index's), with what was done so far.
func ScreenConfirm(ctx context.Context, rc, tc *Client, ix *index.Index, from, to uint64, window int, opt ingest.Options) (IngestReport, ConfirmReport, error) {
	srep := IngestReport{From: from, To: to}
	crep := ConfirmReport{SuspectsBy: map[screen.Reason]int{}}
	if rc.opt.Mode != Receipts {
		return srep, crep, errors.New("fetch: screening needs a client in receipts mode")
	}
	if tc.opt.Mode == Receipts {
		return srep, crep, errors.New("fetch: confirming needs a trace mode (geth, flat or parity), not receipts")
	}
	if to < from {
		return srep, crep, fmt.Errorf("fetch: empty block range %d..%d", from, to)
	}
	if window <= 0 {
		window = DefaultScreenWindow
	}
	kept := NewScreened()
	for lo := from; ; {
		hi := to
		if to-lo >= uint64(window) {
			hi = lo + uint64(window) - 1
		}
		s, err := rc.Screen(ctx, ix, lo, hi, opt, kept)
		srep.add(s)
		crep.KeptMax = max(crep.KeptMax, kept.Bytes())
		if err != nil {
			return srep, crep, err
		}
		c, err := tc.ConfirmScreened(ctx, ix, lo, hi, opt, kept)
		crep.add(c)
		kept.Drop(hi + 1)
		if err != nil {
			return srep, crep, err
		}
		if hi == to {
			return srep, crep, nil
		}
		lo = hi + 1
	}
}

// addSummary adds s's counts to *d.
func addSummary(d *ingest.Summary, s ingest.Summary) {
	d.Inputs += s.Inputs
	d.InputsSkipped += s.InputsSkipped
	d.Stored += s.Stored
	d.Unchanged += s.Unchanged
	d.Kept += s.Kept
	d.Blocks += s.Blocks
	d.Skipped += s.Skipped
	d.Repeated += s.Repeated
	d.Failed += s.Failed
	d.Elapsed += s.Elapsed
}

// add adds a window's report to r (whose From and To stay).
func (r *IngestReport) add(w IngestReport) {
	addSummary(&r.Summary, w.Summary)
	r.AlreadyIndexed += w.AlreadyIndexed
	r.Fetched += w.Fetched
	r.Missing = append(r.Missing, w.Missing...)
	r.Failures = append(r.Failures, w.Failures...)
}

// add adds a window's report to r.
func (r *ConfirmReport) add(w ConfirmReport) {
	addSummary(&r.Summary, w.Summary)
	r.Screened += w.Screened
	r.Suspects += w.Suspects
	for k, n := range w.SuspectsBy {
		r.SuspectsBy[k] += n
	}
	r.Confirmed += w.Confirmed
	r.Changed = append(r.Changed, w.Changed...)
	r.Missing = append(r.Missing, w.Missing...)
	r.Failures = append(r.Failures, w.Failures...)
	r.Reused += w.Reused
}
