package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/planner/sqlgen"
)

// lakeFlags are query's and run's flags for the Parquet lake: --lake DIR
// runs the statements as SQL on embedded DuckDB over the lake
// (query_lake_duckdb.go; a flowq built with -tags duckdb); --sql prints
// the SQL instead, in a dialect (no DuckDB needed).
type lakeFlags struct {
	dir     *string
	sql     *bool
	dialect *string
}

func (l *lakeFlags) register(fs *flag.FlagSet) {
	l.dir = fs.String("lake", "", "run on the Parquet lake at DIR (flowq ingest --lake) with embedded DuckDB, not on the index (a flowq built with -tags duckdb)")
	l.sql = fs.Bool("sql", false, "print each statement's SQL over the lake instead of running it (see --dialect)")
	l.dialect = fs.String("dialect", "duckdb", "the SQL that --sql and explain print: duckdb or clickhouse")
}

// lakeBuildHint says how to get a flowq that runs SQL on the lake.
const lakeBuildHint = "this flowq was built without DuckDB: build it with 'go build -tags duckdb ./cmd/flowq' (make build-duckdb), or print the SQL with 'flowq query --sql --dialect duckdb|clickhouse' and run it on your engine"

// printSQL is flowq query --sql: each statement's SQL over the lake, one
// statement a paragraph; a statement the lake cannot answer says so.
func printSQL(qf *queryFlags, name, src string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	d, ok := sqlgen.ParseDialect(*qf.lake.dialect)
	if !ok {
		fmt.Fprintf(stderr, "flowq query: --dialect %q: want duckdb or clickhouse\n", *qf.lake.dialect)
		return 2
	}
	cfg, err := qf.chain.config(lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "flowq query: %v\n", err)
		return 2
	}
	sts, err := lang.Parse(name, src)
	if err != nil {
		fmt.Fprintf(stderr, "flowq query: %v\n", err)
		return 1
	}
	c := &sqlgen.Compiler{Cfg: cfg, Dialect: d}
	for i, st := range sts {
		text, err := lakeSQLText(c, st)
		if err != nil {
			pos := st.Pos()
			fmt.Fprintf(stderr, "flowq query: %s:%d:%d: %v\n", name, pos.Line, pos.Column, err)
			return 1
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintln(stdout, text)
	}
	return 0
}

// lakeSQLText is a statement's SQL as explain and --sql print it, ended
// by ";" (a match also prints how it reads its reference).
func lakeSQLText(c *sqlgen.Compiler, st lang.Statement) (string, error) {
	q, err := c.Compile(st)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if q.RefSQL != "" {
		b.WriteString("-- the reference (no row: it is not in the lake)\n" + q.RefSQL + ";\n")
	}
	switch q.Kind {
	case lang.StmtShow:
		b.WriteString("-- the normal form (column nf) is decoded and shown by flowq\n")
	case lang.StmtSame:
		b.WriteString("-- both normal forms (column nf) are decoded and compared by flowq\n")
	}
	b.WriteString(q.SQL + ";")
	return b.String(), nil
}

var errNoLake = errors.New(lakeBuildHint)
