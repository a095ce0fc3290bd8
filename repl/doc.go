// Package repl will be flowq's interactive loop (chzyer/readline), a thin
// layer over the planner. Not built yet: see issue 7.
package repl
