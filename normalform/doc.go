// Package normalform is the paper ("If It Walks Like an Arbitrage") as code:
// transfers, cash flow trees, the sixteen rewriting rules, the deterministic
// kernel that reduces a tree to its unique normal form, and the verdict,
// profit and reasons read off that form.
//
// It is pure: no file, network or database access. Trace decoding, from the
// JSON shapes nodes return to T0, lives beside it in normalform/trace.
//
// # Transfers and trees
//
// A Transfer is the paper's t = (s, d, a, τ, σ) with its trace position Pos
// (rank in execution order among the transaction's value-moving events,
// unique: the key of Property 1), its flags (mint, burn, native, NFT) and
// its provenance. Tokens are comparable values: an ERC-20 is its contract,
// the native asset the pseudo-address 0xeeee…eeee, an ERC-721 or ERC-1155
// token its contract plus id. Amounts are uint256; balances (Delta) are
// exact signed sums, and a sum beyond 256 bits is an error, never a wrapped
// value.
//
// A Node is a leaf (one transfer), a chain node, or a call node (one frame
// and its children in trace order). Trim turns the decoded tree into T0.
// A Chain is a binary tree whose in-order traversal is its transfer
// sequence; it keeps t_1, t_{k-1}, t_k (so s, d, τ_in, τ_mid, τ_out) and δ
// as it is assembled; M(C) and σ(C) are read from its leaves. A large δ is
// a map moved from the larger operand into the join, smaller into larger,
// so that a long route costs O(n log n) rather than n² (balance.go).
//
// # The kernel
//
// Analyze copies T0 and rewrites the copy. The paper fixes the rules
// (Table "Rewriting rules") and leaves their scan and priority to the
// implementation; this is flowq's policy, the only one it has.
//
// Leaf stage, bottom up. A call node's child frames are reduced first and
// their children lifted into it, in place and in order (a "lift" step in
// the log). Then its children are scanned as ADJACENT pairs, left to right.
// For a pair (x, y), x first among the siblings, the leaf rules are tried
// in this order, each on (x, y) and then on (y, x):
//
//	leaf–leaf:   R2, R3 (burn, mint), R1, R4, R5
//	leaf–chain:  R6
//	chain–chain: R7, R8, R9, R10
//
// The first rule that fires replaces the pair by its conclusion at x's
// place, and the scan backs up one position (the new chain may now combine
// with its left neighbour). The frame is done when a scan finds nothing.
// Adjacency is the frame evidence the leaf rules rely on: it is what keeps
// the borrow and the repay of a flash loan apart when the borrower's
// callback sits between them, so that they end as leftovers and are
// recovered as LC(α, a), as the paper describes.
//
// Root, structural fixpoint. At the root, once the leaf scan finds
// nothing, the node rules R11, R12, R13 are tried on ALL pairs (i, j),
// i < j, in lexicographic order, with the same orientation policy; the
// first that fires rewrites, and the leaf scan runs again. This is the
// structural fixpoint over both loci.
//
// Guards flowq adds where the paper is silent, each forced by a worked
// example or a labelled mainnet transaction:
//
//   - R2 and R3 before R1: WETH9 emits Withdrawal after the value it sends,
//     so R1 on the reversed pair would chain an unwrap backwards.
//   - Token burns and mints take part in the structural rules, not only in
//     cycle connection: a router that unwraps at its own address is a step
//     of the route (mev-inspect-rs balancer_uni_arb).
//   - A closed chain is never extended by a single transfer (R6, R12): what
//     leaves a loop's origin afterwards is a payout (the Arbitrum case study's
//     surplus stays a leftover) or a fee.
//   - A complete round trip (closed, τ_in =_τ τ_out, not a pure wrap/unwrap)
//     chains (R10) and merges (R8, R9) only with complete round trips, and
//     conversions (a swap closed at a bot, a wrap, an unwrap) only with
//     conversions: the wrap of the proceeds after 0x4744's WETH→ETH cycle,
//     and the unwrap after 0x9d71's ETH→WETH triangle, stay cycles of their
//     own, as in the paper's tables.
//   - When a transfer closes a chain either way (R6, R12), the loop is
//     rooted at a principal of the transaction (its recipient or sender)
//     if exactly one of the two candidate origins is one, otherwise where
//     trace order puts the transfer: tx_R's flash swap pays the bot before
//     the bot pays the pool, and the loop belongs to the bot; a router
//     trade's ETH payment comes first, and the loop is the user's swap.
//
// Annotation and connection (Algorithm 2). Every closed unlabelled chain
// is labelled: R14 (arbitrage) when τ_in =_τ τ_out, σ(C) ∉ M(C) or
// s(C) = σ(C), and not WrapUnwrap(C); else R15 (cycle) when σ(C) ∈ M(C).
// σ(C) is the σ of the leaves at s(C), or, when they disagree, the σ of
// the frame that built the chain. WrapUnwrap counts the wrapped-native
// contracts as contracts of the native asset. Then the first pair (i < j,
// either order) of chains labelled cycle, token burn or token mint, both
// originating at a principal, with τ_out(C1) = τ_in(C2), closing, and
// neither reduced to routing (M(C) = {σ(C)}), is connected into one chain,
// annotated on the next pass (a cycle if R14 does not label it). The loop
// runs until a pass changes nothing; Analysis.Passes counts its passes,
// bounded by 3n-2.
//
// Validation (R16): an arbitrage whose δ at its origin in its entry token
// is not positive becomes a cycle; skipped when sender = recipient.
//
// # After the fixpoint
//
// Extract-and-Recover: the root's remaining leaves are leftovers, except
// native payments from a principal to the block's coinbase, set aside as
// costs; specular pairs (same token and amount, reversed endpoints), then
// complementary pairs (same token, an endpoint in common), become leftover
// cycles LC, in trace order: each leftover with the first later one that
// fits, found through lists of candidates per key (linear, not all pairs).
//
// Promotion: a cycle that R16 downgraded, whose τ_in ≠ τ_out are =_τ
// (ETH in, WETH out) and whose δ summed over the two is positive, with no
// leftovers, becomes an arbitrage marked Promoted (reason "promoted"): the
// path outside the paper's mechanized core.
//
// Beyond the fixpoint (detect.go). The fixpoint, its normal form, step log
// and hashes are left as they are; the stage after it reads them further.
// Its detections, each with a path:
//
//   - fixpoint: an arbitrage (R14) at a principal; promotion: as above;
//     inner: an arbitrage at an address that is neither recipient nor
//     sender (an executor behind a controller).
//   - bundle: at one origin, the closed chains that do not make a clean
//     gain alone (not leftover cycles, not pure conversions), at least one
//     of them an arbitrage whose balance is mixed, whose balances there sum
//     per =_τ class to a gain in one class and zero in the others, and that
//     trade. Two conversions that sum to a gain without such an anchor are
//     a liquidation's shape (repay, receive collateral, sell it) and are
//     not bundled.
//     When no path finds anything, a bundle may also be everything a
//     coalition settled (settle.go): the principals, with at most one
//     other address as origin, whose balance over every transfer crossing
//     the coalition (builder payments and transfers of the gain's class to
//     addresses that never send set aside) is a gain in one class and zero
//     in the others; it reads open chains and leftovers too (Legs), as
//     flash swaps repaid in the order they lent leave no closed chain. It
//     needs two outsiders trading another class with the coalition, no
//     mint or burn of a token outside the native class in the transaction
//     and no token seized from a third party by its own contract (the
//     marks of a liquidation), and a witness, as every path does.
//   - rotation: a closed walk not labelled arbitrage is read from each
//     address v on it. A reading starts at a transfer out of v whose
//     predecessor in the walk came into v, both in one class; it qualifies
//     when v's balance over the walk is a gain in that class and zero in
//     the others, the walk trades (a transfer in another class), and v
//     pays that class to some address that did not pay it back (a lender
//     deals only with its borrower). A walk on which a principal other
//     than v pays is that principal's trade and is read from no one else
//     (a router's fee on a user's swap). Choice: the recipient, the
//     sender, then the address whose first transfer out sits in the frame
//     nearest the root, then the earliest in trace order; the reading
//     starts at v's earliest qualifying transfer out.
//
// Every detection asks the independent checker (normalform/witness) for a
// Definition 5 witness at its origin, in its token first, then in the
// other tokens of its class; one without a witness is dropped (reason
// unwitnessed). The coalition is the principals and the detections'
// origins. What the fixpoint left at the root is sorted: native payments
// from the coalition to the coinbase are builder payments (costs),
// transfers between coalition accounts are internal, and transfers of a
// detection's class from its origin to outsiders after its chains close,
// up to its gain, are payouts; the rest are leftovers.
//
// Profit. Gross is the coalition's balance over every transfer (what its
// accounts received from outside it less what they sent out), with the
// builder payments charged as costs and the payouts added back. Explained
// is what the detections account for at the coalition, with the paper's
// complementary leftover cycles and the leftovers received; the verdict
// reads Explained less costs, and Unexplained (Gross − Explained, folded)
// is reported with reason unexplained when a detection exists. Costs are
// gas_used × base fee, gas_used × (effective price − base fee) and
// builder payments (not already inside a detection's chains); Δ_net is
// Gross, the wrapped native folded into the native asset, less costs.
// Without a receipt the costs are unknown and said so.
//
// Classify follows Algorithm 4 with flowq's additions. Reasons, in order:
// no_cycles, balance_mixed, neg_profit, final_mixed, final_neg, leftovers,
// costs_unknown, inner_cycle, promoted, self_call, builder_payment, payout,
// unexplained, unwitnessed. Verdict, strict priority: no_cycles (no
// detection) with unwitnessed (a candidate the checker found no witness
// for) → warning, uncertain; no_cycles → none; leftovers → warning, probable; final_neg → warning,
// attempted; final_mixed → warning, uncertain; costs_unknown → warning,
// probable; else arbitrage, confirmed. An inner origin is charged the
// whole transaction's cost, which bounds its share from above.
//
// CheckProperties re-checks preservation, the pass bound and determinism
// on one analysis; package normalform/witness checks Definition 5
// independently, from the transfers alone.
//
// # Configuration
//
// Config carries what differs per chain: the wrapped-native contracts (whose
// Deposit and Withdrawal are transfers and whose token is =_τ the native
// asset), the router set of R5, and display facts for well-known tokens.
// Networks lists the built-in defaults and where each address comes from.
package normalform
