package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// maxJSONDepth bounds the nesting of any JSON value the scanner walks. A
// callTracer frame nests two levels per call ("calls": [ {...} ]) and the EVM
// allows 1024 calls deep, so real traces stay far below it.
const maxJSONDepth = 4096

// scanner is a pull parser over one JSON document held in memory. It decodes
// only the fields the caller asks for and skips the rest structurally: a
// skipped string costs one bytes.IndexByte, which is why decoding a trace is
// cheaper than validating it. Errors are sticky: after the first one every
// method returns zero values, and err carries the JSON path and byte offset
// where decoding stopped.
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
}

type pathElem struct {
	key   []byte
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
			b.Write(p.key)
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
				s.skip()
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
				s.skip()
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
	s.skip()
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

func (s *scanner) ws() {
	for s.i < len(s.buf) {
		switch s.buf[s.i] {
		case ' ', '\n', '\t', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value, or 0 at the end of input.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.buf) {
		return 0
	}
	return s.buf[s.i]
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
	s.path = append(s.path, pathElem{})
	return true
}

// objNext returns the next key of the current object, positioned at its
// value, or false at the closing brace (or on error).
func (s *scanner) objNext() ([]byte, bool) {
	if s.err != nil {
		return nil, false
	}
	top := &s.path[len(s.path)-1]
	c := s.peek()
	if c == '}' {
		s.i++
		s.path = s.path[:len(s.path)-1]
		return nil, false
	}
	if top.n > 0 {
		if c != ',' {
			s.unexpected("',' or '}'")
			return nil, false
		}
		s.i++
		c = s.peek()
	}
	if c != '"' {
		s.unexpected("an object key")
		return nil, false
	}
	key := s.rawString()
	if s.err != nil {
		return nil, false
	}
	top.key = key
	top.n++
	if s.peek() != ':' {
		s.unexpected("':'")
		return nil, false
	}
	s.i++
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

// arrNext positions the scanner at the next element, or returns false at
// the closing bracket (or on error).
func (s *scanner) arrNext() bool {
	if s.err != nil {
		return false
	}
	top := &s.path[len(s.path)-1]
	c := s.peek()
	if c == ']' {
		s.i++
		s.path = s.path[:len(s.path)-1]
		return false
	}
	if top.n > 0 {
		if c != ',' {
			s.unexpected("',' or ']'")
			return false
		}
		s.i++
	}
	top.idx++
	top.n++
	if s.peek(); s.i >= len(s.buf) {
		s.unexpected("an array element")
		return false
	}
	return true
}

// rawString reads a string and returns its content. Strings without escapes
// are returned as a sub-slice of the input (no copy).
func (s *scanner) rawString() []byte {
	if s.err != nil {
		return nil
	}
	if s.peek() != '"' {
		s.unexpected("a string")
		return nil
	}
	start := s.i + 1
	j := bytes.IndexByte(s.buf[start:], '"')
	if j < 0 {
		s.i = len(s.buf)
		s.failf("unterminated string (truncated JSON?)")
		return nil
	}
	end := start + j
	if bytes.IndexByte(s.buf[start:end], '\\') < 0 {
		s.i = end + 1
		return s.buf[start:end]
	}
	// Slow path: the string has escapes. Find the real closing quote and
	// unquote it with the standard library.
	k := start
	for {
		if k >= len(s.buf) {
			s.i = len(s.buf)
			s.failf("unterminated string (truncated JSON?)")
			return nil
		}
		c := s.buf[k]
		if c == '\\' {
			k += 2
			continue
		}
		if c == '"' {
			break
		}
		k++
	}
	out, err := strconv.Unquote(string(s.buf[start-1 : k+1]))
	if err != nil {
		// JSON escapes are a subset of Go's except \/ ; handle it.
		out, err = strconv.Unquote(strings.ReplaceAll(string(s.buf[start-1:k+1]), `\/`, `/`))
		if err != nil {
			s.failf("invalid string escape")
			return nil
		}
	}
	s.i = k + 1
	return []byte(out)
}

// skip skips one value of any kind, checking its structure (balanced
// brackets, terminated strings, well-formed literals) but not the content of
// strings and numbers.
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

func (s *scanner) skipString() {
	k := s.i + 1
	for {
		j := bytes.IndexByte(s.buf[k:], '"')
		if j < 0 {
			s.i = len(s.buf)
			s.failf("unterminated string (truncated JSON?)")
			return
		}
		k += j
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

func (s *scanner) skipNested() {
	var stack [64]byte
	st := stack[:0]
	for s.i < len(s.buf) {
		c := s.buf[s.i]
		switch c {
		case '"':
			s.skipString()
			if s.err != nil {
				return
			}
			continue
		case '{', '[':
			if len(st)+len(s.path) >= maxJSONDepth && !s.anyDepth {
				s.failf("JSON nested deeper than %d levels", maxJSONDepth)
				return
			}
			st = append(st, c)
		case '}', ']':
			if len(st) == 0 || (c == '}') != (st[len(st)-1] == '{') {
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

// number reads a JSON number and returns its text.
func (s *scanner) number() []byte {
	start := s.i
	if s.i < len(s.buf) && s.buf[s.i] == '-' {
		s.i++
	}
	for s.i < len(s.buf) {
		c := s.buf[s.i]
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			s.i++
			continue
		}
		break
	}
	if s.i == start {
		s.unexpected("a number")
		return nil
	}
	return s.buf[start:s.i]
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

// u64 reads a quantity that must fit in 64 bits.
func (s *scanner) u64() uint64 {
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

func (s *scanner) hash() (h normalform.Hash) {
	s.fixedHex(h[:], "hash")
	return
}

// hexBytes decodes a 0x-prefixed hex string of any even length.
func (s *scanner) hexBytes() []byte {
	txt := s.rawHex()
	if s.err != nil {
		return nil
	}
	out := make([]byte, len(txt)/2)
	for k := range out {
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
