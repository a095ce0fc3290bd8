package repl

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/flowq/flowq/planner"
)

// The table-like modes: table (aligned columns), box (drawn with lines),
// markdown (a Markdown table) and line (one "name = value" line per
// field, a blank line between rows). Their rows are buffered to align
// the columns; json and csv stream.

// TableStyle is how the table-like modes print (the REPL's .headers,
// .nullvalue and the terminal's width).
type TableStyle struct {
	NoHeaders bool   // leave out the header line
	Null      string // printed in an empty cell ("" : left empty)
	// Width, when positive, is the terminal's width: table and box cut
	// their widest cells with "…" until a line fits. markdown and line
	// always print the whole values.
	Width int
}

// tableModes are the modes whose rows are buffered and printed by
// writeTable.
var tableModes = []string{"table", "box", "markdown", "line"}

// isTableMode reports whether mode is one of tableModes.
func isTableMode(mode string) bool {
	for _, m := range tableModes {
		if m == mode {
			return true
		}
	}
	return false
}

// minCell is the narrowest fitting cuts a column to at first; when that
// is not narrow enough, the columns go down to minCut.
const minCell, minCut = 8, 3

// writeTable prints buffered rows in a table-like mode: human values;
// columns empty in every row are left out.
func writeTable(w io.Writer, mode string, rows []planner.Row, st TableStyle) {
	if len(rows) == 0 {
		return
	}
	planner.ShortenAddresses(rows)
	var names []string
	for _, f := range rows[0] {
		names = append(names, f.Name)
	}
	used := make([]bool, len(names))
	for _, row := range rows {
		for i, f := range row {
			if i < len(used) && f.Human != "" {
				used[i] = true
			}
		}
	}
	var cols []int // the columns printed
	for i := range names {
		if used[i] {
			cols = append(cols, i)
		}
	}
	head := make([]string, len(cols))
	for j, i := range cols {
		head[j] = names[i]
	}
	body := make([][]string, len(rows))
	for k, row := range rows {
		body[k] = make([]string, len(cols))
		for j, i := range cols {
			v := ""
			if i < len(row) {
				v = row[i].Human
			}
			if v == "" {
				v = st.Null
			}
			body[k][j] = v
		}
	}
	switch mode {
	case "line":
		writeLines(w, head, body)
	case "markdown":
		writeMarkdown(w, head, body, !st.NoHeaders)
	default:
		writeGrid(w, mode == "box", head, body, !st.NoHeaders, st.Width)
	}
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// cut shortens s to n runes, its last one "…".
func cut(s string, n int) string {
	if runes(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// fit narrows the widest columns, one rune at a time, until the line
// (the widths plus per column and fixed overheads) fits width, or every
// column is down to minCut.
func fit(widths []int, perCol, fixed, width int) {
	total := fixed
	for _, w := range widths {
		total += w + perCol
	}
	for _, floor := range []int{minCell, minCut} {
		for ; total > width; total-- {
			widest := -1
			for i, w := range widths {
				if w > floor && (widest < 0 || w > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			widths[widest]--
		}
	}
}

// writeGrid prints an aligned table (two spaces between columns) or a
// box (│ between columns, lines around).
func writeGrid(w io.Writer, box bool, head []string, body [][]string, headers bool, width int) {
	widths := make([]int, len(head))
	for j, h := range head {
		if headers {
			widths[j] = runes(h)
		}
		for _, row := range body {
			if n := runes(row[j]); n > widths[j] {
				widths[j] = n
			}
		}
	}
	if width > 0 {
		if box {
			fit(widths, 3, 1, width) // "│ " before each cell, " " after, "│" at the end
		} else {
			fit(widths, 2, -2, width)
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for j, c := range cells {
			c = cut(c, widths[j])
			pad := strings.Repeat(" ", widths[j]-runes(c))
			if box {
				b.WriteString("│ " + c + pad + " ")
				continue
			}
			if j > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + pad)
		}
		if box {
			b.WriteString("│")
			fmt.Fprintln(w, b.String())
			return
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	rule := func(left, mid, right string) {
		if !box {
			return
		}
		var b strings.Builder
		b.WriteString(left)
		for j, n := range widths {
			if j > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat("─", n+2))
		}
		b.WriteString(right)
		fmt.Fprintln(w, b.String())
	}
	rule("┌", "┬", "┐")
	if headers {
		line(head)
		rule("├", "┼", "┤")
	}
	for _, row := range body {
		line(row)
	}
	rule("└", "┴", "┘")
}

// writeMarkdown prints a Markdown table; "|" in a cell is escaped. A
// Markdown table needs a header row: with headers off it is left out,
// and the table starts at its rule.
func writeMarkdown(w io.Writer, head []string, body [][]string, headers bool) {
	esc := func(s string) string {
		return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
	}
	row := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + esc(c) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	if headers {
		row(head)
	}
	var b strings.Builder
	b.WriteString("|")
	for range head {
		b.WriteString(" --- |")
	}
	fmt.Fprintln(w, b.String())
	for _, r := range body {
		row(r)
	}
}

// writeLines prints each row as "name = value" lines, the names
// right-aligned, a blank line between rows.
func writeLines(w io.Writer, head []string, body [][]string) {
	n := 0
	for _, h := range head {
		n = max(n, runes(h))
	}
	for k, row := range body {
		if k > 0 {
			fmt.Fprintln(w)
		}
		for j, c := range row {
			fmt.Fprintf(w, "%s%s = %s\n", strings.Repeat(" ", n-runes(head[j])), head[j], c)
		}
	}
}
