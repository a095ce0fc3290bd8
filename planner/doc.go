// Package planner turns a parsed query (package lang) into a plan over an
// index and executes it.
//
// A plan is a tree of immutable nodes, printed by Explain: an access path
// chosen from what the index can reach without a scan (a structural hash,
// a bot, an address or token touched, a profit range, a verdict and tier,
// a block range), the filters pushed down to it (the block range goes into
// every index scan), the residual filter, an order and a limit. The planner
// depends on the Source interface, which *index.Index satisfies; it never
// sees Badger. Execution streams rows and stops when its context is
// cancelled or its limit is reached.
//
// Access paths, from the most selective: the hash of a level (HashIs, and
// the reference's hash for match), a bot (bot = ADDR), a token or address
// touched, a profit range in a token, a verdict with its tier, a block
// range, and last a full scan. Every conjunct of the filter that the
// access path does not decide exactly is checked on each record.
package planner
