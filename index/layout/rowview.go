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
	return frontFields(rec, loc, b)
}

// frontFields sets the front's fields of rec (and Loc and Partial) from
// b, leaving the others as they are.
func frontFields(rec *Record, loc Loc, b []byte) (flags byte, rest []byte, err error) {
	rec.Loc, rec.Partial = loc.normal(), true
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

// RowDecoder decodes a scan's records into storage it reuses: the fronts
// a filter reads (Front) and the rows it keeps (Row), record after record,
// without allocating once its arrays have grown. The records it fills are
// lent: their reader must not keep them, nor their slices, past the next
// decode into the same record. One a goroutine, and one a dictionary:
// it keeps the addresses it has resolved by their ids.
type RowDecoder struct {
	t   tables   // the address and token tables of the record being read
	net []Amount // an array for a Net, from a record whose own is gone (nil)
	// front: the last Front's record and where its value's front ended,
	// for a Row of the same value (same loc, same bytes), which copies
	// the front from that record instead of reading it again (a filtered
	// scan reads the front of a record it keeps twice otherwise: 5% of a
	// million-record find's CPU).
	front struct {
		rec   *Record
		loc   Loc
		b     *byte // the value's first byte, and its length
		n     int
		flags byte
		end   int
	}
}

// fronted reports whether b at loc is the value the last Front read.
func (s *RowDecoder) fronted(loc Loc, b []byte) bool {
	f := &s.front
	return f.rec != nil && len(b) == f.n && &b[0] == f.b && loc == f.loc // a Front that read b had len(b) >= 2
}

// fromFront resets rec to the front of the last Front's record (rec may
// be it), as decodeFront would read it from the same value again, and
// returns the front's flags and the bytes after it.
func (s *RowDecoder) fromFront(rec *Record, b []byte) (byte, []byte) {
	fr := s.front.rec
	*rec = Record{Loc: fr.Loc, Partial: true, Reasons: rec.Reasons[:0],
		AlgebraVersion: fr.AlgebraVersion, Latency: fr.Latency, Hash: fr.Hash,
		HasFrom: fr.HasFrom, HasTo: fr.HasTo, CostsKnown: fr.CostsKnown,
		Status: fr.Status, Verdict: fr.Verdict, Tier: fr.Tier, Path: fr.Path, Mode: fr.Mode,
		Counts: fr.Counts}
	return s.front.flags, b[s.front.end:]
}

// Front decodes the front of a record value into rec as DecodeFrontInto
// does, with the same checks and errors, but sets only the front's fields
// (and Partial): rec must hold nothing else, as a record that only Front
// has filled (or a zero one) does. It spares the reset of the whole
// record (a Record is ~600 bytes with pointers: the reset of every record
// a filter reads was ~0.05 s of a million-record scan).
//
// A Row of the same value next (same loc, same bytes) takes the front
// from rec instead of reading it again: rec's front fields must then be
// as Front left them.
func (s *RowDecoder) Front(rec *Record, loc Loc, b []byte) error {
	f, rest, err := frontFields(rec, loc, b)
	if err != nil {
		s.front.rec = nil
		return err
	}
	s.front.rec, s.front.loc, s.front.b, s.front.n, s.front.flags, s.front.end = rec, loc, &b[0], len(b), f, len(b)-len(rest)
	return nil
}

// Row decodes a record value into rec to DepthRow, as DecodeInto does,
// reusing rec's Reasons, Gross and Net arrays and the decoder's tables,
// but for what a row does not show: the shape, tokens and family hashes
// and From are left zero, their dictionary ids read and not looked up (a
// sender's is often the one id of a record the dictionary cache misses).
// The other dictionary addresses are looked up as the value refers to
// them, and one the dictionary lacks is an error, as in DecodeInto.
// rec and its slices are overwritten by the next Row into it.
func (s *RowDecoder) Row(rec *Record, loc Loc, b []byte, names Names) (*Record, error) {
	r, _, err := decodeInto(rec, loc, b, names, DepthRow, s)
	return r, err
}
