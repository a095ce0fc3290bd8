package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch/screen"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// Screen, then confirm: a block range is ingested from receipts (cheap,
// any node), and only the transactions whose receipts-only analysis finds
// something are traced. The traced record replaces the receipts one (the
// index never lets a receipts record replace a traced one, and always
// lets a traced one replace a receipts one).

// TxName is the index input name of a transaction fetched from a node
// on its own: "rpc:tx:0xHASH" (lowercase).
func TxName(h common.Hash) string { return "rpc:tx:" + strings.ToLower(h.Hex()) }

// ParseTxName is the inverse of TxName.
func ParseTxName(name string) (common.Hash, bool) {
	s, ok := strings.CutPrefix(name, "rpc:tx:0x")
	if !ok || len(s) != 64 || strings.Trim(strings.ToLower(s), "0123456789abcdef") != "" {
		return common.Hash{}, false
	}
	return common.HexToHash(s), true
}

// Suspect reports whether a receipts-only record is worth tracing
// (SuspectWhy says why). A traced record never is. cfg is the ingest's
// configuration (its wrapped-native contracts); nil is DefaultConfig.
func Suspect(r *index.Record, cfg *normalform.Config) (bool, error) {
	why, err := SuspectWhy(r, cfg)
	return why != "", err
}

// SuspectWhy says why a receipts-only record is worth tracing, or ""
// when it is not (a traced record never is): its analysis found a
// detection or a cycle, or what receipts cannot show (native value moved
// by internal calls) could close a cycle — the rule of package
// index/fetch/screen, applied to the record's decoded normal form. The
// record's header answers first (verdict, reason receipts_only, counted
// cycles, reason v4_netted); the normal form is decoded only when it does
// not.
func SuspectWhy(r *index.Record, cfg *normalform.Config) (screen.Reason, error) {
	if r.Mode != normalform.ModeReceipts {
		return "", nil
	}
	if r.Verdict != normalform.VerdictNone || r.Counts.Cycles > 0 || slices.Contains(r.Reasons, normalform.ReasonReceiptsOnly) {
		return screen.Detection, nil
	}
	if slices.Contains(r.Reasons, normalform.ReasonV4Netted) {
		return screen.PoolManager, nil
	}
	if len(r.NF) == 0 {
		return "", nil
	}
	a, err := normalform.DecodeNF(r.NF)
	if err != nil {
		return "", fmt.Errorf("the normal form of %s in the index: %w", r.Hash.Hex(), err)
	}
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	return screen.Why(a, cfg), nil
}

// Change is a confirmed transaction whose traced verdict differs from its
// receipts-only one.
type Change struct {
	Tx                    normalform.Hash
	Receipts, Traced      normalform.Verdict
	ReceiptsTier, TraTier normalform.Tier
}

// ConfirmReport is what Confirm did.
type ConfirmReport struct {
	ingest.Summary                       // the ingest of the traced bundles
	Screened       int                   // receipts-only records of the range read
	Suspects       int                   // of them, those worth tracing (SuspectWhy)
	SuspectsBy     map[screen.Reason]int // the suspects by reason
	Confirmed      int                   // suspects whose traced analysis is now in the index
	Changed        []Change              // confirmed with another verdict, in position order
	Missing        []string              // suspects whose trace the node did not give: "0xHASH: error"
	Failures       []index.Failure
	// Reused is how many suspects were confirmed with the receipt and
	// header the screening fetched (ConfirmScreened): only their traces
	// were fetched.
	Reused int
	// KeptMax is the most bytes of screened receipts and headers held
	// at once (ScreenConfirm: one window's); 0 for Confirm and
	// ConfirmScreened.
	KeptMax int64
}

// String says what was screened, confirmed and changed.
func (r ConfirmReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "confirm: %d screened from receipts, %d to confirm, %d confirmed (traced), %d changed (verdict differs), %d missing",
		r.Screened, r.Suspects, r.Confirmed, len(r.Changed), len(r.Missing))
	if r.Suspects > 0 {
		var parts []string
		for _, w := range screen.Reasons {
			if n := r.SuspectsBy[w]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", w, n))
			}
		}
		fmt.Fprintf(&b, "\n  to confirm because: %s", strings.Join(parts, ", "))
		if r.Reused > 0 {
			fmt.Fprintf(&b, "; %d with the screened receipt (trace fetched alone)", r.Reused)
		}
	}
	for i, c := range r.Changed {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... %d more changed", len(r.Changed)-10)
			break
		}
		fmt.Fprintf(&b, "\n  changed %s: receipts %s, traces %s", c.Tx.Hex(), verdictTier(c.Receipts, c.ReceiptsTier), verdictTier(c.Traced, c.TraTier))
	}
	for i, m := range r.Missing {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... %d more missing", len(r.Missing)-10)
			break
		}
		fmt.Fprintf(&b, "\n  not confirmed %s", m)
	}
	if len(r.Missing) > 0 {
		b.WriteString("\n  the missing traces are recorded as failures: run the same command again, or retry them (flowq ingest --retry-failed --rpc URL)")
	}
	return b.String()
}

func verdictTier(v normalform.Verdict, t normalform.Tier) string {
	if t == normalform.TierNone {
		return v.String()
	}
	return v.String() + " (" + t.String() + ")"
}

// Confirm is ConfirmScreened without screened data: each suspect's
// receipt and header are fetched with its trace.
func (c *Client) Confirm(ctx context.Context, ix *index.Index, from, to uint64, opt ingest.Options) (ConfirmReport, error) {
	return c.ConfirmScreened(ctx, ix, from, to, opt, nil)
}

// ConfirmScreened traces the suspects of blocks from..to: it reads the range's
// receipts-only records (Suspect), fetches each suspect's bundle with c,
// which must be a trace mode (Geth, Flat or Parity), and ingests it as the
// input TxName(hash), so that its traced record replaces the receipts one.
// A transaction the node does not trace after the retries is recorded as a
// read failure of its input (RetryFailed fetches it again) and the others
// go on. Running it again confirms what is still receipts-only: it resumes.
// A suspect whose receipt and header s holds (Screen kept them) is
// fetched as its trace alone (debug_traceTransaction or
// trace_transaction), checked against them; the others as Client.Txs.
func (c *Client) ConfirmScreened(ctx context.Context, ix *index.Index, from, to uint64, opt ingest.Options, s *Screened) (ConfirmReport, error) {
	rep := ConfirmReport{SuspectsBy: map[screen.Reason]int{}}
	if c.opt.Mode == Receipts {
		return rep, errors.New("fetch: confirming needs a trace mode (geth, flat or parity), not receipts")
	}
	type suspect struct {
		hash    common.Hash
		verdict normalform.Verdict
		tier    normalform.Tier
	}
	var sus []suspect
	var serr error
	cfg := opt.Config
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	err := ix.Filter(ctx, index.Blocks(from, to), false, func(r *index.Record) (bool, error) {
		return r.Mode == normalform.ModeReceipts, nil
	}, true, func(r *index.Record) error {
		rep.Screened++
		why, err := SuspectWhy(r, cfg)
		if err != nil {
			serr = err
			return err
		}
		if why != "" {
			rep.SuspectsBy[why]++
			sus = append(sus, suspect{common.Hash(r.Hash), r.Verdict, r.Tier})
		}
		return nil
	})
	if serr != nil {
		return rep, serr
	}
	if err != nil {
		return rep, err
	}
	rep.Suspects = len(sus)
	if len(sus) == 0 {
		return rep, nil
	}
	onFailure := opt.OnFailure
	opt.OnFailure = func(f index.Failure) {
		rep.Failures = append(rep.Failures, f)
		if onFailure != nil {
			onFailure(f)
		}
	}
	opt.Total = len(sus)
	g := ingest.NewIngester(ctx, ix, opt)
	chunk := 16 * c.opt.BatchSize * c.opt.Concurrency
	for lo := 0; lo < len(sus) && err == nil; lo += chunk {
		part := sus[lo:min(lo+chunk, len(sus))]
		hashes := make([]common.Hash, len(part))
		for i, s := range part {
			hashes[i] = s.hash
		}
		bundles, ferr := c.fetchSuspects(ctx, hashes, s, &rep.Reused)
		if ferr != nil && ctx.Err() == nil {
			// One at a time, so that one transaction the node does not
			// trace does not take the others with it.
			bundles = make([][]byte, len(hashes))
			for i, h := range hashes {
				one, terr := c.fetchSuspects(ctx, []common.Hash{h}, s, &rep.Reused)
				var b []byte
				if terr == nil {
					b = one[0]
				}
				if terr != nil {
					if ctx.Err() != nil {
						break
					}
					rep.Missing = append(rep.Missing, h.Hex()+": "+strings.TrimSpace(terr.Error()))
					if err = g.Add(ingest.Input{Name: TxName(h), Load: func(int) ([]byte, error) { return nil, terr }}); err != nil {
						break
					}
					continue
				}
				bundles[i] = b
			}
		}
		if ctx.Err() != nil {
			err = ctx.Err()
			break
		}
		for i, b := range bundles {
			if b == nil {
				continue
			}
			if err = g.Add(ingest.BundleInput(TxName(hashes[i]), b)); err != nil {
				break
			}
		}
	}
	sum, cerr := g.Close()
	rep.Summary = sum
	if err == nil {
		err = cerr
	}
	if err != nil {
		return rep, err
	}
	for _, s := range sus {
		r, gerr := ix.Get(normalform.Hash(s.hash))
		if gerr != nil {
			if errors.Is(gerr, index.ErrNotFound) {
				continue
			}
			return rep, gerr
		}
		if r.Mode != normalform.ModeTraces {
			continue
		}
		rep.Confirmed++
		if r.Verdict != s.verdict {
			rep.Changed = append(rep.Changed, Change{Tx: r.Hash, Receipts: s.verdict, ReceiptsTier: s.tier, Traced: r.Verdict, TraTier: r.Tier})
		}
	}
	return rep, nil
}

// fetchSuspects fetches the bundles of hashes: those s holds as their
// trace alone (txsKnown), the others whole (Txs); reused counts the
// former.
func (c *Client) fetchSuspects(ctx context.Context, hashes []common.Hash, s *Screened, reused *int) ([][]byte, error) {
	out := make([][]byte, len(hashes))
	var known, rest []int
	var kh []common.Hash
	var kr, kb []json.RawMessage
	for i, h := range hashes {
		if r, hd, ok := s.get(h); ok {
			known = append(known, i)
			kh, kr, kb = append(kh, h), append(kr, r), append(kb, hd)
		} else {
			rest = append(rest, i)
		}
	}
	if len(known) > 0 {
		bs, err := c.txsKnown(ctx, kh, kr, kb)
		if err != nil {
			return nil, err
		}
		for j, i := range known {
			out[i] = bs[j]
		}
	}
	if len(rest) > 0 {
		rh := make([]common.Hash, len(rest))
		for j, i := range rest {
			rh[j] = hashes[i]
		}
		bs, err := c.Txs(ctx, rh)
		if err != nil {
			return nil, err
		}
		for j, i := range rest {
			out[i] = bs[j]
		}
	}
	*reused += len(known)
	return out, nil
}
