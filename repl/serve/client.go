package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to a flowq server.
type Client struct {
	Base string // http://host:port
	Info *Info  // the server file it was found by, when it was
	HTTP *http.Client
}

// NewClient is a client of the server at base (http://host:port).
func NewClient(base string) *Client {
	return &Client{Base: strings.TrimRight(base, "/"), HTTP: &http.Client{}}
}

// RemoteError is a failure the server reported: a statement's error, a
// refused request.
type RemoteError struct{ Msg string }

func (e *RemoteError) Error() string { return e.Msg }

func urlEscape(s string) string { return url.QueryEscape(s) }

func (c *Client) do(ctx context.Context, method, path, ctype string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the server at %s: %w", c.Base, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, &RemoteError{Msg: e.Error}
		}
		return nil, &RemoteError{Msg: fmt.Sprintf("the server at %s answered %s: %s", c.Base, resp.Status, strings.TrimSpace(string(b)))}
	}
	return resp, nil
}

// stream copies a streamed answer's body to w and returns its outcome
// from the trailers.
func stream(ctx context.Context, resp *http.Response, w io.Writer) error {
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reading the server's answer: %w", err)
	}
	switch resp.Trailer.Get(trailerStatus) {
	case "ok":
		return nil
	case "canceled":
		return context.Canceled
	case "error":
		msg, err := base64.StdEncoding.DecodeString(resp.Trailer.Get(trailerError))
		if err != nil {
			return &RemoteError{Msg: "the server reported an error it did not name"}
		}
		return &RemoteError{Msg: string(msg)}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.New("the server's answer ended before its outcome (did the server stop?)")
}

// Status is GET /status.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	resp, err := c.do(ctx, "GET", "/status", "", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	st := &Status{}
	if err := json.NewDecoder(resp.Body).Decode(st); err != nil {
		return nil, fmt.Errorf("the server at %s: its status does not read: %w", c.Base, err)
	}
	return st, nil
}

// Query runs statements on the server and writes their results to w as
// the session of q's format prints them. A statement's failure is a
// *RemoteError with the text the CLI would print.
func (c *Client) Query(ctx context.Context, q QueryRequest, src string, w io.Writer) error {
	if q.Line == 0 {
		q.Line = 1
	}
	if q.Column == 0 {
		q.Column = 1
	}
	resp, err := c.do(ctx, "POST", "/query?"+q.values(), "text/plain; charset=utf-8", strings.NewReader(src))
	if err != nil {
		return err
	}
	return stream(ctx, resp, w)
}

// StartIngest starts an ingest job.
func (c *Client) StartIngest(ctx context.Context, req IngestRequest) (*JobInfo, error) {
	b, _ := json.Marshal(req)
	resp, err := c.do(ctx, "POST", "/ingest", "application/json", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	j := &JobInfo{}
	return j, json.NewDecoder(resp.Body).Decode(j)
}

// Job reads an ingest job's state.
func (c *Client) Job(ctx context.Context, id int) (*JobInfo, error) {
	resp, err := c.do(ctx, "GET", "/ingest/"+strconv.Itoa(id), "", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	j := &JobInfo{}
	return j, json.NewDecoder(resp.Body).Decode(j)
}

// Ingest starts a job and waits for its end, calling progress with each
// state read (every poll).
func (c *Client) Ingest(ctx context.Context, req IngestRequest, poll time.Duration, progress func(*JobInfo)) (*JobInfo, error) {
	j, err := c.StartIngest(ctx, req)
	if err != nil {
		return nil, err
	}
	for j.State == "running" {
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(poll):
		}
		if j, err = c.Job(ctx, j.ID); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(j)
		}
	}
	return j, nil
}

// Failures writes the recorded failures to w, a line each.
func (c *Client) Failures(ctx context.Context, w io.Writer) (int, error) {
	resp, err := c.do(ctx, "GET", "/failures", "", nil)
	if err != nil {
		return 0, err
	}
	err = stream(ctx, resp, w)
	n, _ := strconv.Atoi(resp.Trailer.Get(trailerCount))
	return n, err
}

// Export writes the index's records to w (format csv or jsonl; blocks
// "A..B" or empty for all) and returns how many.
func (c *Client) Export(ctx context.Context, format, blocks string, w io.Writer) (int, error) {
	resp, err := c.do(ctx, "GET", "/export?format="+urlEscape(format)+"&blocks="+urlEscape(blocks), "", nil)
	if err != nil {
		return 0, err
	}
	err = stream(ctx, resp, w)
	n, _ := strconv.Atoi(resp.Trailer.Get(trailerCount))
	return n, err
}

// Draw returns a transaction's picture: view graph or tree, format dot,
// svg or png.
func (c *Client) Draw(ctx context.Context, tx, view, format string) ([]byte, error) {
	resp, err := c.do(ctx, "GET", "/draw/"+url.PathEscape(tx)+"?view="+urlEscape(view)+"&format="+urlEscape(format), "", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
