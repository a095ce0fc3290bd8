// Package lang is flowq's query language: a lexer and a participle grammar
// (kept private in grammar.go), lowered into flowq's own AST (ast.go), in
// which every node knows its source extent, then checked (check.go): every
// name is resolved against one vocabulary (vocab.go, lang.Vocab), which
// takes the engine's names from normalform, its only flowq import. It
// knows nothing of execution: token symbols and transactions are resolved
// by the planner.
//
// A script is statements separated by ";". The statements:
//
//	find [arbitrages|warnings|none|transactions] [where EXPR] [order by METRIC [asc|desc]] [limit N]
//	same TX TX [at exact|shape|tokens|family]          Q_eq, and Q_fam at family
//	match TX [at LEVEL] [where EXPR] [order by …] [limit N]   Q_match (shape by default)
//	anomalies for bot ADDR [since block N | baseline blocks A..B] [limit N]   Q_anom
//	count [transactions|bots|shapes|families] by family|shape|tokens|exact|bot|sender|verdict|tier|path|mode|block [where EXPR] [limit N]
//	show TX [as tree|terms|cycles|balances|steps|transfers|all, …]
//	show block N                                        a block's transactions and their roles
//	find sandwiches|backruns [where EXPR] [order by profit|pools|block …] [limit N]
//	count sandwiches|backruns by bot|sender|block [where EXPR] [limit N]
//	explain STATEMENT
//
// The block findings (Findings, and Count of sandwiches or backruns) take
// the filters profit, pools, block, bot, sender and touches; the lowering
// reports any other at its position.
//
// Filters (EXPR), combined with and, or, not and parentheses:
//
//	gross profit > 1 WETH            an amount with a token symbol, in its decimals
//	net profit in 0xc02a… > 1000     a token by address: base units
//	pools >= 3   hops > 4   cycles = 1   leftovers = 0
//	verdict = arbitrage   tier = attempted   path = rotation   mode = receipts   reason leftovers
//	block between A and B   block >= N   blocks A..B
//	bot = ADDR   sender = ADDR
//	touches ADDR   touches USDC
//	flashloan
//	family = HASH   (or exact, shape, tokens)
//
// Keywords are case-insensitive; comments start with "--" or "#". Errors
// are *Error values (in an ErrorList) with the file, line and column, the
// source line (a window of it when it is long) and a caret, and what was
// expected; an ErrorList prints its first ten. Grammar returns the
// grammar in EBNF as the parser builds it.
//
// Before anything is parsed, a linear scan (limits.go) cuts the script
// into statements at each ";" outside comments and strings and checks
// each against MaxQueryBytes (1 MiB, from its first word through its
// ";") and MaxNesting (parentheses 256 deep): participle's parser
// recurses once per level, and a Go stack overflow is fatal. Each
// statement is then parsed on its own, so a script of any length parses
// in memory linear in its text. ParseAt parses a text that starts at a
// line and column of a larger input, as the REPL reads statements.
package lang
