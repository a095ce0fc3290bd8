// Package repl is flowq's query shell: Session, which parses, plans, runs
// and renders a script (what flowq query, flowq run and the REPL share,
// and which knows nothing of terminals), and REPL, the interactive loop of
// `flowq repl`, a thin layer over a Session.
//
// # The loop
//
// REPL.Feed takes one line at a time and is what the tests drive without
// a terminal; REPL.Run reads lines from a Terminal (repl/term: chzyer/readline,
// which this package does not link) or, when the input is not a
// terminal, as a script without prompts.
//
//   - A statement ends with ";" outside comments ("--", "#") and strings,
//     and may span lines: while one is open the prompt is ContinuePrompt.
//     Several statements on a line run in order. Errors give the input's
//     line and column ("stdin:LINE:COL"). Each byte of input is scanned
//     once, and a statement is parsed at its position (lang.ParseAt), so
//     a script of any length is read in linear time; a statement over
//     lang.MaxQueryBytes is reported and skipped to its ";", and a script
//     line over MaxLineBytes stops the script.
//   - Each statement is saved in the history as one line (comments
//     dropped, whitespace collapsed), so Up recalls it whole; the history
//     file keeps one statement or dot-command per line.
//   - Ctrl-C while a statement runs cancels its context (the statement
//     runs in a goroutine; the terminal is out of raw mode then, so Ctrl-C
//     arrives as SIGINT) and the prompt comes back; at the prompt it
//     clears the statement being typed. Ctrl-D leaves at an empty prompt;
//     on an open statement it discards the statement first.
//   - Tab completes dot-commands and their arguments (words, file names),
//     and in statements the keywords of lang.Keywords and the names that
//     fit where the cursor is: statement words at the start, reasons after
//     "reason", verdicts, tiers, paths and modes after "verdict =", "tier =", "path =" and "mode =", levels
//     after "at", views after "as", the configuration's token symbols
//     after "in", "touches" and amounts.
//
// # Dot-commands
//
// One line, no ";", only where no statement is open. One table
// (commands.go) runs them, prints .help and drives their completion:
// .help, .mode, .timer, .open, .ingest, .explain, .draw, .grammar, .stats
// (.tables), .read, .output, .quit (.exit).
//
// A script (Run when the input is not a terminal) may have been sent by
// anyone: it runs as flowq run runs a query file. The commands that
// write files or an index or open another (.output, .draw, .open,
// .ingest) are refused with an error naming the line, unless
// Options.AllowWrites (flowq repl --allow-writes); flowq repl then opens
// the index read-only too. .read reads at most MaxScriptBytes.
//
// # The index
//
// The REPL owns a Store its program gives it (flowq's is repl/local, a
// Badger index opened read-write), so .ingest can write to it while
// queries read it; .open switches to another through Options.Open. The
// package itself never links the store. .open --lake DIR (Options.OpenLake,
// or Options.Lake from the start) closes it and runs the statements
// through a Lake (a Runner: SQL on DuckDB, lake.go) until .open PATH;
// .status and the prompt (LakePrompt) say which is open. Options.QueryDelay
// is a test hook (FLOWQ_TEST_QUERY_DELAY in flowq repl) that slows every
// row an index scan yields, so a test can interrupt a running query.
package repl
