package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// The node's answers, bounded. go-ethereum's rpc client reads an HTTP
// answer whole, however long it is, and waits for the rest of a body
// shorter than its Content-Length until the request's deadline. The
// client's transport (guardTransport) wraps every answer's body:
//
//   - more than MaxResponseBytes is an *AnswerTooLargeError, refused from
//     the Content-Length when it says so, else one byte past the limit; it
//     is not retried (the node would send the same again);
//   - a body with a Content-Length that stops arriving for StallTimeout is
//     an *AnswerCutError (the node has the whole answer, since it knew its
//     length: a pause that long is a connection that died without closing);
//     so is a body that ends before its Content-Length. Both are retried.
//
// A streamed answer (no Content-Length: Erigon streams traces as it
// computes them) may pause; --timeout bounds it.
//
// The body's JSON structure is checked as it passes (shapeCheck), before
// go-ethereum's client decodes it, because the client's decoding
// multiplies some answers' size in memory: a batch answer is decoded into
// one message per element before any check (an answer of 3 MB made of
// "{}," allocated 188 MB, and MaxResponseBytes is 1 GiB by default), and a
// message's error member's "data" into interface{} values (nested empty
// arrays, "[],", likewise). So:
//
//   - a top-level array (a batch answer) of more elements than the calls
//     the request sent (callsKey, set by Client.Batch; 1 for a single call,
//     whose answer go-ethereum would refuse as an array anyway) is an
//     *AnswerShapeError;
//   - so is a message's "error" member (of the top-level object, or of an
//     element of the top-level array) over MaxErrorBytes, and an answer's
//     "error" members over MaxAnswerErrorBytes in all.
//
// Neither is retried (the node would send the same again); reading stops
// at once, as for an answer over the size limit.

// AnswerTooLargeError is a node answer over the size limit.
type AnswerTooLargeError struct {
	Limit int64
	// Length is the Content-Length the node announced, or -1 when the body
	// was cut off one byte past the limit.
	Length int64
}

func (e *AnswerTooLargeError) Error() string {
	if e.Length >= 0 {
		return fmt.Sprintf("the node's answer is %d bytes (Content-Length), over the limit of %d bytes (--max-bytes); not read", e.Length, e.Limit)
	}
	return fmt.Sprintf("the node's answer is over the limit of %d bytes (--max-bytes); stopped reading after %d bytes", e.Limit, e.Limit+1)
}

// AnswerCutError is an answer that ended, or stopped arriving, before its
// Content-Length: a truncated answer.
type AnswerCutError struct {
	Got, Length int64
	Stalled     time.Duration // > 0: nothing came for this long; 0: the connection closed
	Err         error         // the transport's error (io.ErrUnexpectedEOF when it closed)
}

func (e *AnswerCutError) Error() string {
	if e.Stalled > 0 {
		return fmt.Sprintf("truncated answer: %d of %d bytes (Content-Length), then nothing for %s", e.Got, e.Length, e.Stalled)
	}
	return fmt.Sprintf("truncated answer: %d of %d bytes (Content-Length), then the connection closed: %v", e.Got, e.Length, e.Err)
}

func (e *AnswerCutError) Unwrap() error { return e.Err }

// MaxErrorBytes bounds a JSON-RPC message's "error" member in a node's
// answer (its value, from after the colon). The errors of the methods
// flowq calls are a code and a message of tens of bytes ("header not
// found", "execution timeout", "limit exceeded", "method not found"),
// and geth's "data", when there is any, is an eth_call's revert data in
// hex (TokenInfo's symbol() and decimals()): an Error(string) with its
// reason is a few hundred bytes. 64 KiB is a revert of 32 KiB of data,
// which no token's metadata call has cause to send; an "error" that large
// is refused, the whole answer with it.
//
// The bound is on what decoding the member costs: go-ethereum decodes
// "data" into interface{} values, 38 bytes allocated for each byte of
// nested empty arrays ("[],"; measured: an error of 64 KiB cost 2.5 MB).
// Per message, that is still a batch's size times as much (a batch answer
// of 100 such errors, TokenInfo's batch size, cost 233 MB), hence
// MaxAnswerErrorBytes: an answer's errors together, about 10 MB to decode
// at most (measured: four errors of 64 KiB, 262 KB in all, cost 9.8 MB). TokenInfo's 100 calls
// all reverting with a reason of 64 characters are some 33 KB (about 330
// bytes each, message and data).
const (
	MaxErrorBytes       = 64 << 10
	MaxAnswerErrorBytes = 4 * MaxErrorBytes
)

// AnswerShapeError is a node answer refused for its structure as it
// arrived, before it was decoded (see above).
type AnswerShapeError struct {
	// Calls > 0: the answer is an array of more elements than the Calls
	// the request sent, element Message being the first one too many.
	// Calls == 0: the "error" member of message Message (1-based: the
	// element of a batch answer, 1 for an object) is over Limit bytes,
	// or, InAll, takes the answer's "error" members over Limit.
	Calls   int
	Message int
	Limit   int64
	InAll   bool
	At      int64 // the answer's byte where the element, or the error member's value, starts
}

func (e *AnswerShapeError) Error() string {
	switch {
	case e.Calls > 0:
		return fmt.Sprintf("the node answered %d call(s) with more than %d message(s) (message %d starts at byte %d); stopped reading", e.Calls, e.Calls, e.Message, e.At)
	case e.InAll:
		return fmt.Sprintf(`the node's answer has "error" members over %d bytes in all (message %d's, from byte %d, passes it); stopped reading`, e.Limit, e.Message, e.At)
	}
	return fmt.Sprintf(`the node's answer has an "error" member over %d bytes (in message %d, from byte %d); stopped reading`, e.Limit, e.Message, e.At)
}

// callsKey is the context key of the number of JSON-RPC calls an HTTP
// request sends: the most messages its answer may hold (withCalls).
type callsKey struct{}

// withCalls tells the transport that requests made with ctx send n calls
// (n > 0; go-ethereum's client makes its HTTP request with the context
// it is given).
func withCalls(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, callsKey{}, n)
}

// errStalled cancels a request whose body stopped arriving.
var errStalled = errors.New("the answer stopped arriving")

// guardTransport bounds the bodies of base's answers (see above) and
// tells the client that the node answered (answered, for every HTTP
// answer, whatever its status).
type guardTransport struct {
	base     http.RoundTripper
	max      int64 // <= 0: no limit
	stall    time.Duration
	answered func()
}

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	if t.answered != nil {
		t.answered()
	}
	if t.max > 0 && resp.ContentLength > t.max {
		resp.Body.Close()
		cancel(nil)
		return nil, &AnswerTooLargeError{Limit: t.max, Length: resp.ContentLength}
	}
	b := &guardedBody{rc: resp.Body, length: resp.ContentLength, max: t.max, cancel: cancel}
	calls, _ := req.Context().Value(callsKey{}).(int) // 0: not said, no bound
	b.shape = newShapeCheck(calls, MaxErrorBytes, MaxAnswerErrorBytes)
	if resp.ContentLength >= 0 && t.stall > 0 {
		b.stall = t.stall
		b.timer = time.AfterFunc(time.Hour, b.fire)
		b.timer.Stop()
	}
	resp.Body = b
	return resp, nil
}

// guardedBody is an answer's body, bounded in size and, when its length
// is known, in the time a read may wait, and checked for its structure.
type guardedBody struct {
	rc     io.ReadCloser
	n      int64 // bytes read
	length int64 // Content-Length, or -1
	max    int64
	cancel context.CancelCauseFunc
	err    error // once failed, every read fails so (a drain stops at once)
	shape  shapeCheck

	stall   time.Duration
	timer   *time.Timer
	mu      sync.Mutex
	reading bool
	stalled bool
}

// fire runs when a read has waited stall: it cancels the request, which
// ends the read.
func (b *guardedBody) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reading {
		b.stalled = true
		b.cancel(errStalled)
	}
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.max > 0 && int64(len(p)) > b.max+1-b.n {
		p = p[:b.max+1-b.n]
	}
	if b.timer != nil {
		b.mu.Lock()
		b.reading = true
		b.timer.Reset(b.stall)
		b.mu.Unlock()
	}
	n, err := b.rc.Read(p)
	stalled := false
	if b.timer != nil {
		b.mu.Lock()
		b.reading = false
		b.timer.Stop()
		stalled = b.stalled
		b.mu.Unlock()
	}
	b.n += int64(n)
	// The chunk is checked before the decoder sees any of it: the decoder
	// reads a whole value before decoding it, and would decode one that
	// ends in a chunk handed over with the error.
	var bad error
	if n > 0 && !stalled {
		bad = b.shape.scan(p[:n])
	}
	switch {
	case stalled:
		b.err = &AnswerCutError{Got: b.n, Length: b.length, Stalled: b.stall, Err: errStalled}
	case b.max > 0 && b.n > b.max:
		b.err = &AnswerTooLargeError{Limit: b.max, Length: -1}
		b.cancel(b.err) // the rest is not wanted: close the connection
	case bad != nil:
		b.err = bad
		b.cancel(b.err)
	case err == io.ErrUnexpectedEOF && b.length >= 0:
		b.err = &AnswerCutError{Got: b.n, Length: b.length, Err: err}
	default:
		return n, err
	}
	return 0, b.err
}

func (b *guardedBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// shapeCheck follows an answer's JSON structure byte by byte as it is
// read, in constant memory: the depth, whether a string is open and
// whether its last byte escapes the next, and, at the depth of the
// messages (1 in a top-level object, 2 in a top-level array), the keys of
// the message objects, to find their "error" member. It follows valid
// JSON exactly; on invalid JSON it may miss or miscount, which is
// harmless, since the decoder reads a whole value, validating it, before
// it decodes any of it: an invalid answer is refused without being
// decoded. Only the first top-level value is followed: go-ethereum
// decodes no other (it drains the rest unread).
type shapeCheck struct {
	calls   int   // > 0: the most elements a top-level array may have
	maxErr  int64 // the most bytes of an "error" member's value
	maxErrs int64 // ... and of all of them
	errs    int64 // the bytes of the "error" members ended

	off    int64 // the bytes scanned before the current chunk
	depth  int   // the containers open
	top    byte  // '[' or '{': the top-level value, once begun
	done   bool  // the top-level value has ended
	commas int   // the commas of the top-level array: its elements begun, less one

	inStr bool // in a string
	esc   bool // in a string, after an escaping backslash

	// The message being read (the top-level object, or the current
	// element of the top-level array).
	msgObj  bool  // it is an object
	wantKey bool  // the next string at its depth is a key
	inKey   bool  // in one of its keys
	keyN    int   // the key's characters so far that spell "error"
	keyOK   bool  // the key spells "error" so far
	hex     int   // in a key, the hex digits of a \u escape still to come
	code    rune  // the \u escape's code so far
	isErr   bool  // the last key read is "error": its value follows the colon
	errAt   int64 // where the "error" member's value starts; -1 outside it
}

// newShapeCheck is the check of an answer to calls calls (0: no bound
// on its messages) whose "error" members may hold maxErr bytes each and
// maxErrs in all.
func newShapeCheck(calls int, maxErr, maxErrs int64) shapeCheck {
	return shapeCheck{calls: calls, maxErr: maxErr, maxErrs: maxErrs, errAt: -1}
}

// structural marks the bytes that matter outside strings.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true, ',': true, ':': true}

// msgDepth is the depth inside a message object: 1 in a single answer, 2
// in a batch answer.
func (s *shapeCheck) msgDepth() int {
	if s.top == '{' {
		return 1
	}
	return 2
}

// message is the 1-based number of the message being read.
func (s *shapeCheck) message() int { return s.commas + 1 }

// scan follows the next chunk of the answer.
func (s *shapeCheck) scan(p []byte) error {
	if s.done {
		s.off += int64(len(p))
		return nil
	}
	for i := 0; i < len(p); {
		if s.inStr {
			if s.inKey {
				i = s.scanKey(p, i)
			} else {
				i = s.skipString(p, i)
			}
			continue
		}
		c := p[i]
		if !structural[c] { // whitespace, numbers, true, false, null
			i++
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			if s.wantKey && s.depth == s.msgDepth() {
				s.wantKey, s.inKey, s.keyN, s.keyOK, s.hex = false, true, 0, true, 0
			}
		case '{', '[':
			s.depth++
			switch {
			case s.depth == 1:
				s.top = c
				s.msgObj, s.wantKey = c == '{', c == '{'
			case s.depth == 2 && s.top == '[':
				s.msgObj, s.wantKey = c == '{', c == '{'
			}
		case '}', ']':
			if s.depth == s.msgDepth() && s.errAt >= 0 {
				if err := s.endError(s.off + int64(i)); err != nil {
					return err
				}
			}
			if s.depth > 0 {
				s.depth--
			}
			if s.depth == 0 && s.top != 0 {
				s.done = true
				s.off += int64(len(p))
				return nil
			}
		case ',':
			if s.depth == 1 && s.top == '[' {
				s.commas++
				if s.calls > 0 && s.commas >= s.calls {
					return &AnswerShapeError{Calls: s.calls, Message: s.message(), At: s.off + int64(i) + 1}
				}
			}
			if s.depth == s.msgDepth() {
				if s.errAt >= 0 {
					if err := s.endError(s.off + int64(i)); err != nil {
						return err
					}
				}
				s.wantKey = s.msgObj
			}
		case ':':
			if s.depth == s.msgDepth() && s.msgObj && s.isErr {
				s.errAt = s.off + int64(i) + 1
			}
			s.isErr = false
		}
		i++
	}
	s.off += int64(len(p))
	if s.errAt >= 0 { // the member goes on past this chunk
		return s.errSize(s.off - s.errAt)
	}
	return nil
}

// endError ends the "error" member's value at offset end.
func (s *shapeCheck) endError(end int64) error {
	if err := s.errSize(end - s.errAt); err != nil {
		return err
	}
	s.errs += end - s.errAt
	s.errAt = -1
	return nil
}

// errSize checks the "error" member's n bytes so far.
func (s *shapeCheck) errSize(n int64) error {
	switch {
	case n > s.maxErr:
		return &AnswerShapeError{Message: s.message(), Limit: s.maxErr, At: s.errAt}
	case s.errs+n > s.maxErrs:
		return &AnswerShapeError{Message: s.message(), Limit: s.maxErrs, InAll: true, At: s.errAt}
	}
	return nil
}

// skipString passes a string's bytes from p[i] on, most of an answer's
// bytes (hex data), a memchr for the closing quote at a time: it returns
// the offset after the closing quote, and closes the string, or len(p).
// A quote is escaped when an odd run of backslashes precedes it; a run is
// counted from where the search started, which is outside an escape.
func (s *shapeCheck) skipString(p []byte, i int) int {
	if s.esc { // the previous chunk ended in an escaping backslash
		s.esc = false
		i++
	}
	for i < len(p) {
		j := bytes.IndexByte(p[i:], '"')
		if j < 0 {
			s.esc = oddBackslashes(p[i:])
			return len(p)
		}
		if !oddBackslashes(p[i : i+j]) {
			s.inStr = false
			return i + j + 1
		}
		i += j + 1
	}
	return i
}

// oddBackslashes reports whether b ends in an odd run of backslashes.
func oddBackslashes(b []byte) bool {
	k := 0
	for k < len(b) && b[len(b)-1-k] == '\\' {
		k++
	}
	return k%2 == 1
}

// scanKey reads a message's key from p[i] on, a byte at a time (keys are
// short, and few are at the message's depth), matching it against "error"
// as encoding/json matches a key to the field of go-ethereum's
// jsonrpcMessage: escapes decoded, letters of any case ("ERROR" is the
// field too). It returns the offset after the closing quote, or len(p).
func (s *shapeCheck) scanKey(p []byte, i int) int {
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case s.hex > 0:
			s.code = s.code<<4 | rune(unhex(c))
			if s.hex--; s.hex == 0 {
				s.keyRune(s.code)
			}
		case s.esc:
			s.esc = false
			if c == 'u' {
				s.hex, s.code = 4, 0
			} else {
				s.keyRune(0) // \" \\ \/ \b \f \n \r \t: no letter
			}
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr, s.inKey = false, false
			s.isErr = s.keyOK && s.keyN == len("error")
			return i + 1
		default:
			s.keyRune(rune(c)) // a byte of a multi-byte character is no ASCII letter
		}
	}
	return i
}

// keyRune takes the key's next character. Only ASCII letters fold to
// those of "error" (of Unicode's, only K and S have other forms).
func (s *shapeCheck) keyRune(r rune) {
	if 'A' <= r && r <= 'Z' {
		r += 'a' - 'A'
	}
	if s.keyN < len("error") && r == rune("error"[s.keyN]) {
		s.keyN++
	} else {
		s.keyOK = false
	}
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}
