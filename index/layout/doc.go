// Package layout is the index's on-disk layout without the store: the key
// kinds and their encoding (keys.go), the record and its value encoding
// (record.go), and the access paths' vocabulary a reader of the index is
// written in (lookup.go: Ref, BlockRange, Lookup). It imports no Badger
// and does no I/O: package index writes and reads these bytes in Badger,
// and the planner is written in these types alone, so that it never links
// the store.
package layout
