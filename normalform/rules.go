package normalform

// The rules of Table "Rewriting rules". Each function takes its operands in
// rule order and reports whether the premise holds; the kernel builds the
// conclusion. Chains passed to the structural rules (R6–R13) are unlabelled
// (chaining or merging) or token burns and mints: a wrap or an unwrap may be
// a step of a route, also when it happens at a router rather than at the
// transaction's principals, where cycle A closed chain (s = d) is never extended by a single
// transfer (R6, R12): what leaves a closed loop's origin afterwards is a
// payout, not part of the loop. It may still be chained to another chain
// under continuity (R10: the next swap of a bot-mediated route) or merged
// (R8, R9).

func burn(t *Transfer) bool { return t.Flags&Burn != 0 }
func mint(t *Transfer) bool { return t.Flags&Mint != 0 }

// r1: d(ℓ1)=s(ℓ2), τ(ℓ1)≠τ(ℓ2), burn(ℓ1)⇔mint(ℓ2). A swap seen from outside.
func r1(a, b *Transfer) bool {
	return a.To == b.From && a.Token != b.Token && burn(a) == mint(b)
}

// r2: ℓ_b burn, ℓ not mint, d(ℓ_b)=s(ℓ). A token burn (covers unwrap).
func r2(lb, l *Transfer) bool { return burn(lb) && !mint(l) && lb.To == l.From }

// r3: ℓ_m mint, ℓ not burn, d(ℓ)=s(ℓ_m). A token mint (covers wrap).
func r3(l, lm *Transfer) bool { return mint(lm) && !burn(l) && l.To == lm.From }

// r4: a same-token round trip through B = d(ℓ1) that an external contract
// drives: d(ℓ1)=s(ℓ2), d(ℓ2)=s(ℓ1), τ equal, B not a router, σ(ℓi) ≠ B for
// some i.
func r4(cfg *Config, a, b *Transfer) bool {
	B := a.To
	return B == b.From && b.To == a.From && a.Token == b.Token && !cfg.IsRouter(B) &&
		(a.Sender != B || b.Sender != B)
}

// r5: same token through a declared router, burn(ℓ1)⇔mint(ℓ2).
func r5(cfg *Config, a, b *Transfer) bool {
	return a.To == b.From && a.Token == b.Token && cfg.IsRouter(a.To) && burn(a) == mint(b)
}

// balCont is BalCont(j): the junction is left short in no token.
//
// It is Delta.Sum's merge without building the sum (the rewrite path
// allocates nothing for a check): an entry on one side alone is its own
// sum, a pair is added, a zero sum is dropped, and an overflow fails the
// check as Sum's error did.
func balCont(c1, c2 *Chain, j Address) bool {
	a, b := c1.BalanceOf(j), c2.BalanceOf(j)
	i, k := 0, 0
	for i < len(a) || k < len(b) {
		switch {
		case k == len(b) || (i < len(a) && compareKey(&a[i], &b[k].Addr, &b[k].Token) < 0):
			if a[i].Amount.Neg {
				return false
			}
			i++
		case i == len(a) || compareKey(&a[i], &b[k].Addr, &b[k].Token) > 0:
			if b[k].Amount.Neg {
				return false
			}
			k++
		default:
			sum := a[i].Amount
			if sum.AddSigned(&b[k].Amount) {
				return false
			}
			if !sum.Abs.IsZero() && sum.Neg {
				return false
			}
			i++
			k++
		}
	}
	return true
}

// r7: parallel chains with the same endpoints (s ≠ d) that give back the
// same asset through different intermediaries.
func r7(c1, c2 *Chain) bool {
	return !c1.Closed() && !c2.Closed() && c1.Origin() == c2.Origin() && c1.Dest() == c2.Dest() &&
		c1.TokOut() == c2.TokOut() && c1.TokMid() != c2.TokMid()
}

// r8: closed chains at the same address, agreeing in all three boundary
// tokens (merging is summation), or balance-continuous there.
func r8(cfg *Config, c1, c2 *Chain) bool {
	s := c1.Origin()
	if !c1.Closed() || !c2.Closed() || c2.Origin() != s || complete(cfg, c1) != complete(cfg, c2) {
		return false
	}
	return (c1.TokIn() == c2.TokIn() && c1.TokMid() == c2.TokMid() && c1.TokOut() == c2.TokOut()) || balCont(c1, c2, s)
}

// r9: closed chains at the same address with the same entry and exit tokens.
func r9(cfg *Config, c1, c2 *Chain) bool {
	return c1.Closed() && c2.Closed() && c1.Origin() == c2.Origin() &&
		c1.TokIn() == c2.TokIn() && c1.TokOut() == c2.TokOut() && complete(cfg, c1) == complete(cfg, c2)
}

// complete reports a closed chain that returns in a token-equivalent asset
// and is not a pure wrap/unwrap: a round trip, a unit for extension.
func complete(cfg *Config, c *Chain) bool {
	return c.Closed() && cfg.TokenEq(c.TokIn(), c.TokOut()) && !wrapUnwrap(cfg, c)
}

// r10: two chains meeting at d(C1)=s(C2), under token continuity or
// balance continuity at the junction; a complete round trip only chains
// with another complete round trip.
func r10(cfg *Config, c1, c2 *Chain) bool {
	if c1.Dest() != c2.Origin() {
		return false
	}
	if complete(cfg, c1) != complete(cfg, c2) {
		return false
	}
	return c1.TokOut() == c2.TokIn() || balCont(c1, c2, c1.Dest())
}

// r11: the same asset across frames: d(ℓ1)=s(ℓ2), τ equal, not a round
// trip, d(ℓ1) not a router, and ℓ1 not pulled by its own recipient.
func r11(cfg *Config, a, b *Transfer) bool {
	return a.To == b.From && a.Token == b.Token && b.To != a.From && !cfg.IsRouter(a.To) && a.Sender != a.To
}

// r13: R7's premises with the entry tokens pinned as well.
func r13(c1, c2 *Chain) bool { return r7(c1, c2) && c1.TokIn() == c2.TokIn() }

// wrapUnwrap holds when M(C) contains the contract of τ_in or τ_out and
// both sub-chains are leaves or both satisfy it: a pure native/wrapped
// round trip, which R14 must not call an arbitrage.
//
// The contracts of the native asset are the configured wrapped-native
// contracts (the native asset has no contract of its own, and =_τ makes
// them its representations).
func wrapUnwrap(cfg *Config, c *Chain) bool {
	if c.Leaf != nil {
		return false
	}
	if !hasContractOf(cfg, c, c.TokIn()) && !hasContractOf(cfg, c, c.TokOut()) {
		return false
	}
	return (c.Left.Leaf != nil && c.Right.Leaf != nil) || (wrapUnwrap(cfg, c.Left) && wrapUnwrap(cfg, c.Right))
}

// hasContractOf reports whether M(C) contains a contract of t.
func hasContractOf(cfg *Config, c *Chain, t Token) bool {
	if t.Kind != Native {
		return c.InMiddlemen(t.Addr)
	}
	return c.anyMiddleman(cfg.IsWrappedNative)
}

// r14: a closed chain leaving and returning in token-equivalent assets,
// orchestrated from outside its middlemen (or by its origin), that is not a
// pure wrap/unwrap: an arbitrage (structurally; R16 checks the amounts).
func r14(cfg *Config, c *Chain) bool {
	if !c.Closed() || !cfg.TokenEq(c.TokIn(), c.TokOut()) {
		return false
	}
	sigma := c.Sigma()
	return (!c.InMiddlemen(sigma) || c.Origin() == sigma) && !wrapUnwrap(cfg, c)
}

// r15: a closed chain whose σ is one of its middlemen: routing, a cycle.
func r15(c *Chain) bool { return c.Closed() && c.InMiddlemen(c.Sigma()) }
