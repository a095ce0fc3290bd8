package layout

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/flowq/flowq/normalform"
)

// The record's front: the fields of a record value before its dictionary
// ids (versions, latency, hash, flags, status, verdict, tier, path, mode,
// the four counts). They sit at fixed offsets or in varints read in place,
// so a scan that filters on them (counts, verdict, tier, path, mode,
// blocks) decides a record without resolving its hashes' ids in the
// dictionary, copying its exact hash or reading its reasons: a filtered
// scan decodes the front of every record and the row of those it keeps.
// Read only: the encoding is record.go's.

// DecodeFrontInto decodes the front of a record value into rec, which is
// reset first (its Reasons' array kept, emptied): Loc, AlgebraVersion,
// Latency, Hash, HasFrom, HasTo, CostsKnown, Status, Verdict, Tier, Path,
// Mode and Counts are set; the hashes, reasons and body are not (rec is
// Partial). The front is checked as DecodeInto checks it; the bytes after
// it are not read, so a fault there shows when the record is decoded
// further.
func DecodeFrontInto(rec *Record, loc Loc, b []byte) error {
	_, _, err := decodeFront(rec, loc, b)
	return err
}

// decodeFront is DecodeFrontInto, returning the front's flags byte and
// the bytes after the front (DecodeInto reads on from them).
func decodeFront(rec *Record, loc Loc, b []byte) (flags byte, rest []byte, err error) {
	*rec = Record{Loc: loc.normal(), Partial: true, Reasons: rec.Reasons[:0]}
	bad := func(what string) error {
		return fmt.Errorf("record at %s: %w (%s)", loc, ErrBadRecord, what)
	}
	if len(b) < 2 {
		return 0, nil, bad("shorter than its versions")
	}
	if b[0] != RecordVersion {
		return 0, nil, fmt.Errorf("%w: record version %d, this flowq reads %d", ErrBadRecord, b[0], RecordVersion)
	}
	rec.AlgebraVersion = b[1]
	lat, n := binary.Uvarint(b[2:])
	if n <= 0 || lat > math.MaxInt64 {
		return 0, nil, bad("its latency")
	}
	rec.Latency = time.Duration(lat)
	p := 2 + n
	if len(b) < p+32+6 {
		return 0, nil, bad("shorter than its header")
	}
	copy(rec.Hash[:], b[p:p+32])
	p += 32
	if !loc.Known() && loc.Tx != rec.Hash {
		return 0, nil, fmt.Errorf("tx %s: %w (an unknown position's key holds another hash)", rec.Hash.Hex(), ErrBadRecord)
	}
	f := b[p]
	if f >= flagRecipient<<1 {
		return 0, nil, fmt.Errorf("tx %s: %w (its flags)", rec.Hash.Hex(), ErrBadRecord)
	}
	rec.HasFrom, rec.HasTo, rec.CostsKnown = f&flagFrom != 0, f&flagTo != 0, f&flagCosts != 0
	rec.Status, rec.Verdict, rec.Tier = normalform.Status(b[p+1]), normalform.Verdict(b[p+2]), normalform.Tier(b[p+3])
	rec.Path, rec.Mode = normalform.Path(b[p+4]), normalform.Mode(b[p+5])
	if !rec.Verdict.Valid() || !rec.Tier.Valid() || !rec.Path.Valid() || !rec.Mode.Valid() {
		return 0, nil, fmt.Errorf("tx %s: %w (its verdict, tier, path or mode)", rec.Hash.Hex(), ErrBadRecord)
	}
	p += 6
	for _, c := range [...]*int{&rec.Counts.Cycles, &rec.Counts.Pools, &rec.Counts.Hops, &rec.Counts.Leftovers} {
		v, n := binary.Uvarint(b[p:])
		if n <= 0 || v > math.MaxInt32 {
			return 0, nil, fmt.Errorf("tx %s: %w (its counts)", rec.Hash.Hex(), ErrBadRecord)
		}
		*c = int(v)
		p += n
	}
	return f, b[p:], nil
}
