// Package normalform is the paper ("If It Walks Like an Arbitrage") as code:
// transfers, cash flow trees, and (as the engine grows) the rewriting rules,
// the deterministic kernel, verdicts, canonical forms and hashes.
//
// It is pure: no file, network or database access. Trace decoding, from the
// JSON shapes nodes return to T0, lives beside it in normalform/trace.
//
// # Transfers
//
// A Transfer is the paper's t = (s, d, a, τ, σ) with its trace position Pos
// (rank in execution order among the transaction's value-moving events,
// unique: the key of Property 1), its flags (mint, burn, native, NFT) and
// its provenance (event kind, log index, frame). Tokens are comparable
// values: an ERC-20 is its contract, the native asset the pseudo-address
// 0xeeee…eeee, an ERC-721 or ERC-1155 token its contract plus id. Amounts
// are uint256, never floats.
//
// # Cash flow trees
//
// A Node is a leaf (one transfer) or a call node (one frame and its children
// in trace order). Trim turns the decoded tree into T0; its documentation
// says how the paper's trimming is read.
//
// # Configuration
//
// Config carries what differs per chain: the wrapped-native contracts (whose
// Deposit and Withdrawal are transfers and whose token is =_τ the native
// asset), the router set of R5, and display facts for well-known tokens.
// Networks lists the built-in defaults and where each address comes from.
package normalform
