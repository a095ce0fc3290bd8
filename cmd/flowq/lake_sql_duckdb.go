//go:build duckdb

package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/flowq/flowq/index/lake/duck"
)

func runSQL(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sql", sqlUsage, stderr)
	dir := fs.String("lake", "", "the lake's directory")
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "sql")
	if *dir == "" {
		return usageErr("--lake DIR is needed")
	}
	if len(rest) != 1 {
		return usageErr("give one SQL statement (quoted)")
	}
	db, err := duck.Open(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "flowq sql: %v\n", err)
		return 1
	}
	defer db.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	w := bufio.NewWriter(stdout)
	header := false
	res, err := db.Query(ctx, rest[0], func(cols []string, vals []any) error {
		if !header {
			header = true
			fmt.Fprintln(w, strings.Join(cols, "\t"))
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			s[i] = sqlValue(v)
		}
		_, err := fmt.Fprintln(w, strings.Join(s, "\t"))
		return err
	})
	if !header && err == nil {
		fmt.Fprintln(w, strings.Join(res.Columns, "\t"))
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stderr, "flowq sql: left out: %v\n", s)
	}
	if err != nil {
		fmt.Fprintf(stderr, "flowq sql: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "flowq sql: %d rows\n", res.Rows)
	if len(res.Skipped) > 0 {
		return 1
	}
	return 0
}

// sqlValue prints a value as database/sql scans DuckDB's: BLOB as 0x and
// hex, lists and structs in brackets and braces, NULL as NULL.
func sqlValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = sqlValue(e)
		}
		return "[" + strings.Join(s, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		s := make([]string, len(keys))
		for i, k := range keys {
			s[i] = k + ": " + sqlValue(x[k])
		}
		return "{" + strings.Join(s, ", ") + "}"
	}
	return fmt.Sprint(v)
}
