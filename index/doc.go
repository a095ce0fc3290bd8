// Package index is flowq's index of normal forms, on Badger: the only
// package that knows Badger exists. It sits between the engine
// (normalform, normalform/trace) and the query planner (issue 6), which
// reaches it through the functions below and never sees a Badger type.
//
// # What it keeps
//
// One Record per transaction, keyed by its position (block, index): its
// hash, from, to, recipient, status, verdict, tier, reasons, gross and net
// balance per token (and whether costs were known), counts (cycles, pools,
// hops, leftovers), the four structural hashes (exact, shape, tokens,
// family), the addresses and tokens it touches, the encoded normal form
// (normalform.EncodeNF) and the analysis time. Record.Encode is a compact
// versioned binary encoding (layout/record.go) whose header (hash, verdict,
// tier, reasons, counts, structural hashes) scans decode alone to filter
// and group, decoding the rest only for the records they emit.
//
// Secondary keys let queries reach transactions without a scan: by
// transaction hash, by each hash level, by bot (recipient) and shape with
// the block each shape was first seen, by verdict and tier, by profit per
// token in numeric order (losses first), by address and token touched.
// They end in the transaction's position (since schema 12 in its block,
// the key's value listing the block's indexes that have it:
// layout/posting.go) and lead to its record with one
// point read (of its page: the records of 16 consecutive positions of a
// block are one key, layout/page.go); a block range and a full scan read
// the records themselves in order, a page a key. Shape, tokens and family hashes are held as small dictionary ids,
// and hashes, addresses and tokens in keys as 6-byte tags checked against
// the record. layout/keys.go documents every key kind by its byte layout;
// ParseKey is the inverse of Key.Bytes.
//
// # Invariants
//
//   - Put writes a record and all its keys in one Badger transaction: all
//     or nothing.
//   - Every secondary key of a transaction is a function of its Record
//     (Record.keys), so replacing a record removes exactly the keys that
//     no longer hold (since schema 12, the hash, bot, verdict, profit,
//     address and token keys of known positions are stored as per-block
//     postings listing exactly the block's positions that have them:
//     postings.go); a txhash key lists exactly the positions of the
//     records with its tag. Verify checks this over the whole index, and
//     the dictionary.
//   - A dictionary id is written in the Badger transaction of the first
//     record that uses it and never changes: no key or record names an id
//     the dictionary lacks, even after a crash.
//   - Idempotence: putting a transaction whose analysis is unchanged
//     writes nothing (the first latency is kept); nothing in a record
//     depends on the clock but its latency, and the index's content
//     (latencies aside) does not depend on the number of workers or the
//     batch size.
//   - The first-seen key of (bot, shape) names the least position among
//     the bot's transactions of that shape.
//   - An input's marker is written with (in the same write as, or after)
//     its last transaction, so a marker means the input is complete.
//
// # Reading: the planner's functions
//
// Each streams in key order, calls fn for every match, stops when fn
// returns an error (which it returns) or when ctx is cancelled (checked
// every 64 keys; it returns ctx.Err()). A Ref is a transaction's hash
// and position (Loc); Get reads its Record. A BlockRange is inclusive;
// AllBlocks includes transactions whose block is unknown.
//
//	Get(hash) (*Record, error)                             one record (ErrNotFound): two point reads
//	GetAt(loc) (*Record, error)                            the record at a position
//	ByHash(ctx, level, h, blocks, fn(Ref))                 same hash at a level, by position
//	ByBot(ctx, bot, blocks, fn(shape, Ref))                a recipient's transactions, by shape then position
//	ByBotShape(ctx, bot, shape, blocks, fn(Ref))           one shape of a recipient, by position
//	BotShapes(ctx, bot, fn(shape, first Ref))              the shapes a recipient used, each with its first transaction
//	FirstSeen(bot, shape) (Ref, bool, error)               the first transaction of a shape at a recipient
//	ByBlocks(ctx, blocks, fn(Ref))                         every transaction of a block range, by position
//	ByVerdict(ctx, verdict, blocks, fn(tier, Ref))         by tier then position
//	ByTier(ctx, verdict, tier, blocks, fn(Ref))            by position
//	ByProfit(ctx, side, token, lo, hi, fn(amount, Ref))    a balance component in [lo, hi] (nil: open), by amount then position
//	ByAddress(ctx, addr, blocks, fn(Ref))                  transactions touching an address, by position
//	ByToken(ctx, token, blocks, fn(Ref))                   transactions moving a token, by position
//	Records(ctx, blocks, fn(*Record))                      full records of a block range, by position (read on all cores, pscan.go)
//	Filter(ctx, blocks, addrs, match, whole, fn(*Record))  the same, deciding on each record's header (match, concurrent) first
//	Fetch(ctx, Lookup, fn(*Record))                        the records a secondary-key path finds (what By* find), one read each
//	Scan(ctx, fn(*Record))                                 every record, by position
//	Count(ctx), Stats(ctx)                                 transactions; keys and bytes per kind
//	Failures(ctx, fn(Failure)), Inputs(ctx, fn(InputMark)), Input(name)
//	Verify(ctx)                                            check the invariants above
//
// # Writing
//
// Put(analysis, latency) stores one transaction, Delete(hash) removes
// one with all its keys. The pipeline that fills the index is package
// index/ingest (this package only stores: it writes the pipeline's
// batches, Batches): ingest.Ingest(ctx, ix, inputs,
// opts) ingests files (Files expands directories) or bundles already in
// memory (BundleInput: the RPC fetcher's entry point; NewIngester and Add
// stream them): decoding and normalform.Analyze on all cores, writes
// batched (Options.BatchTxs transactions per Badger write), each
// input's transactions put back in input order so that the result does
// not depend on scheduling. An input ingested completely gets a marker
// (its name, content hash, schema and algebra versions, configuration
// fingerprint) and is skipped by the next ingest; an interrupted one is
// ingested again, harmlessly. Decode and analysis failures are recorded
// with their error under the input's name; RetryFailed ingests those
// inputs again. Package index/export writes the records as CSV or JSON
// lines.
//
// When two inputs give one transaction different content (a trace with
// and without its inner calls, a bundle with and without its receipt),
// the later input in the ingest's order wins, unless its record knows
// strictly less (costs, status, block, index, sender) than the index's:
// that record is kept (Summary.Kept). A failure naming a transaction is
// cleared when a later input stores the transaction.
//
// Before opening for writing and before each write, the free disk space
// is checked against what Badger may allocate (space.go): short of it,
// the write is refused with a NoSpaceError instead of Badger faulting on
// a full disk. OpenReadOnly opens an index a crash left without writing
// to it (view.go). One process at a time opens an index for writing;
// it names itself in a holder file, and another's open fails with a
// LockedError naming it (holder.go), when OpenSnapshot reads the index
// as it was last committed. A position (block, index)
// names one transaction: a second transaction claiming it is refused
// (PositionError, recorded as a failure); after a reorganisation, Delete
// the replaced block's transactions first. The index holds one chain.
package index
