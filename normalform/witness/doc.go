// Package witness is an independent checker of Definition 5 ("Arbitrage at
// v in token τ") of "If It Walks Like an Arbitrage" (§2). It reads nothing
// but a flat list of decoded transfers (normalform.Transfer: s, d, a, τ and
// the trace position Pos) and the relation =_τ (normalform.Config.TokenEq).
// It does not use the rewriting engine (kernel, rules, chains, analysis).
//
// # Place
//
// flowq decides arbitrage by rewriting the cash flow tree T0. The engine's
// soundness theorem says: for every Arbitrage verdict at v in τ, a
// Definition 5 witness exists over T0's transfers. This package checks that
// theorem from the other side. For a verdict (v, τ) a harness calls
//
//	w, found, exhausted := witness.FindIn(T0's transfers, cfg.TokenEq, &v, &τ, budget)
//
// found means the verdict is backed by the witness w (and Verify accepted
// it); !found && !exhausted means no witness exists, a soundness failure of
// the engine (or a mismatch between the engine's reading of the definitions
// and this one); exhausted without found is inconclusive.
//
// A harness with several questions over the same transfers (the detector:
// one per detection and token) builds the search tables once with
// NewSearcher (or NewSearcherOwning) and asks Searcher.FindIn: each answer
// is FindIn's, the budget each question's own.
//
// # Definitions, as implemented
//
// A cycle at v (Definition 4) is a sequence C of distinct transfers (by
// Pos) cut into its maximal connected runs C1..Cm, with s(first of C) = v
// and d(last of C) = v. "Maximal" is read as in the paper: consecutive runs
// do not join, d(last of Ci) ≠ s(first of Ci+1). An arbitrage at v in τ
// (Definition 5) is a cycle at v whose first transfer is in τ, whose first
// and last transfers are in =_τ tokens, and whose balance δ_C[v, τ],
// summed over C only and in τ exactly, is > 0. A transfer with s = d = v
// counts 0 in δ.
//
// # What the definitions imply
//
// Three consequences of the literal definitions shape the search and the
// reading of its results:
//
//  1. Any sequence of distinct transfers is the concatenation of its
//     maximal connected runs, so for m > 1 Definition 4 asks only that C
//     leave v first and return to v last: nothing links one run to the
//     next. Hence a witness at v in τ (any m) exists if and only if some
//     transfer t1 out of v in τ has need(t1) < Σ a(t) over In(v, τ), where
//     need(t1) = a(t1), or 0 when d(t1) = v, and In(v, τ) are the transfers
//     into v from another address in τ exactly. (If: t1 followed by enough
//     of In(v, τ) is such a witness. Only if: in any witness, each transfer
//     other than t1 adds to δ[v, τ] at most what it adds if it is in
//     In(v, τ).) For instance v→A 1 and an unrelated C→v 2, in one token,
//     form the two-piece witness [v→A] | [C→v].
//  2. The =_τ clause never decides existence. δ is measured in τ exactly;
//     it is ≤ 0 after t1 and grows only on transfers into v in τ, so the
//     prefix of a witness that stops where δ first becomes positive is a
//     witness with no more pieces, and its last transfer is in τ exactly.
//     Every witness Find returns has that form. =_τ only lets more, longer
//     cycles qualify (SC→P WETH, P→SC ETH, SC→WETH ETH, WETH→SC WETH is a
//     witness because its last transfer is back in WETH, not because ETH
//     ≡ WETH).
//  3. Zero amounts and self-transfers are transfers: v→v can be the first
//     transfer (it costs nothing), and v→X 0 followed by X→v 1 is a
//     one-piece witness. Trimming in the engine may drop such transfers;
//     the definitions do not.
//
// Because of 1, a check against Definition 5 with junctions is weak: there
// is no witness at v in τ only when each payment of v in τ is at least all
// that v receives in τ from others (a self-transfer v→v counting as a
// payment of 0). Callers who want a stronger check can require
// len(w.Pieces) == 1.
//
// # Search
//
// Find runs two phases over the transfers sorted by Pos.
//
// The junction phase decides existence exactly, using 1: for each
// candidate t1 (in Pos order) it compares need(t1) with the total of
// In(v, τ(t1)) and, when t1 is feasible, builds the witness t1, h1..hj with
// the fewest inflows (largest first), laid out in Pos order except that an
// inflow from d(t1), if one was chosen, goes first so that it and t1 form one
// run. It keeps the candidate with the fewest pieces, then the fewest
// transfers, then the earliest t1. Its sums never leave 256 bits: the running
// balance is ≤ 0 before each addition.
//
// The single-run phase (m = 1) is a depth-first search for connected walks
// from each feasible t1, in Pos order, extending by unused transfers out of
// the walk's current end, in Pos order, and stopping at the first walk that
// ends at v, in a token =_τ τ(t1), with δ[v, τ(t1)] > 0. It prunes a branch
// when its end cannot reach v through the transfers at all, or when its
// balance plus all unused inflows of In(v, τ) is ≤ 0; both prunes are
// sound. Only feasible t1 are roots: an infeasible t1 starts no witness.
//
// Find returns the single-run witness when there is one, else the junction
// phase's. Every returned witness has passed Verify, which recomputes every
// clause from scratch, with math/big for δ.
//
// # Guarantees
//
//   - Soundness: found is true only for a witness that Verify accepted.
//   - Exact existence: with enough budget (exhausted false), found is
//     true if and only if a Definition 5 witness exists, for any m. This
//     needs O(n) steps plus, per feasible t1, the inflows it tries.
//   - One piece first: when a one-piece witness exists and the budget
//     covers the single-run search (exhausted false), Find returns a
//     one-piece witness: the first in depth-first order, not necessarily
//     the shortest. A multi-piece witness with exhausted false therefore
//     means no one-piece witness exists, except as said under Limits for
//     amounts near 2^256.
//   - Determinism: the result depends on the transfers and their
//     positions, not on the order of the list; Find never panics.
//
// # Limits
//
//   - Pieces are not minimized beyond one: for m ≥ 2 Find returns t1 and
//     inflows, which may be more pieces than needed (a witness whose first
//     run is a longer walk may have fewer). Minimizing m is not attempted.
//   - The single-run search is exponential in the worst case; budget
//     bounds it (a step is a candidate t1, an inflow tried, or an extension
//     tried). When it runs out after existence is settled, Find returns the
//     junction witness with found and exhausted both true.
//   - A walk whose running balance leaves 256 bits is abandoned (treated
//     as not a witness), so with adversarial amounts a one-piece witness
//     can be missed; existence is unaffected (the junction phase is exact).
//   - eq must be reflexive and symmetric, as =_τ is; with another relation
//     Verify may reject candidates, and a "no" is then reported exhausted.
//   - Transfers sharing a Pos make the list malformed: Find reports
//     exhausted and Verify fails.
//   - Only s, d, a, τ and Pos are read: σ, frames, flags and trace order
//     play no part, as in Definitions 4 and 5.
package witness
