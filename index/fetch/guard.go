package fetch

import (
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
	if resp.ContentLength >= 0 && t.stall > 0 {
		b.stall = t.stall
		b.timer = time.AfterFunc(time.Hour, b.fire)
		b.timer.Stop()
	}
	resp.Body = b
	return resp, nil
}

// guardedBody is an answer's body, bounded in size and, when its length
// is known, in the time a read may wait.
type guardedBody struct {
	rc     io.ReadCloser
	n      int64 // bytes read
	length int64 // Content-Length, or -1
	max    int64
	cancel context.CancelCauseFunc
	err    error // once failed, every read fails so (a drain stops at once)

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
	switch {
	case stalled:
		b.err = &AnswerCutError{Got: b.n, Length: b.length, Stalled: b.stall, Err: errStalled}
	case b.max > 0 && b.n > b.max:
		b.err = &AnswerTooLargeError{Limit: b.max, Length: -1}
		b.cancel(b.err) // the rest is not wanted: close the connection
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
