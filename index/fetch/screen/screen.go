// Package screen decides which receipts-only analyses are worth tracing
// (issue 19's screen, then confirm).
//
// Receipts show every token transfer (the logs), the transaction's own
// value and the wrapped native's ETH legs (its Deposit and Withdrawal
// logs); they do not show native value moved by internal calls. Why
// calls a receipts-only analysis a suspect when:
//
//   - Detection: it found an arbitrage or a warning (the verdict, or the
//     reason receipts_only);
//   - Cycle: its normal form holds a closed chain;
//   - PoolManager: a transfer touches a configured Uniswap V4 PoolManager
//     (the reason v4_netted): the manager nets swaps, and takes and pays
//     native ETH by internal calls;
//   - Coalition: the transaction moved a token (a transfer of anything
//     but native value: a cycle has one, and tokens are never hidden), and its
//     coalition as receipts know it (sender and recipient together) lost
//     no token other than the native asset and the wrapped native: in
//     every other token its visible balance is zero or a gain.
//
// Coalition is what makes the rule complete for the class "an arbitrage
// at the sender or the recipient whose cycle's only missing legs are
// native value moved by internal calls". The argument: the coalition's
// traced gross G and its receipts-only balance V differ by the hidden
// legs only, and every hidden leg is native, so in every token other than
// the native asset V equals G. An arbitrage's gross, folded (native and
// wrapped native one asset), loses nothing: so G, hence V, loses no token
// other than the native and the wrapped native, which is Coalition's
// test (it does not read the native or wrapped-native balance, which the
// hidden legs change). Outside the class: an arbitrage at an inner origin
// (neither sender nor recipient: reason inner_cycle), and a coalition
// whose gross loses a token besides its arbitrage's gain (a side
// purchase in the same transaction); a cycle made of native legs alone
// shows nothing in the logs. The tests check the rule on every scenario
// (both shapes) and on the 40,000 generated trees.
//
// The cost: a transaction that only receives tokens (a V4 swap paid in
// ETH, an airdrop claim) or moves nothing of the coalition's is a
// suspect; one where the coalition gives a token (a sale, a transfer, a
// swap, a liquidity deposit) is not, unless the other rules say so.
package screen

import (
	"github.com/flowq/flowq/normalform"
)

// Reason is why a receipts-only analysis is a suspect; "" when it is not.
type Reason string

// The reasons, in the order Why tries them.
const (
	Detection   Reason = "detection"
	Cycle       Reason = "cycle"
	PoolManager Reason = "pool_manager"
	Coalition   Reason = "coalition"
)

// Reasons lists them in that order.
var Reasons = []Reason{Detection, Cycle, PoolManager, Coalition}

// Why reports why the analysis a, made from receipts alone, should be
// traced, or "" when nothing in it could hide an arbitrage. It reads the
// verdict, the reasons, the closed chains (a.Cycles, or the normal form's
// top chains) and the transfers; it does not look at the mode (the
// caller does).
func Why(a *normalform.Analysis, cfg *normalform.Config) Reason {
	if a.Verdict != normalform.VerdictNone {
		return Detection
	}
	for _, r := range a.Reasons {
		if r == normalform.ReasonReceiptsOnly {
			return Detection
		}
	}
	if len(a.Cycles) > 0 {
		return Cycle
	}
	if a.NF != nil {
		for _, n := range a.NF.Children {
			if n.Chain != nil && n.Chain.Closed() {
				return Cycle
			}
		}
	}
	for _, r := range a.Reasons {
		if r == normalform.ReasonV4Netted {
			return PoolManager
		}
	}
	if CoalitionLosesNoToken(a, cfg) {
		return Coalition
	}
	return ""
}

// coalition is the transaction's coalition as receipts know it: its
// sender and its recipient.
func coalition(a *normalform.Analysis) func(normalform.Address) bool {
	return func(x normalform.Address) bool {
		return x == a.Recipient || (a.Tx.Meta.HasFrom && x == a.Sender)
	}
}

// CoalitionLosesNoToken reports whether the transaction moved a token
// (anything but native value) and its coalition (sender and recipient together) lost none of
// the tokens other than the native asset and the wrapped native (cfg's):
// its combined balance in each is zero or a gain. A balance past 256
// bits counts as such (adversarial amounts: trace it).
func CoalitionLosesNoToken(a *normalform.Analysis, cfg *normalform.Config) bool {
	if a.Tx == nil {
		return false
	}
	in := coalition(a)
	bal := map[normalform.Token]*normalform.Signed{}
	token := false
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		token = token || t.Token.Kind != normalform.Native
		f, to := in(t.From), in(t.To)
		if f == to || t.Token.Kind == normalform.Native || (t.Token.Kind == normalform.Fungible && cfg.IsWrappedNative(t.Token.Addr)) {
			continue
		}
		s := bal[t.Token]
		if s == nil {
			s = new(normalform.Signed)
			bal[t.Token] = s
		}
		if s.Add(&t.Amount, f) {
			return true
		}
	}
	if !token {
		return false
	}
	for _, s := range bal {
		if s.Sign() < 0 {
			return false
		}
	}
	return true
}
