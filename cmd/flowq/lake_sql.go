package main

import "io"

const sqlUsage = `usage: flowq sql --lake DIR 'SELECT ... FROM lake ...'

Runs one SQL statement on embedded DuckDB over a Parquet lake (flowq
ingest --lake): the view lake is read_parquet('DIR/**/*.parquet',
hive_partitioning = true). Rows are printed tab-separated under a header
line; BLOBs (amount_key) as 0x and hex, lists in brackets. A range file DuckDB cannot
read is named on stderr and left out, the other ranges answer, and the exit
status is 1.

DuckDB is linked only into a flowq built with the duckdb tag:
  go build -tags duckdb -o flowq ./cmd/flowq     (about 90 s the first time, a binary of about 100 MB against 34 MB)
Without it, any engine that reads Parquet reads the lake (duckdb's own CLI,
ClickHouse, Trino, Spark).

Exit status: 0 on success, 1 for a runtime failure (or a range file left
out), 2 for a usage error.

flags:
`

// sqlCmd is `flowq sql`: lake_sql_duckdb.go with the duckdb build tag,
// lake_sql_noduckdb.go without it.
func sqlCmd(args []string, stdout, stderr io.Writer) int { return runSQL(args, stdout, stderr) }
