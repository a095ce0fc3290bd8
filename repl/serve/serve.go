// Package serve is `flowq serve`: one process owns an index and serves
// it over HTTP (loopback by default) to the other flowq commands and to a
// web page. Queries stream their results as the CLI prints them (JSON
// lines, tables, CSV); ingest jobs (files, uploaded bundles, block ranges
// from a node) run beside them, and every query reads a consistent
// snapshot (each access path reads in one Badger read transaction, and
// an ingest commits a transaction's record and keys together). The
// server keeps a file in the index directory (InfoFile) so that clients
// find it; Find tells a live server from a stale file.
//
// Layering: serve imports index, planner and repl; nothing below imports
// it (cmd/flowq does).
package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/export"
	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/repl"
)

// Trailer names: a streamed answer's outcome comes after its body.
const (
	trailerError  = "Flowq-Error"  // base64 of the error's text; empty when none
	trailerStatus = "Flowq-Status" // ok, error, canceled
	trailerCount  = "Flowq-Count"  // export: transactions written
)

// Server serves one open index.
type Server struct {
	Ix      *index.Index
	Cfg     *normalform.Config
	Version string
	// Explorer is the block explorer's URL for a transaction, with {tx}
	// where its hash goes (and {addr}, {block} in AddrExplorer,
	// BlockExplorer); the web page links to them. Empty: no links.
	Explorer, AddrExplorer, BlockExplorer string
	// Render lays DOT out as SVG (repl.RenderGraphviz when nil).
	Render func(ctx context.Context, dot string, w io.Writer) error
	// AllowHosts are names, beside IP addresses, localhost and this
	// machine's host name, that requests may address the server by (their
	// Host header): a guard against DNS rebinding (guard.go).
	AllowHosts []string
	// DrawTimeout bounds the layout of one picture by Graphviz (GET
	// /draw's svg and png; 0: 30s), MaxDrawEdges the edges of a picture
	// laid out (0: 2,000). Graphviz's time grows fast with a graph's
	// density (500 transfers among 166 addresses ran over two minutes,
	// 5,000 among 1,666 took 2 GB in that time), and the web page asks for a picture of every
	// transaction it shows: a picture over either bound is refused, its
	// DOT text still given (format=dot). At most one picture per CPU is
	// laid out at a time; a request waits for a turn within its timeout.
	DrawTimeout  time.Duration
	MaxDrawEdges int
	// QueryTimeout and MaxRows are the most a statement may run and
	// return (0: the planner's defaults, 10 minutes and a million rows): a
	// client's query asks for as much or less, never more or none (a
	// table's rows are held to align them). The web page's statements
	// return at most pageRows.
	QueryTimeout time.Duration
	MaxRows      int
	// IngestRoot is the directory under which a client on another host
	// may name paths of the server's host to ingest (empty: none; a
	// client on the server's host may name any), and AllowRPC the node
	// URLs such a client may name (a client on the server's host may name
	// any).
	IngestRoot string
	AllowRPC   []string
	// MaxUpload bounds the bytes of uploaded bundles (POST /ingest's
	// multipart files) held at once, read and waiting for their job or
	// being ingested (0: 1 GiB, the ingest's limit of one input).
	MaxUpload int64

	started time.Time
	dir     string
	http    *http.Server

	mu      sync.Mutex
	jobs    []*job        // by id: those not ended, and the last keptJobs that ended (addJob)
	lastID  int           // the last job's id
	held    int64         // bytes of uploads held (reserveUpload)
	turns   chan struct{} // a place per picture being laid out (draw)
	holding chan struct{} // a place per statement holding its rows (holdTurn)
	ingest  sync.Mutex    // one ingest job at a time: the index has one writer
}

// New makes a server for an index open for writing.
func New(ix *index.Index, cfg *normalform.Config, version string) *Server {
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	return &Server{Ix: ix, Cfg: cfg, Version: version, started: time.Now(),
		turns: make(chan struct{}, runtime.NumCPU()), holding: make(chan struct{}, runtime.NumCPU())}
}

// Listen listens on addr and writes the server file into the index
// directory. Serve then answers; Close stops the server and removes the
// file.
func (s *Server) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s.dir, _ = filepath.Abs(s.Ix.Path())
	host, _ := os.Hostname()
	info := &Info{Addr: ln.Addr().String(), Pid: os.Getpid(), Host: host, Since: s.started.UTC().Truncate(time.Second),
		Index: s.dir, Version: s.Version}
	if err := writeInfo(s.dir, info); err != nil {
		ln.Close()
		return nil, fmt.Errorf("writing the server file into %s: %w", s.dir, err)
	}
	return ln, nil
}

// Serve answers on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops answering (waiting up to ctx for the answers under way),
// cancels the ingest jobs and removes the server file. The index stays
// open: its owner closes it.
func (s *Server) Close(ctx context.Context) error {
	if s.dir != "" {
		removeInfo(s.dir)
	}
	s.mu.Lock()
	for _, j := range s.jobs {
		j.cancel()
	}
	s.mu.Unlock()
	var err error
	if s.http != nil {
		err = s.http.Shutdown(ctx)
	}
	s.ingest.Lock() // the running job has stopped writing
	s.ingest.Unlock()
	return err
}

// Handler is the server's HTTP API and the web page, behind the guards
// against requests a page on another site makes a browser send
// (guard.go).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", s.status)
	mux.HandleFunc("POST /query", s.query)
	mux.HandleFunc("POST /api/rows", s.rows)
	mux.HandleFunc("GET /api/complete", s.complete)
	mux.HandleFunc("GET /tx/{hash}", s.tx)
	mux.HandleFunc("GET /draw/{hash}", s.draw)
	mux.HandleFunc("POST /ingest", s.startIngest)
	mux.HandleFunc("GET /ingest", s.listJobs)
	mux.HandleFunc("GET /ingest/{id}", s.jobStatus)
	mux.HandleFunc("GET /failures", s.failures)
	mux.HandleFunc("GET /export", s.export)
	mux.Handle("GET /", webHandler())
	return newHostGuard(s.AllowHosts, crossSite(recovering(mux)))
}

// recovering answers a request whose handler panicked (a bug, a damaged
// index, a fault of a memory-mapped file) with a 500 naming it, instead
// of net/http's goroutine dump in the server's log; an answer already
// streaming is cut where it was.
func recovering(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				httpError(w, http.StatusInternalServerError, fmt.Errorf("internal error serving %s %s: %s", r.Method, r.URL.Path, repl.PanicText(p)))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// Status is GET /status.
type Status struct {
	Index   string    `json:"index"`
	Pid     int       `json:"pid"`
	Since   time.Time `json:"since"`
	Version string    `json:"version"`
	ChainID uint64    `json:"chain_id"`
	Txs     int       `json:"txs"`
	Jobs    []JobInfo `json:"jobs"`
	// Explorer links for the web page.
	Explorer      string `json:"explorer"`
	AddrExplorer  string `json:"addr_explorer"`
	BlockExplorer string `json:"block_explorer"`
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	n, err := s.Ix.Count(r.Context())
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	dir, _ := filepath.Abs(s.Ix.Path())
	st := Status{Index: dir, Pid: os.Getpid(), Since: s.started.UTC(), Version: s.Version, ChainID: s.Cfg.ChainID, Txs: n,
		Jobs: s.jobInfos(), Explorer: s.Explorer, AddrExplorer: s.AddrExplorer, BlockExplorer: s.BlockExplorer}
	writeJSON(w, st)
}

// QueryRequest is what POST /query takes in its URL's query string; the
// body is the statements.
type QueryRequest struct {
	Format  string // table, json (the default), csv
	File    string // the name errors give the statements (<query>)
	Line    int    // where the statements start in File (1)
	Column  int
	Timer   bool
	Echo    bool
	Timeout time.Duration // 0: the planner's default; negative: none
	MaxRows int
}

func (q QueryRequest) values() string {
	v := make([]string, 0, 8)
	add := func(k, val string) { v = append(v, k+"="+urlEscape(val)) }
	add("format", q.Format)
	add("file", q.File)
	add("line", strconv.Itoa(q.Line))
	add("col", strconv.Itoa(q.Column))
	add("timer", strconv.FormatBool(q.Timer))
	add("echo", strconv.FormatBool(q.Echo))
	add("timeout", q.Timeout.String())
	add("max_rows", strconv.Itoa(q.MaxRows))
	return strings.Join(v, "&")
}

func parseQueryRequest(r *http.Request) (QueryRequest, error) {
	v := r.URL.Query()
	q := QueryRequest{Format: v.Get("format"), File: v.Get("file"), Line: 1, Column: 1}
	if q.Format == "" {
		q.Format = "json"
	}
	if !slicesContains(repl.Modes, q.Format) {
		return q, fmt.Errorf("format %q: want one of %s", q.Format, strings.Join(repl.Modes, ", "))
	}
	if q.File == "" {
		q.File = "<query>"
	}
	var err error
	num := func(name string, dst *int) {
		if s := v.Get(name); s != "" && err == nil {
			if *dst, err = strconv.Atoi(s); err != nil {
				err = fmt.Errorf("%s %q: not a number", name, s)
			}
		}
	}
	num("line", &q.Line)
	num("col", &q.Column)
	num("max_rows", &q.MaxRows)
	q.Timer = v.Get("timer") == "true"
	q.Echo = v.Get("echo") == "true"
	if s := v.Get("timeout"); s != "" && err == nil {
		if q.Timeout, err = time.ParseDuration(s); err != nil {
			err = fmt.Errorf("timeout %q: %v", s, err)
		}
	}
	if q.Line < 1 || q.Column < 1 {
		err = fmt.Errorf("line and col start at 1")
	}
	return q, err
}

// query is POST /query: the statements of the body, their results as
// `flowq query --format F` prints them, streamed; the outcome in the
// trailers.
func (s *Server) query(w http.ResponseWriter, r *http.Request) {
	q, err := parseQueryRequest(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	src, err := ingest.ReadAll(r.Body, repl.MaxScriptBytes)
	if err != nil {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("the statements: %w", err))
		return
	}
	if !repl.Streams(q.Format) { // a table: its rows are held
		if !s.holdTurn(r.Context()) {
			return // the client went
		}
		defer func() { <-s.holding }()
	}
	w.Header().Set("Trailer", trailerError+", "+trailerStatus)
	switch q.Format {
	case "json":
		w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	case "csv":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(http.StatusOK)
	out := &flusher{w: w}
	sess := &repl.Session{Cfg: s.Cfg, Src: s.Ix, Out: out, Mode: q.Format, Timer: q.Timer, Echo: q.Echo,
		Timeout: ceiling(q.Timeout, s.QueryTimeout, planner.DefaultTimeout), MaxRows: ceiling(q.MaxRows, s.MaxRows, planner.DefaultMaxRows)}
	err = sess.ExecAt(r.Context(), q.File, string(src), lang.Pos{Line: q.Line, Column: q.Column})
	out.Flush()
	setOutcome(w, err)
}

// setOutcome sets a streamed answer's trailers.
func setOutcome(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
		w.Header().Set(trailerStatus, "ok")
	case errors.Is(err, context.Canceled):
		w.Header().Set(trailerStatus, "canceled")
	default:
		w.Header().Set(trailerStatus, "error")
		w.Header().Set(trailerError, base64.StdEncoding.EncodeToString([]byte(err.Error())))
	}
}

// flusher writes through to the client as the rows come.
type flusher struct {
	w http.ResponseWriter
}

func (f *flusher) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	f.Flush()
	return n, err
}

func (f *flusher) Flush() {
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// rows is POST /api/rows, the web page's query: JSON lines, one object
// each: {"columns": [...]} before a statement's rows, {"row": [[value,
// human], ...]}, {"text": ...} for show's text, {"error": ..., "line",
// "col", "caret"} and {"done": n, "ms": t}.
func (s *Server) rows(w http.ResponseWriter, r *http.Request) {
	src, err := ingest.ReadAll(r.Body, lang.MaxQueryBytes)
	if err != nil {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("the statements: %w", err))
		return
	}
	if !s.holdTurn(r.Context()) { // the page's rows are held
		return
	}
	defer func() { <-s.holding }()
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	out := &flusher{w: w}
	enc := json.NewEncoder(out)
	start := time.Now()
	sts, err := lang.Parse("q", string(src))
	if err != nil {
		enc.Encode(errorObject(err))
		return
	}
	n := 0
	for _, st := range sts {
		pl := &planner.Planner{Cfg: s.Cfg, Src: s.Ix}
		q, err := pl.Build(st)
		if err != nil {
			enc.Encode(errorObject(err))
			return
		}
		if q.Explain {
			enc.Encode(map[string]any{"text": planner.Explain(q.Plan)})
			continue
		}
		var cols []string
		var buf []planner.Row
		x := &planner.Executor{Src: s.Ix, Cfg: s.Cfg, Timeout: ceiling(0, s.QueryTimeout, planner.DefaultTimeout),
			MaxRows: min(pageRows, ceiling(0, s.MaxRows, planner.DefaultMaxRows))}
		err = x.Run(r.Context(), q, func(row planner.Row) error {
			buf = append(buf, slicesClone(row))
			return nil
		})
		planner.ShortenAddresses(buf)
		for _, row := range buf {
			n++
			if len(row) > 0 && row[len(row)-1].Name == "text" {
				enc.Encode(map[string]any{"tx": row.Get("tx"), "text": row[len(row)-1].Value})
				continue
			}
			if cols == nil {
				for _, f := range row {
					cols = append(cols, f.Name)
				}
				enc.Encode(map[string]any{"columns": cols})
			}
			cells := make([][2]string, len(row))
			for i, f := range row {
				cells[i] = [2]string{f.Value, f.Human}
			}
			enc.Encode(map[string]any{"row": cells})
		}
		if err != nil {
			pos := st.Pos()
			enc.Encode(map[string]any{"error": err.Error(), "line": pos.Line, "col": pos.Column})
			return
		}
	}
	enc.Encode(map[string]any{"done": n, "ms": float64(time.Since(start).Microseconds()) / 1000})
}

// holdTurn waits for one of the turns of the statements that hold their
// rows (a table's, the page's: up to MaxRows each, about a kilobyte a
// row), one per CPU, so that what they hold together is bounded; false
// when ctx ends first. Streamed statements (JSON lines, CSV) hold no
// rows and take no turn. The caller gives the turn back (<-s.holding).
func (s *Server) holdTurn(ctx context.Context) bool {
	select {
	case s.holding <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// pageRows bounds the rows of one of the web page's statements: they
// are held in memory to shorten their addresses together, and a browser
// shows no more usefully.
const pageRows = 10_000

// ceiling is a client's limit (v; 0: the default, negative: none) held
// to the server's (max; 0: def): a client may ask for less, not more.
func ceiling[T int | time.Duration](v, max, def T) T {
	if max <= 0 {
		max = def
	}
	if v <= 0 || v > max {
		return max
	}
	return v
}

// errorObject is a parse or plan error for the web page: its text, and
// where, when it says.
func errorObject(err error) map[string]any {
	o := map[string]any{"error": err.Error()}
	var one *lang.Error
	var list lang.ErrorList
	switch {
	case errors.As(err, &list) && len(list) > 0:
		o["line"], o["col"] = list[0].Pos.Line, list[0].Pos.Column
		return o
	case errors.As(err, &one):
		o["line"], o["col"] = one.Pos.Line, one.Pos.Column
		return o
	}
	// "q:L:C: message": the position from the text.
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "q:"); ok {
		parts := strings.SplitN(rest, ":", 3)
		if len(parts) == 3 {
			if l, err1 := strconv.Atoi(parts[0]); err1 == nil {
				if c, err2 := strconv.Atoi(parts[1]); err2 == nil {
					o["line"], o["col"] = l, c
				}
			}
		}
	}
	return o
}

// complete is GET /api/complete?text=...: the REPL's completion for
// the text before the cursor.
func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	prefix, cands := repl.Complete(s.Cfg, r.URL.Query().Get("text"))
	for i := range cands {
		cands[i] = strings.TrimRight(prefix+cands[i], " ")
	}
	writeJSON(w, map[string]any{"prefix": prefix, "words": cands})
}

// record reads a transaction of the path's {hash}.
func (s *Server) record(w http.ResponseWriter, r *http.Request) (*normalform.Analysis, *index.Record, bool) {
	h, err := normalform.ParseHash(r.PathValue("hash"))
	if err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("transaction hash %q: %v", r.PathValue("hash"), err))
		return nil, nil, false
	}
	rec, err := s.Ix.Get(h)
	if errors.Is(err, index.ErrNotFound) {
		httpError(w, http.StatusNotFound, fmt.Errorf("tx %s is not in the index", h.Hex()))
		return nil, nil, false
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return nil, nil, false
	}
	a, err := rec.Analysis()
	if err != nil {
		httpError(w, http.StatusInternalServerError, fmt.Errorf("tx %s: the stored normal form does not decode: %w", h.Hex(), err))
		return nil, nil, false
	}
	return a, rec, true
}

// tx is GET /tx/HASH: the structured analysis (as `flowq inspect
// --format json`), its text, its rewrite steps and its bot.
func (s *Server) tx(w http.ResponseWriter, r *http.Request) {
	a, rec, ok := s.record(w, r)
	if !ok {
		return
	}
	js, err := show.MarshalAnalysis(s.Cfg, a, true)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	cfg := s.Cfg.ForAnalysis(a)
	var text strings.Builder
	show.WriteAnalysis(cfg, &text, a, false)
	writeJSON(w, map[string]any{
		"analysis": json.RawMessage(js),
		"text":     text.String(),
		"steps":    cfg.StepTexts(a),
		"bot":      normalform.AddrKey(rec.To),
		"sender":   normalform.AddrKey(rec.From),
	})
}

// draw is GET /draw/HASH?view=graph|tree&format=svg|dot.
func (s *Server) draw(w http.ResponseWriter, r *http.Request) {
	view, format := r.URL.Query().Get("view"), r.URL.Query().Get("format")
	if view == "" {
		view = "graph"
	}
	if format == "" {
		format = "svg"
	}
	if view != "graph" && view != "tree" || format != "svg" && format != "dot" && format != "png" {
		httpError(w, http.StatusBadRequest, fmt.Errorf("view must be graph or tree and format dot, svg or png (got %q, %q)", view, format))
		return
	}
	a, _, ok := s.record(w, r)
	if !ok {
		return
	}
	dot := repl.DOT(s.Cfg, a, view)
	if format == "dot" {
		w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
		io.WriteString(w, dot)
		return
	}
	edges := dotEdges(dot)
	if limit := orDefault(s.MaxDrawEdges, defaultMaxDrawEdges); edges > limit {
		httpError(w, http.StatusUnprocessableEntity, fmt.Errorf("the %s of tx %s has %d edges, over the %d this server lays out (flowq serve --draw-edges): its DOT text is format=dot", view, r.PathValue("hash"), edges, limit))
		return
	}
	timeout := orDefault(s.DrawTimeout, defaultDrawTimeout)
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	select {
	case s.turns <- struct{}{}:
		defer func() { <-s.turns }()
	case <-ctx.Done():
		w.Header().Set("Retry-After", "10")
		httpError(w, http.StatusServiceUnavailable, fmt.Errorf("%d pictures are being laid out, one per CPU, and none ended within %s: ask again, or take format=dot", cap(s.turns), timeout))
		return
	}
	var img bytes.Buffer
	var err error
	if format == "svg" && s.Render != nil {
		err = s.Render(ctx, dot, &img)
	} else {
		err = repl.RenderGraphviz(ctx, dot, format, &img)
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
			err = fmt.Errorf("Graphviz did not lay out the %s of tx %s (%d edges) within %s (flowq serve --draw-timeout), and was stopped: its DOT text is format=dot", view, r.PathValue("hash"), edges, timeout)
		}
		httpError(w, http.StatusServiceUnavailable, err)
		return
	}
	if format == "svg" {
		w.Header().Set("Content-Type", "image/svg+xml")
	} else {
		w.Header().Set("Content-Type", "image/png")
	}
	w.Write(img.Bytes())
}

// Bounds of a picture laid out (Server.DrawTimeout, MaxDrawEdges).
const (
	defaultDrawTimeout  = 30 * time.Second
	defaultMaxDrawEdges = 2000
)

// dotEdges counts the edges of DOT text: the "->" outside quoted
// strings (a label, such as a token's symbol, may hold one).
func dotEdges(dot string) int {
	n := 0
	quoted := false
	for i := 0; i < len(dot); i++ {
		switch c := dot[i]; {
		case quoted && c == '\\':
			i++ // the escaped byte
		case c == '"':
			quoted = !quoted
		case !quoted && c == '-' && i+1 < len(dot) && dot[i+1] == '>':
			n++
			i++
		}
	}
	return n
}

// failures is GET /failures: the recorded failures, a line each.
func (s *Server) failures(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Trailer", trailerError+", "+trailerStatus+", "+trailerCount)
	out := &flusher{w: w}
	n := 0
	err := s.Ix.Failures(r.Context(), func(f index.Failure) error {
		n++
		_, err := fmt.Fprintln(out, f)
		return err
	})
	w.Header().Set(trailerCount, strconv.Itoa(n))
	setOutcome(w, err)
}

// export is GET /export?format=csv|jsonl&blocks=A..B.
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	f, err := export.ParseFormat(r.URL.Query().Get("format"))
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	rng := index.AllBlocks
	if b := r.URL.Query().Get("blocks"); b != "" {
		from, to, err := fetch.ParseRange(b)
		if err != nil {
			httpError(w, http.StatusBadRequest, err)
			return
		}
		rng = index.Blocks(from, to)
	}
	w.Header().Set("Trailer", trailerError+", "+trailerStatus+", "+trailerCount)
	out := &flusher{w: w}
	n, err := export.Export(r.Context(), s.Ix, out, f, rng)
	w.Header().Set(trailerCount, strconv.Itoa(n))
	setOutcome(w, err)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	b, err := json.Marshal(v)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	w.Write(append(b, '\n'))
}

// httpError answers with {"error": text}.
func httpError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Write(append(b, '\n'))
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func slicesClone(r planner.Row) planner.Row { return append(planner.Row(nil), r...) }
