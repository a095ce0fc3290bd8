package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// maxJSONDepth bounds the nesting of any JSON value the scanner walks. A
// callTracer frame nests two levels per call ("calls": [ {...} ]) and the EVM
// allows 1024 calls deep, so real traces stay far below it.
const maxJSONDepth = 4096

// scanner is a pull parser over one JSON document held in memory. It decodes
// only the fields the caller asks for and skips the rest, but every byte it
// reads past, decoded or skipped, is checked against the grammar of RFC 8259
// exactly as encoding/json.Valid checks it: commas and colons, string
// contents (no raw control byte, only the escapes JSON has), numbers (no
// leading zero, a digit after '.', 'e' and '-'), literals and whitespace.
// Like json.Valid, it does not check that strings are valid UTF-8. Strings
// are scanned eight bytes at a time (scanStr), which is why validating while
// decoding costs less than json.Valid's byte-at-a-time state machine.
// Errors are sticky: after the first one every method returns zero values,
// and err carries the JSON path and byte offset where decoding stopped.
type scanner struct {
	buf     []byte
	i       int
	err     *scanError
	path    []pathElem
	baseOff int // offset of the value the scanner started at; its path is computed on error only
	// anyDepth lifts maxJSONDepth from skip, for the passes that only find
	// where values are (classifying an object, reading a failed element's
	// transaction, stepping over a failed element): the depth is checked
	// where the value is decoded, so that one too-deep value fails alone.
	// skip is iterative, so any depth is safe.
	anyDepth bool
	tooDeep  bool // the error is about depth (skipNested)

	// The last hash read, where its text is (hash): a hash repeated from
	// the last one is not decoded again.
	lastHash   normalform.Hash
	lastHashAt int
	hasLast    bool
	// The last string stepped over by skipSame, where its text is.
	lastSkipAt, lastSkipLen int

	// Chunks the readers allocate from (frames, Parity frames, receipts,
	// ints, logs): a block's frames cost one allocation per chunk rather
	// than one each, and the chunks are handed out again after each bundle
	// is assembled (reuse), so that a block of bundles allocates frames
	// for its largest bundle only.
	frames   chunks[frame]
	pframes  chunks[pframe]
	receipts chunks[receipt]
	intBuf   []int
	// logBuf is the chunk a frame's or a receipt's logs are copied into
	// (logs), from logTmp, where they are read.
	logBuf, logTmp []rlog
	// callBuf is the chunk a frame's children lists are copied into
	// (calls), from callTmp, where they are gathered.
	callBuf, callTmp []*frame
	// Chunks a log's topics (hashes) and decoded hex data (carve) are
	// cut from: a block's 280 logs cost a few allocations, not two each.
	// Within a document they are never handed out again; the document
	// scanner's are given to the next document (decoder.document), since
	// nothing decoded from them outlives Decode (T0 and the transfers
	// hold copies of the values).
	hashBuf []normalform.Hash
	byteBuf []byte

	// seps remembers, per nesting depth and member number, where the
	// text between a value (or an object's '{') and the next member's
	// value was last read: the comma, whitespace, key and colon (sepMemo).
	// nil: objNext reads every member in full (the scanners of the
	// classifying and resynchronising passes, which start often and read
	// little).
	seps []sepMemo
	// hexes remembers addresses and hashes read (fixedHex's fast path),
	// by their digits: a block names the same contracts and event
	// signatures again and again (hexMemo). nil with seps.
	hexes *[hexSlots]hexMemo
}

// hexMemo is an address or hash fixedHex read and decoded: its n digits at
// off, and its value. Digits equal to them byte for byte are valid hex
// digits and have that value, so they are taken without decoding.
type hexMemo struct {
	off int32
	n   uint8
	val [32]byte
}

const hexSlots = 256

// hexSlot is where digits (at least eight) are remembered: a hash of the
// first and the last eight (the first alone are zeros in every address
// written as a topic).
func hexSlot(d []byte) int {
	w := binary.LittleEndian.Uint64(d) ^ binary.LittleEndian.Uint64(d[len(d)-8:])*0x9e3779b97f4a7c15
	return int(w * 0xff51afd7ed558ccd >> 56)
}

// sepMemo is where a member's leading text, from the end of the value
// before it (or the object's '{') to the start of its own value, was last
// read at one depth and member number: off and n its bytes, q its key's
// opening quote (from off) and k the key's length. The text was read and
// validated there; text equal to it byte for byte, at the same place of an
// object (the first member after '{', or a later one after a value), is
// valid in the same way and holds the same key, so objNext takes it in one
// comparison. Indented traces repeat it from one frame to the next.
type sepMemo struct {
	off  int32
	n    uint16
	q, k uint8
}

// Member text is remembered for the first sepDepth levels of nesting and
// the first sepMembers members of an object, up to sepMax bytes, apart for
// objects that are the value of different members of their parent (a
// Parity frame's "action" and "result", the first sepParents): their keys
// at the same depth and number differ, and would push each other out.
const (
	sepDepth   = 8
	sepParents = 4
	sepMembers = 32
	sepMax     = 200
)

// memoSeps makes objNext remember member text (see seps), and fixedHex
// the addresses and hashes it reads (hexes), in tables that start empty:
// those of an earlier document (from d, emptied) or new ones.
func (s *scanner) memoSeps(d *decoder) {
	if d.seps == nil {
		d.seps = make([]sepMemo, sepDepth*sepParents*sepMembers)
		d.hexes = new([hexSlots]hexMemo)
	} else {
		clear(d.seps)
		clear(d.hexes[:])
	}
	s.seps, s.hexes = d.seps, d.hexes
}

// memoBase is where the member text of the object being entered (its
// level about to be pushed) is remembered in seps, or -1 when it is not:
// by its depth and by which member of its parent object it is.
func (s *scanner) memoBase() int32 {
	d := len(s.path) + 1
	if s.seps == nil || d >= sepDepth {
		return -1
	}
	pn := 0 // which member of its parent object the object is
	if d >= 2 {
		if up := &s.path[d-2]; !up.isArr {
			if pn = up.n; pn >= sepParents {
				return -1
			}
		}
	}
	return int32((d*sepParents + pn) * sepMembers)
}

// sepAt is where objNext remembers the text of member n of the current
// object (see sepMemo), or nil when it does not.
func (s *scanner) sepAt(top *pathElem) *sepMemo {
	if top.memo < 0 || top.n >= sepMembers {
		return nil
	}
	return &s.seps[int(top.memo)+top.n]
}

// The pools of the chunks of call frames, Parity frames and receipts that
// earlier documents used (scanner.release).
var framePool, pframePool, receiptPool sync.Pool

func (s *scanner) newFrame() *frame     { return s.frames.take(&framePool) }
func (s *scanner) newPframe() *pframe   { return s.pframes.take(&pframePool) }
func (s *scanner) newReceipt() *receipt { return s.receipts.take(&receiptPool) }

// release gives the chunks of frames and receipts to the next document,
// emptied (a chunk keeps nothing of this document's input alive): the
// document has been decoded, and no transaction keeps anything of its
// frames. A scanner that is not the document's (a JSON-RPC envelope's
// result, a tracer test's) is not released: its chunks are collected.
func (s *scanner) release() {
	s.frames.release(&framePool)
	s.pframes.release(&pframePool)
	s.receipts.release(&receiptPool)
}

// reuse hands the chunks of frames, receipts, ints and logs out again:
// the caller no longer holds any frame, receipt, traceAddress or log they
// gave (its group has been assembled, and T0 keeps nothing of them).
func (s *scanner) reuse() {
	s.frames.reuse()
	s.pframes.reuse()
	s.receipts.reuse()
	s.intBuf = s.intBuf[:0]
	clear(s.logBuf)
	s.logBuf = s.logBuf[:0]
	clear(s.callBuf)
	s.callBuf = s.callBuf[:0]
}

// logs moves the logs read onto s.logTmp from start into the scanner's
// chunk of logs (settle).
func (s *scanner) logs(start int) []rlog { return settle(&s.logBuf, &s.logTmp, start, 64) }

// calls moves the frames read onto s.callTmp from start into the
// scanner's chunk of children lists (settle).
func (s *scanner) calls(start int) []*frame { return settle(&s.callBuf, &s.callTmp, start, 128) }

// ints copies a into the scanner's chunk of ints (nil when a is empty).
func (s *scanner) ints(a []int) []int {
	if len(a) == 0 {
		return nil
	}
	if cap(s.intBuf)-len(s.intBuf) < len(a) {
		s.intBuf = make([]int, 0, max(256, len(a), 2*cap(s.intBuf)))
	}
	start := len(s.intBuf)
	s.intBuf = append(s.intBuf, a...)
	return s.intBuf[start:len(s.intBuf):len(s.intBuf)]
}

// hashes copies a into the scanner's chunk of hashes (nil when a is
// empty).
func (s *scanner) hashes(a []normalform.Hash) []normalform.Hash {
	if len(a) == 0 {
		return nil
	}
	if cap(s.hashBuf)-len(s.hashBuf) < len(a) {
		s.hashBuf = make([]normalform.Hash, 0, max(64, len(a), 2*cap(s.hashBuf)))
	}
	start := len(s.hashBuf)
	s.hashBuf = append(s.hashBuf, a...)
	return s.hashBuf[start:len(s.hashBuf):len(s.hashBuf)]
}

// carve returns n bytes for the caller to overwrite (not zeroed: a chunk
// may be the last document's): up to 256 cut from the scanner's chunk,
// more in an allocation of their own.
func (s *scanner) carve(n int) []byte {
	if n > 256 {
		return make([]byte, n)
	}
	if cap(s.byteBuf)-len(s.byteBuf) < n {
		s.byteBuf = make([]byte, 0, max(4096, 2*cap(s.byteBuf)))
	}
	start := len(s.byteBuf)
	s.byteBuf = s.byteBuf[:start+n]
	return s.byteBuf[start : start+n : start+n]
}

type pathElem struct {
	// memo is where an object's member text is remembered in seps (its
	// member n at memo+n), -1 when it is not (sepAt).
	memo int32
	// keyAt is the offset of the current key's opening quote: the key is
	// read again from there when a path is rendered (on errors only), so
	// that the hot path stores an int, not a slice (no write barrier).
	keyAt int
	idx   int
	n     int // items seen so far at this level
	isArr bool
}

// scanError is a decoding failure at a place in the input: path is the
// JSON path when it is already known; otherwise it is computed from offset
// when the error is reported (paths cost nothing until something fails).
type scanError struct {
	path   string
	offset int
	msg    string
}

// errAt is an error about the value that starts at byte offset off.
func errAt(off int, msg string) *scanError { return &scanError{offset: off, msg: msg} }

// restart makes s a scanner at buf[start:] for keysAt and firstKey, as
// newScanner would, keeping its nesting stack's memory: the fields those
// passes use are set one by one (assigning a whole scanner costs the
// collector's barriers over all its pointers).
func (s *scanner) restart(buf []byte, start int, anyDepth bool) {
	s.buf, s.i, s.baseOff, s.err = buf, start, start, nil
	s.path = s.path[:0]
	s.anyDepth, s.tooDeep = anyDepth, false
}

func newScanner(buf []byte, start int) *scanner {
	return &scanner{buf: buf, i: start, baseOff: start}
}

// pathString renders the current path, e.g. $.traces[3].action.value.
func (s *scanner) pathString() string {
	var b strings.Builder
	if s.baseOff == 0 {
		b.WriteString("$")
	} else {
		b.WriteString(locate(s.buf, s.baseOff))
	}
	for _, p := range s.path {
		if p.n == 0 {
			continue
		}
		if p.isArr {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(p.idx))
			b.WriteByte(']')
		} else {
			b.WriteByte('.')
			k := scanner{buf: s.buf, i: p.keyAt}
			b.Write(k.rawString())
		}
	}
	return b.String()
}

func (s *scanner) failf(format string, args ...any) {
	if s.err != nil {
		return
	}
	s.err = &scanError{path: s.pathString(), offset: s.i, msg: fmt.Sprintf(format, args...)}
}

// failAt records an error about the value at offset off (whose path is
// computed when the error is reported).
func (s *scanner) failAt(off int, msg string) {
	if s.err == nil {
		s.err = errAt(off, msg)
	}
}

// locate returns the JSON path of the value that starts at byte offset
// target ("$" for the document). It walks the document from the start, so
// it is only used to report errors.
func locate(buf []byte, target int) string {
	s := &scanner{buf: buf}
	for s.err == nil {
		if s.peek() == 0 || s.i >= target {
			break
		}
		switch s.buf[s.i] {
		case '{':
			if !s.objBegin() {
				break
			}
			found := false
			for _, ok := s.objNext(); ok; _, ok = s.objNext() {
				if s.peek(); s.i == target || s.contains(target) {
					found = true
					break
				}
				s.skipLax()
			}
			if !found {
				return s.pathString()
			}
		case '[':
			if !s.arrBegin() {
				break
			}
			found := false
			for s.arrNext() {
				if s.i == target || s.contains(target) {
					found = true
					break
				}
				s.skipLax()
			}
			if !found {
				return s.pathString()
			}
		default:
			return s.pathString()
		}
		if s.i == target {
			break
		}
	}
	return s.pathString()
}

// contains reports whether the value at the scanner's position spans
// target, leaving the position unchanged.
func (s *scanner) contains(target int) bool {
	start := s.i
	s.skipLax()
	end := s.i
	s.i, s.err = start, nil
	return target > start && target < end
}

func (s *scanner) ok() bool { return s.err == nil }

// here returns the offset of the next value (after whitespace).
func (s *scanner) here() int {
	s.peek()
	return s.i
}

// skipWS returns the offset of the first byte at or after i that is not
// JSON whitespace, or len(b). Indentation after a newline is measured a
// word at a time: the first byte of the word that is not a space is found
// by its trailing zeros, so a run of any length costs one load per eight
// spaces and no loop per byte.
func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch c := b[i]; c {
		case ' ', '\t', '\r':
			i++
		case '\n':
			i++
			for i+8 <= len(b) {
				if w := binary.LittleEndian.Uint64(b[i:]) ^ spaces8; w != 0 {
					i += bits.TrailingZeros64(w) >> 3
					break
				}
				i += 8
			}
		default:
			return i
		}
	}
	return i
}

const spaces8 = 0x2020202020202020

// peek returns the first byte of the next value, or 0 at the end of input,
// leaving the position there. A byte above ' ' (no whitespace before the
// value, the common case once objNext and arrNext have stepped over it) is
// returned inline; the rest is peekWS's, not inlined, so that peek stays
// within the inliner's budget.
func (s *scanner) peek() (c byte) {
	if s.i < len(s.buf) {
		if c = s.buf[s.i]; c > ' ' {
			return
		}
	}
	return s.peekWS()
}

func (s *scanner) peekWS() byte {
	i := skipWS(s.buf, s.i)
	s.i = i
	if i >= len(s.buf) {
		return 0
	}
	return s.buf[i]
}

func kindOf(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case 0:
		return "the end of input"
	}
	if c == '-' || (c >= '0' && c <= '9') {
		return "a number"
	}
	return fmt.Sprintf("the character %q", c)
}

func (s *scanner) unexpected(want string) {
	c := s.peek()
	if s.i >= len(s.buf) {
		s.failf("unexpected end of input: expected %s (truncated JSON?)", want)
		return
	}
	if c == 0 {
		s.failf("expected %s, found the character %q", want, c)
		return
	}
	s.failf("expected %s, found %s", want, kindOf(c))
}

// isNull consumes a null literal if one comes next.
func (s *scanner) isNull() bool {
	if s.err != nil {
		return false
	}
	if s.peek() == 'n' {
		if bytes.HasPrefix(s.buf[s.i:], []byte("null")) {
			s.i += 4
			return true
		}
		s.literal("null") // a value that starts with n can only be null
	}
	return false
}

// objBegin enters an object. Iterate with objNext.
func (s *scanner) objBegin() bool {
	if s.err != nil {
		return false
	}
	if s.peek() != '{' {
		s.unexpected("an object")
		return false
	}
	if len(s.path) >= maxJSONDepth {
		s.failf("JSON nested deeper than %d levels", maxJSONDepth)
		return false
	}
	s.i++
	s.path = append(s.path, pathElem{memo: s.memoBase()})
	return true
}

// objNext returns the next key of the current object, positioned at its
// value (after the whitespace that precedes it), or false at the closing
// brace (or on error). The common shape, a comma, indentation, a short key
// and a colon, is read with a local position: whitespace by skipWS (a word
// per eight spaces of indentation), the key's first eight bytes in one
// word.
func (s *scanner) objNext() ([]byte, bool) {
	if s.err != nil {
		return nil, false
	}
	top := &s.path[len(s.path)-1]
	b, i := s.buf, s.i
	var memo *sepMemo
	if memo = s.sepAt(top); memo != nil {
		if n := int(memo.n); n != 0 && i+n <= len(b) && string(b[i:i+n]) == string(b[int(memo.off):int(memo.off)+n]) {
			// The same text as last time at this place: the same key,
			// valid as it was then (see sepMemo).
			t, q := b[i:i+n], int(memo.q)
			top.keyAt = i + q
			top.n++
			key := t[q+1 : q+1+int(memo.k)]
			if i += n; i < len(b) && b[i] <= ' ' {
				i = skipWS(b, i)
			}
			s.i = i
			return key, true
		}
	}
	i0 := i
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if i >= len(b) {
		s.i = i
		if top.n > 0 {
			s.unexpected("',' or '}'")
		} else {
			s.unexpected("an object key")
		}
		return nil, false
	}
	c := b[i]
	if c == '}' {
		s.i = i + 1
		s.path = s.path[:len(s.path)-1]
		return nil, false
	}
	if top.n > 0 {
		if c != ',' {
			s.i = i
			s.unexpected("',' or '}'")
			return nil, false
		}
		i++
		if i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		if i >= len(b) {
			s.i = i
			s.unexpected("an object key")
			return nil, false
		}
		c = b[i]
	}
	if c != '"' {
		s.i = i
		s.unexpected("an object key")
		return nil, false
	}
	// The key (rawString's work, the position known to be at '"').
	top.keyAt = i
	start := i + 1
	var k int
	if start+8 <= len(b) {
		if m := specialMask(binary.LittleEndian.Uint64(b[start:])); m != 0 {
			k = start + bits.TrailingZeros64(m)>>3
		} else {
			k = scanStr(b, start+8)
		}
	} else {
		k = scanStr(b, start)
	}
	var key []byte
	plain := k < len(b) && b[k] == '"'
	if plain {
		key, i = b[start:k], k+1
	} else if key = s.unescape(start, k); s.err != nil {
		return nil, false
	} else {
		i = s.i
	}
	top.n++
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if i >= len(b) || b[i] != ':' {
		s.i = i
		s.unexpected("':'")
		return nil, false
	}
	i++
	// The value's whitespace: in indented JSON, one space.
	if i < len(b) && b[i] == ' ' {
		i++
	}
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if memo != nil && plain && i-i0 <= sepMax && start-1-i0 <= math.MaxUint8 && len(key) <= math.MaxUint8 && i0 <= math.MaxInt32 {
		*memo = sepMemo{off: int32(i0), n: uint16(i - i0), q: uint8(start - 1 - i0), k: uint8(len(key))}
	}
	s.i = i
	return key, true
}

// arrBegin enters an array. Iterate with arrNext.
func (s *scanner) arrBegin() bool {
	if s.err != nil {
		return false
	}
	if s.peek() != '[' {
		s.unexpected("an array")
		return false
	}
	if len(s.path) >= maxJSONDepth {
		s.failf("JSON nested deeper than %d levels", maxJSONDepth)
		return false
	}
	s.i++
	s.path = append(s.path, pathElem{isArr: true, idx: -1})
	return true
}

// arrNext positions the scanner at the next element (after the
// whitespace that precedes it), or returns false at the closing bracket
// (or on error).
func (s *scanner) arrNext() bool {
	if s.err != nil {
		return false
	}
	top := &s.path[len(s.path)-1]
	b, i := s.buf, s.i
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if i < len(b) && b[i] == ']' {
		s.i = i + 1
		s.path = s.path[:len(s.path)-1]
		return false
	}
	if top.n > 0 {
		if i >= len(b) || b[i] != ',' {
			s.i = i
			s.unexpected("',' or ']'")
			return false
		}
		i++
		if i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
	}
	s.i = i
	top.idx++
	top.n++
	if i >= len(b) {
		s.unexpected("an array element")
		return false
	}
	return true
}

// rawString reads a string and returns its content. Strings without escapes
// are returned as a sub-slice of the input (no copy); a string with escapes
// is unescaped into a new slice. Either way its content is validated.
func (s *scanner) rawString() []byte {
	if s.err != nil {
		return nil
	}
	if s.peek() != '"' {
		s.unexpected("a string")
		return nil
	}
	start := s.i + 1
	k := scanStr(s.buf, start)
	if k < len(s.buf) && s.buf[k] == '"' {
		s.i = k + 1
		return s.buf[start:k]
	}
	return s.unescape(start, k)
}

// unescape decodes the rest of a string whose content starts at start and
// whose first special byte (quote, backslash or control byte) is at k, as
// encoding/json does: \uXXXX escapes of a surrogate pair make one rune, a
// lone surrogate becomes U+FFFD.
func (s *scanner) unescape(start, k int) []byte {
	b := s.buf
	out := make([]byte, 0, k-start+16)
	out = append(out, b[start:k]...)
	for {
		if k >= len(b) {
			s.i = len(b)
			s.failf("unterminated string (truncated JSON?)")
			return nil
		}
		switch c := b[k]; {
		case c == '"':
			s.i = k + 1
			return out
		case c < 0x20:
			s.i = k
			s.failf("control character %#02x inside a string (JSON wants it escaped)", c)
			return nil
		case c != '\\':
			out = append(out, c)
			k++
			continue
		}
		n := s.escape(k)
		if n == 0 {
			return nil
		}
		if e := b[k+1]; e != 'u' {
			out = append(out, unescapeTable[e])
			k += n
			continue
		}
		r := rune(hex4(b[k+2:]))
		k += 6
		if utf16.IsSurrogate(r) {
			r2 := rune(-1)
			if k+6 <= len(b) && b[k] == '\\' && b[k+1] == 'u' && hex4(b[k+2:]) >= 0 {
				r2 = rune(hex4(b[k+2:]))
			}
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				r = d
				k += 6
			} else {
				r = utf8.RuneError
			}
		}
		out = utf8.AppendRune(out, r)
	}
}

// escape checks the escape sequence at b[k] == '\\' and returns its length
// (2, or 6 for \uXXXX), or 0 after recording the error.
func (s *scanner) escape(k int) int {
	b := s.buf
	if k+1 >= len(b) {
		s.i = len(b)
		s.failf("unterminated string (truncated JSON?)")
		return 0
	}
	e := b[k+1]
	if e != 'u' {
		if unescapeTable[e] == 0 {
			s.i = k
			s.failf("invalid escape %q inside a string", b[k:k+2])
			return 0
		}
		return 2
	}
	if k+6 > len(b) {
		for j := k + 2; j < len(b); j++ {
			if unhex(b[j]) > 15 {
				s.i = k
				s.failf("invalid escape %q inside a string: want \\u and four hex digits", b[k:j+1])
				return 0
			}
		}
		s.i = len(b)
		s.failf("unterminated string (truncated JSON?)")
		return 0
	}
	if hex4(b[k+2:]) < 0 {
		s.i = k
		s.failf("invalid escape %q inside a string: want \\u and four hex digits", b[k:k+6])
		return 0
	}
	return 6
}

// hex4 is the value of the four hex digits at the start of b, -1 if they
// are not four hex digits. b holds at least four bytes.
func hex4(b []byte) int {
	a, c, d, e := unhex(b[0]), unhex(b[1]), unhex(b[2]), unhex(b[3])
	if a|c|d|e > 15 {
		return -1
	}
	return int(a)<<12 | int(c)<<8 | int(d)<<4 | int(e)
}

// unescapeTable maps the byte after a backslash to what the escape stands
// for, 0 when JSON has no such escape (\u is handled apart).
var unescapeTable = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// Words of eight equal bytes, for scanning eight bytes at a time.
const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// specialMask sets the high bit of each byte of w that is '"', '\\' or
// below 0x20. A byte above the lowest flagged one may be flagged wrongly
// (a borrow), never the lowest: the first special byte is exact.
func specialMask(w uint64) uint64 {
	q := w ^ (lsb8 * '"')
	bs := w ^ (lsb8 * '\\')
	return ((q-lsb8)&^q | (bs-lsb8)&^bs | (w-lsb8*0x20)&^w) & msb8
}

// scanStr returns the offset of the first '"', '\\' or control byte at or
// after k, or len(b): eight bytes at a time, then byte by byte.
func scanStr(b []byte, k int) int {
	if k < len(b) {
		// Walk a shrinking window, so that a round is one length test
		// and one load (indexing b[k:] each round cost a bounds check
		// and the slice's arithmetic).
		rest := b[k:]
		for len(rest) >= 8 {
			if m := specialMask(binary.LittleEndian.Uint64(rest)); m != 0 {
				return len(b) - len(rest) + bits.TrailingZeros64(m)>>3
			}
			rest = rest[8:]
		}
		k = len(b) - len(rest)
	}
	for ; k < len(b); k++ {
		if c := b[k]; c == '"' || c == '\\' || c < 0x20 {
			return k
		}
	}
	return k
}

// skip skips one value of any kind, validating it as json.Valid would.
func (s *scanner) skip() {
	if s.err != nil {
		return
	}
	c := s.peek()
	switch {
	case c == '"':
		s.skipString()
	case c == '{' || c == '[':
		s.skipNested()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		s.number()
	default:
		s.unexpected("a value")
	}
}

// skipSame is skip for a value that usually repeats the one before it (a
// block's hash in every frame and log): a string whose text is the same
// as the last string skipSame stepped over is stepped over without being
// read again. The bytes are the same, up to and including the closing
// quote, so they are the same string, validated already. Anything else
// is skipped, and validated, as skip does.
func (s *scanner) skipSame() {
	st := s.here()
	if b, n := s.buf, s.lastSkipLen; n > 0 && s.err == nil && st+n <= len(b) &&
		string(b[st:st+n]) == string(b[s.lastSkipAt:s.lastSkipAt+n]) {
		s.i = st + n
		return
	}
	s.skip()
	if s.err == nil && st < len(s.buf) && s.buf[st] == '"' {
		s.lastSkipAt, s.lastSkipLen = st, s.i-st
	}
}

func (s *scanner) literal(lit string) {
	if !bytes.HasPrefix(s.buf[s.i:], []byte(lit)) {
		if rest := s.buf[s.i:]; len(rest) < len(lit) && bytes.HasPrefix([]byte(lit), rest) {
			s.failf("unexpected end of input inside %s (truncated JSON?)", lit)
			return
		}
		s.failf("invalid literal (expected %s)", lit)
		return
	}
	s.i += len(lit)
}

// skipString steps over a string, checking its content: no raw control
// byte, only JSON's escapes. Like json.Valid, it does not check UTF-8.
func (s *scanner) skipString() {
	k := s.i + 1
	for {
		k = scanStr(s.buf, k)
		if k >= len(s.buf) {
			s.i = len(s.buf)
			s.failf("unterminated string (truncated JSON?)")
			return
		}
		switch c := s.buf[k]; c {
		case '"':
			s.i = k + 1
			return
		case '\\':
			n := s.escape(k)
			if n == 0 {
				return
			}
			k += n
		default:
			s.i = k
			s.failf("control character %#02x inside a string (JSON wants it escaped)", c)
			return
		}
	}
}

// skipNested steps over an object or array, validating all of it without
// recursion: a stack of the open containers, one byte each. An error
// inside it (not the end of input) is reported at the path of the byte
// that is wrong, computed from its offset when the error is reported; one
// about depth, at the path of the value skipped.
func (s *scanner) skipNested() {
	s.nested()
	if s.err != nil && s.i < len(s.buf) && !s.tooDeep {
		s.err.path = ""
	}
}

func (s *scanner) nested() {
	var stack [64]byte
	st := stack[:0]
	// eof reports the end of input inside the value being skipped.
	eof := func() {
		s.i = len(s.buf)
		s.failf("unexpected end of input inside %s (truncated JSON?)", map[bool]string{true: "an object", false: "an array"}[st[0] == '{'])
	}
	// key reads `"key" :` after '{' or ','.
	key := func() bool {
		switch c := s.peekWS(); {
		case c == '"':
			s.skipString()
			if s.err != nil {
				return false
			}
		case s.i >= len(s.buf):
			eof()
			return false
		default:
			s.unexpected("an object key")
			return false
		}
		if s.peekWS() != ':' {
			if s.i >= len(s.buf) {
				eof()
			} else {
				s.unexpected("':'")
			}
			return false
		}
		s.i++
		return true
	}
	for {
		// A value starts here.
		c := s.peekWS()
		switch {
		case c == '{' || c == '[':
			if len(st)+len(s.path) >= maxJSONDepth && !s.anyDepth {
				s.failf("JSON nested deeper than %d levels", maxJSONDepth)
				s.tooDeep = true
				return
			}
			st = append(st, c)
			s.i++
			if d := s.peekWS(); d == c+2 { // '{'+2 == '}', '['+2 == ']'
				s.i++
				st = st[:len(st)-1]
				break
			}
			if c == '{' && !key() {
				return
			}
			continue
		case c == '"':
			s.skipString()
		case c == 't':
			s.literal("true")
		case c == 'f':
			s.literal("false")
		case c == 'n':
			s.literal("null")
		case c == '-' || (c >= '0' && c <= '9'):
			s.number()
		case s.i >= len(s.buf):
			eof()
			return
		case c == '}' || c == ']':
			if c == st[len(st)-1]+2 {
				s.failf("expected a value, found %q", c)
			} else {
				s.failf("mismatched %q", c)
			}
			return
		default:
			s.unexpected("a value")
			return
		}
		if s.err != nil {
			return
		}
		// After a value: ',' and the next, or the container closes.
		for {
			if len(st) == 0 {
				return
			}
			top := st[len(st)-1]
			c := s.peekWS()
			if c == ',' {
				s.i++
				if top == '{' && !key() {
					return
				}
				break
			}
			if c == top+2 {
				s.i++
				st = st[:len(st)-1]
				continue
			}
			switch {
			case s.i >= len(s.buf):
				eof()
			case c == '}' || c == ']':
				s.failf("mismatched %q", c)
			default:
				s.unexpected(fmt.Sprintf("',' or %q", top+2))
			}
			return
		}
	}
}

// number reads a JSON number and returns its text:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() []byte {
	b, start := s.buf, s.i
	i := start
	digits := func() bool {
		if i >= len(b) {
			s.i = i
			s.failf("unexpected end of input inside a number (truncated JSON?)")
			return false
		}
		if b[i] < '0' || b[i] > '9' {
			s.i = i
			s.failf("invalid number %q: expected a digit", clip(b[start:i+1]))
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return true
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return nil
		}
	}
	s.i = i
	return b[start:i]
}

// end checks that only whitespace remains.
func (s *scanner) end() {
	if s.err != nil {
		return
	}
	if c := s.peek(); s.i < len(s.buf) {
		what := kindOf(c)
		if c == 0 {
			what = fmt.Sprintf("the character %q", c)
		}
		s.failf("%s after the end of the JSON value", what)
	}
}

// --- typed values -------------------------------------------------------

// quantity reads an unsigned integer of at most 256 bits: a hex string
// ("0x1a"), a decimal string ("26") or a JSON integer (26).
func (s *scanner) quantity() (v uint256.Int) {
	if s.err != nil {
		return
	}
	var txt []byte
	switch c := s.peek(); {
	case c == '"':
		txt = s.rawString()
	case c == '-' || (c >= '0' && c <= '9'):
		txt = s.number()
	default:
		s.unexpected("a quantity (hex string or integer)")
		return
	}
	if s.err != nil {
		return
	}
	if err := parseQuantity(txt, &v); err != "" {
		s.failf("%s: %q", err, clip(txt))
	}
	return
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

func parseQuantity(txt []byte, v *uint256.Int) string {
	if len(txt) >= 2 && txt[0] == '0' && (txt[1] == 'x' || txt[1] == 'X') {
		h := txt[2:]
		for len(h) > 1 && h[0] == '0' {
			h = h[1:]
		}
		if len(h) == 0 {
			v.Clear()
			return ""
		}
		if len(h) > 64 {
			return "number over 256 bits"
		}
		var words [4]uint64
		for k := 0; k < len(h); k++ {
			d := unhex(h[len(h)-1-k])
			if d > 15 {
				return "invalid hex quantity"
			}
			words[k/16] |= uint64(d) << (4 * (k % 16))
		}
		*v = uint256.Int(words)
		return ""
	}
	if len(txt) == 0 {
		return "empty quantity"
	}
	if len(txt) <= 19 {
		// Fits in 64 bits: no big-number parsing.
		var n uint64
		for _, c := range txt {
			if c < '0' || c > '9' {
				n = math.MaxUint64
				break
			}
			n = n*10 + uint64(c-'0')
		}
		if n != math.MaxUint64 {
			v.SetUint64(n)
			return ""
		}
	}
	for _, c := range txt {
		if c < '0' || c > '9' {
			if c == '-' {
				return "negative quantity"
			}
			return "not an unsigned integer"
		}
	}
	if err := v.SetFromDecimal(string(txt)); err != nil {
		if errors.Is(err, uint256.ErrBig256Range) {
			return "number over 256 bits"
		}
		return "invalid decimal quantity"
	}
	return ""
}

// unhex is a hex digit's value, 255 for a byte that is none.
func unhex(c byte) byte { return unhexTable[c] }

// unhexTable maps a byte to its hex digit's value, 255 when it is none: a
// lookup where a comparison chain mispredicts on random digits.
var unhexTable = func() (t [256]byte) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = byte(c - '0')
		case c >= 'a' && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			t[c] = byte(c - 'A' + 10)
		default:
			t[c] = 255
		}
	}
	return t
}()

// smallInt reads, at the scanner's position (after whitespace), a JSON
// integer of at most max digits without sign, fraction or exponent, and
// reports whether it found one; if not, it leaves the position unchanged,
// for the general path to read (or refuse) the value.
func (s *scanner) smallInt(max int) (uint64, bool) {
	if s.err != nil {
		return 0, false
	}
	b, i := s.buf, s.i
	j := i
	var n uint64
	for j < len(b) && b[j] >= '0' && b[j] <= '9' && j-i < max {
		n = n*10 + uint64(b[j]-'0')
		j++
	}
	if j == i || (b[i] == '0' && j > i+1) {
		return 0, false // none, or a leading zero (an error the general path names)
	}
	if j < len(b) {
		if c := b[j]; (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	s.i = j
	return n, true
}

// hexWords decodes the hex digits of src into dst (len(src) = 2*len(dst),
// len(dst) a multiple of 4) eight digits (a word) at a time, and reports
// whether all of them are hex digits. For each byte of a word (below
// 0x80, checked first), it is in a range [lo, hi] when adding 0x80-lo
// carries into its top bit and adding 0x7f-hi does not.
func hexWords(dst, src []byte) bool {
	// Shrinking windows: a round is one length test per slice, no index
	// arithmetic; the top-bit test is folded into the range test's branch
	// (a byte at or above 0x80 fails it, whatever the carries made of the
	// others).
	for len(dst) >= 4 && len(src) >= 8 {
		w := binary.LittleEndian.Uint64(src)
		digit := (w + lsb8*(0x80-'0')) &^ (w + lsb8*(0x7f-'9')) & msb8
		l := w | lsb8*0x20 // 'A'-'F' to 'a'-'f'
		alpha := (l + lsb8*(0x80-'a')) &^ (l + lsb8*(0x7f-'f')) & msb8
		if (digit|alpha)^msb8|w&msb8 != 0 {
			return false
		}
		nib := w&(lsb8*0x0f) + (alpha>>7)*9 // each byte's value, 0 to 15
		t := (nib<<4 | nib>>8) & 0x00ff00ff00ff00ff
		t = (t | t>>8) & 0x0000ffff0000ffff
		t = t | t>>16
		binary.LittleEndian.PutUint32(dst, uint32(t))
		dst, src = dst[4:], src[8:]
	}
	return true
}

// u64 reads a quantity that must fit in 64 bits.
func (s *scanner) u64() uint64 {
	s.peek()
	if n, ok := s.smallInt(19); ok {
		return n // at most nineteen digits: within 64 bits
	}
	v := s.quantity()
	if s.err != nil {
		return 0
	}
	if !v.IsUint64() {
		s.failf("number does not fit in 64 bits")
		return 0
	}
	return v.Uint64()
}

// count reads a quantity used as a position, index or count: it must fit
// in an int32, so that converting it to int never wraps to a negative value.
func (s *scanner) count() int {
	start := s.here()
	if n, ok := s.smallInt(9); ok {
		return int(n) // at most nine digits: within an int32
	}
	v := s.quantity()
	if s.err != nil {
		return 0
	}
	if !v.IsUint64() || v.Uint64() > math.MaxInt32 {
		s.failf("number too large for a position or count: %q", clip(bytes.Trim(s.buf[start:s.i], `"`)))
		return 0
	}
	return int(v.Uint64())
}

// fixedHex decodes a 0x-prefixed hex string of exactly n bytes into dst.
func (s *scanner) fixedHex(dst []byte, what string) {
	if s.err != nil {
		return
	}
	// Fast path: "0x", the digits and the closing quote, decoded in one
	// pass (hex digits need no other validation inside a string).
	if s.peek() == '"' {
		b, st := s.buf, s.i+1
		if end := st + 2 + 2*len(dst); end < len(b) && b[end] == '"' && b[st] == '0' && (b[st+1] == 'x' || b[st+1] == 'X') {
			// Decoded eight digits (a word) at a time (hexWord);
			// addresses and hashes are whole words of digits.
			src := b[st+2 : end]
			var memo *hexMemo
			if s.hexes != nil && len(src) >= 8 && len(dst) <= len(memo.val) {
				memo = &s.hexes[hexSlot(src)]
				if n := int(memo.n); n == len(src) && string(b[int(memo.off):int(memo.off)+n]) == string(src) {
					// The same digits as read there: the same value.
					copy(dst, memo.val[:])
					s.i = end + 1
					return
				}
			}
			var bad byte
			if len(dst)%4 == 0 {
				if !hexWords(dst, src) {
					bad = 255
				}
			} else {
				for k := range dst {
					hi, lo := unhexTable[src[2*k]], unhexTable[src[2*k+1]]
					bad |= hi | lo
					dst[k] = hi<<4 | lo
				}
			}
			if bad <= 15 {
				if memo != nil && st+2 <= math.MaxInt32 {
					memo.off, memo.n = int32(st+2), uint8(len(src))
					copy(memo.val[:], dst)
				}
				s.i = end + 1
				return
			}
		}
	}
	txt := s.rawString()
	if s.err != nil {
		return
	}
	if len(txt) != 2+2*len(dst) || txt[0] != '0' || (txt[1] != 'x' && txt[1] != 'X') {
		s.failf("invalid %s %q: want 0x and %d hex digits", what, clip(txt), 2*len(dst))
		return
	}
	for k := range dst {
		hi, lo := unhex(txt[2+2*k]), unhex(txt[3+2*k])
		if hi > 15 || lo > 15 {
			s.failf("invalid %s %q: not hex", what, clip(txt))
			return
		}
		dst[k] = hi<<4 | lo
	}
}

func (s *scanner) address() (a normalform.Address) {
	s.fixedHex(a[:], "address")
	return
}

// optAddress reads an address or null.
func (s *scanner) optAddress() (a normalform.Address, ok bool) {
	if s.isNull() {
		return a, false
	}
	return s.address(), s.err == nil
}

// hashTok is the length of a hash's JSON text: a quote, 0x, 64 digits and
// a quote.
const hashTok = 2 + 2 + 2*len(normalform.Hash{})

func (s *scanner) hash() (h normalform.Hash) {
	st := s.here()
	// The same text as the last hash read (every frame of a Parity
	// transaction names it; a log's event topic repeats): the same bytes,
	// validated and decoded already.
	if b := s.buf; s.hasLast && st+hashTok <= len(b) && s.err == nil &&
		string(b[st:st+hashTok]) == string(b[s.lastHashAt:s.lastHashAt+hashTok]) {
		s.i = st + hashTok
		return s.lastHash
	}
	s.fixedHex(h[:], "hash")
	// Only a plain token (no escapes) decodes to a hash in exactly
	// hashTok bytes.
	if s.err == nil && s.i == st+hashTok {
		s.lastHashAt, s.lastHash, s.hasLast = st, h, true
	}
	return
}

// hexBytes decodes a 0x-prefixed hex string of any even length.
func (s *scanner) hexBytes() []byte {
	txt := s.rawHex()
	if s.err != nil {
		return nil
	}
	out := s.carve(len(txt) / 2)
	// Whole words of eight digits by hexWords, the rest a byte at a time.
	n := len(out) &^ 3
	if !hexWords(out[:n], txt[:2*n]) {
		s.failf("invalid hex data")
		return nil
	}
	for k := n; k < len(out); k++ {
		hi, lo := unhex(txt[2*k]), unhex(txt[2*k+1])
		if hi > 15 || lo > 15 {
			s.failf("invalid hex data")
			return nil
		}
		out[k] = hi<<4 | lo
	}
	return out
}

// rawHex reads a 0x-prefixed hex string and returns the digits undecoded.
func (s *scanner) rawHex() []byte {
	if s.err != nil {
		return nil
	}
	txt := s.rawString()
	if s.err != nil {
		return nil
	}
	if len(txt) < 2 || txt[0] != '0' || (txt[1] != 'x' && txt[1] != 'X') {
		s.failf("invalid hex data %q: want a 0x prefix", clip(txt))
		return nil
	}
	if len(txt)%2 != 0 {
		s.failf("invalid hex data: odd number of digits")
		return nil
	}
	return txt[2:]
}

// str reads a string as a Go string.
func (s *scanner) str() string { return string(s.rawString()) }

// --- resynchronising after a bad element --------------------------------

// skipLax steps over one value checking only its structure (balanced
// brackets, terminated strings), not its grammar: the decoder uses it only
// to find where a list element that has already failed ends, so that the
// next element can be read. The failed element's error is reported either
// way, so the input is never taken for valid; the elements after it are
// read, and validated, as usual.
func (s *scanner) skipLax() {
	if s.err != nil {
		return
	}
	switch c := s.peek(); {
	case c == '"':
		s.laxString()
	case c == '{' || c == '[':
		s.laxNested()
	default:
		s.skip()
	}
}

func (s *scanner) laxString() {
	k := s.i + 1
	for {
		if k = quoteAt(s.buf, k); k >= len(s.buf) {
			s.i = len(s.buf)
			s.failf("unterminated string (truncated JSON?)")
			return
		}
		// Count the backslashes before the quote: an odd number escapes it.
		bs := 0
		for m := k - 1; m > s.i && s.buf[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 0 {
			s.i = k + 1
			return
		}
		k++
	}
}

// quoteAt returns the offset of the first '"' at or after k, or len(b):
// eight bytes a word (a call to bytes.IndexByte costs more than the short
// strings of a trace take to scan).
func quoteAt(b []byte, k int) int {
	if k < len(b) {
		rest := b[k:]
		for len(rest) >= 8 {
			x := binary.LittleEndian.Uint64(rest) ^ (lsb8 * '"')
			if m := (x - lsb8) &^ x & msb8; m != 0 {
				return len(b) - len(rest) + bits.TrailingZeros64(m)>>3
			}
			rest = rest[8:]
		}
		k = len(b) - len(rest)
	}
	for ; k < len(b); k++ {
		if b[k] == '"' {
			return k
		}
	}
	return k
}

func (s *scanner) laxNested() {
	var stack [64]byte
	st := stack[:0]
	for s.i < len(s.buf) {
		c := s.buf[s.i]
		switch c {
		case ' ', '\n', '\t', '\r':
			s.i = skipWS(s.buf, s.i)
			continue
		case '"':
			s.laxString()
			if s.err != nil {
				return
			}
			continue
		case '{', '[':
			st = append(st, c)
		case '}', ']':
			if len(st) == 0 || c != st[len(st)-1]+2 {
				s.failf("mismatched %q", c)
				return
			}
			st = st[:len(st)-1]
			if len(st) == 0 {
				s.i++
				return
			}
		}
		s.i++
	}
	s.failf("unexpected end of input inside %s (truncated JSON?)", map[bool]string{true: "an object", false: "an array"}[len(st) > 0 && st[0] == '{'])
}
