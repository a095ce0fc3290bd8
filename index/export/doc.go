// Package export writes an index's records as CSV (Columns) or JSON
// lines (ExportJSON): flowq export and the server's /export. It reads the
// store (package index) and formats; the store knows no output format.
package export
