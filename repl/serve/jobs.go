package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform/trace"
	"github.com/flowq/flowq/repl"
)

// IngestRequest is POST /ingest's JSON body (or, for uploaded bundles,
// its multipart form's "request" field beside the "file" parts).
type IngestRequest struct {
	// Paths are files or directories on the server's host, absolute.
	Paths []string `json:"paths,omitempty"`
	// RPC and Blocks: fetch a block range from a node (Mode as `flowq
	// fetch`; Confirm traces a receipts-only screening's suspects).
	RPC     string `json:"rpc,omitempty"`
	Blocks  string `json:"blocks,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Confirm string `json:"confirm,omitempty"`
	// RetryFailed ingests the recorded failures again (from RPC when set).
	RetryFailed bool `json:"retry_failed,omitempty"`

	Force        bool `json:"force,omitempty"`
	Workers      int  `json:"workers,omitempty"`
	Batch        int  `json:"batch,omitempty"`
	MaxBytes     int  `json:"max_bytes,omitempty"`
	MaxDepth     int  `json:"max_depth,omitempty"`
	MaxTransfers int  `json:"max_transfers,omitempty"`
}

// JobInfo is an ingest job's state: GET /ingest/ID.
type JobInfo struct {
	ID       int            `json:"id"`
	What     string         `json:"what"`
	State    string         `json:"state"` // running, done, failed, canceled
	Started  time.Time      `json:"started"`
	Ended    *time.Time     `json:"ended,omitempty"`
	Progress string         `json:"progress"` // the progress bar's last line
	Summary  ingest.Summary `json:"summary"`
	// Report is the summary for people, as `flowq ingest` prints it.
	Report string `json:"report"`
	// Log: failure lines as they were recorded (the first 20).
	Log        []string `json:"log"`
	Failures   int      `json:"failures"`
	Incomplete bool     `json:"incomplete"` // blocks missing or failed (with Blocks)
	Error      string   `json:"error,omitempty"`
}

type job struct {
	mu     sync.Mutex
	info   JobInfo
	cancel context.CancelFunc
}

func (j *job) snapshot() JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	i := j.info
	i.Log = append([]string(nil), j.info.Log...)
	return i
}

func (s *Server) jobInfos() []JobInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]JobInfo, 0, len(s.jobs))
	for _, j := range s.jobs {
		out = append(out, j.snapshot())
	}
	return out
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) { writeJSON(w, s.jobInfos()) }

func (s *Server) jobStatus(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	s.mu.Lock()
	var j *job
	if err == nil {
		if k, found := slices.BinarySearchFunc(s.jobs, id, func(j *job, id int) int { return cmp.Compare(j.info.ID, id) }); found {
			j = s.jobs[k]
		}
	}
	last := s.lastID
	s.mu.Unlock()
	if j == nil {
		msg := fmt.Errorf("no ingest job %q", r.PathValue("id"))
		if err == nil && id >= 1 && id <= last {
			msg = fmt.Errorf("ingest job %d ended and is no longer kept (the server keeps the last %d that ended)", id, keptJobs)
		}
		httpError(w, http.StatusNotFound, msg)
		return
	}
	writeJSON(w, j.snapshot())
}

// startIngest is POST /ingest: a job, answered at once with its id.
func (s *Server) startIngest(w http.ResponseWriter, r *http.Request) {
	var req IngestRequest
	var uploads []ingest.Input
	var held int64 // the upload's bytes, counted in s.held until the job ends
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		room, code, err := s.reserveUpload(r.ContentLength)
		if err != nil {
			if code == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "10")
			}
			httpError(w, code, err)
			return
		}
		held = room
		defer func() { s.releaseUpload(held) }() // what the job does not take over
		r.Body = http.MaxBytesReader(w, r.Body, room)
		if err := r.ParseMultipartForm(64 << 20); err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				httpError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("the upload: over %d bytes, the room the server has for uploads now (%d bytes in all, flowq serve --max-upload)", room, s.maxUpload()))
				return
			}
			httpError(w, http.StatusBadRequest, fmt.Errorf("the upload: %w", err))
			return
		}
		if v := r.FormValue("request"); v != "" {
			if err := json.Unmarshal([]byte(v), &req); err != nil {
				httpError(w, http.StatusBadRequest, fmt.Errorf("the request field: %w", err))
				return
			}
		}
		var size int64
		for _, fh := range r.MultipartForm.File["file"] {
			f, err := fh.Open()
			if err != nil {
				httpError(w, http.StatusBadRequest, err)
				return
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				httpError(w, http.StatusBadRequest, err)
				return
			}
			uploads = append(uploads, ingest.BundleInput("upload:"+filepath.Base(fh.Filename), b))
			size += int64(len(b))
		}
		s.releaseUpload(held - size) // the bundles are held; the rest of the room is given back
		held = size
	} else if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("the request: %w", err))
		return
	}
	if err := checkRequest(&req); err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	if fromAnotherHost(r) {
		if err := s.checkRemote(&req); err != nil {
			httpError(w, http.StatusForbidden, err)
			return
		}
	}
	run, what, err := s.plan(req, uploads)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{cancel: cancel, info: JobInfo{What: what, State: "running", Started: time.Now().UTC()}}
	if err := s.addJob(j); err != nil {
		cancel()
		w.Header().Set("Retry-After", "10")
		httpError(w, http.StatusServiceUnavailable, err)
		return // the upload's room given back (held)
	}
	jobHeld := held
	held = 0 // the job gives it back when it ends
	opt := ingest.Options{Config: s.Cfg, Workers: req.Workers, BatchTxs: req.Batch, Force: req.Force,
		MaxBytes: req.MaxBytes, MaxDepth: req.MaxDepth, MaxTransfers: req.MaxTransfers,
		Progress: &progressWriter{j: j}}
	opt.OnFailure = func(f index.Failure) {
		j.mu.Lock()
		j.info.Failures++
		if len(j.info.Log) < 20 {
			j.info.Log = append(j.info.Log, f.String())
		}
		j.mu.Unlock()
	}
	go func() {
		defer s.releaseUpload(jobHeld)
		defer s.trimJobs() // after j.mu is let go: s.mu is taken before a job's
		s.ingest.Lock()
		defer s.ingest.Unlock()
		defer cancel()
		sum, report, incomplete, err := runGuarded(ctx, run, opt)
		now := time.Now().UTC()
		j.mu.Lock()
		defer j.mu.Unlock()
		j.info.Ended, j.info.Summary, j.info.Report, j.info.Incomplete = &now, sum, report, incomplete
		switch {
		case errors.Is(err, context.Canceled):
			j.info.State = "canceled"
		case err != nil:
			j.info.State, j.info.Error = "failed", err.Error()
		default:
			j.info.State = "done"
		}
	}()
	w.WriteHeader(http.StatusAccepted)
	writeJSON(w, j.snapshot())
}

// checkRequest refuses the options a client may not set: out of the
// ingest's ranges (ingest.Options.Check), or lifting the decoder's limits
// above their defaults, which bound what one bundle costs the server.
func checkRequest(req *IngestRequest) error {
	if err := (&ingest.Options{Workers: req.Workers, BatchTxs: req.Batch}).Check(); err != nil {
		return err
	}
	switch {
	case req.MaxBytes < 0 || req.MaxBytes > trace.DefaultMaxBytes:
		return fmt.Errorf("max_bytes %d: want 1 to %d (0: that default)", req.MaxBytes, trace.DefaultMaxBytes)
	case req.MaxTransfers < 0 || req.MaxTransfers > trace.DefaultMaxTransfers:
		return fmt.Errorf("max_transfers %d: want 1 to %d (0: that default)", req.MaxTransfers, trace.DefaultMaxTransfers)
	case req.MaxDepth < 0:
		return fmt.Errorf("max_depth %d: want 0 or more (0, or more than 1025: the EVM's 1025)", req.MaxDepth)
	}
	return nil
}

// fromAnotherHost reports whether a request comes from another host than
// the server's (its peer not a loopback address). Behind a proxy on the
// same host every request looks local.
func fromAnotherHost(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return true
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// checkRemote refuses what a client on another host may not make the
// server do: read paths of the server's host outside IngestRoot (or any,
// without one), or connect to a node not in AllowRPC. A client on the
// server's host may do both: it could read those files and reach those
// nodes itself.
func (s *Server) checkRemote(req *IngestRequest) error {
	if len(req.Paths) > 0 {
		if s.IngestRoot == "" {
			return errors.New("paths on the server's host are taken from clients on that host only: upload the bundles, or start flowq serve with --ingest-root DIR to take paths under DIR from others")
		}
		root, err := filepath.EvalSymlinks(s.IngestRoot)
		if err != nil {
			return fmt.Errorf("the server's --ingest-root: %w", err)
		}
		for _, p := range req.Paths {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fmt.Errorf("path %q: not under the server's --ingest-root %s", p, s.IngestRoot)
			}
			if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fmt.Errorf("path %q: not under the server's --ingest-root %s", p, s.IngestRoot)
			}
		}
	}
	if req.RPC != "" && !slices.Contains(s.AllowRPC, strings.TrimSuffix(req.RPC, "/")) {
		return fmt.Errorf("node %s: a client on another host may name only the nodes flowq serve was started with (--allow-rpc URL)", fetch.RedactURL(req.RPC))
	}
	return nil
}

// defaultMaxUpload is the bytes of uploaded bundles a server holds at
// once (Server.MaxUpload): the ingest's limit of one input.
const defaultMaxUpload = trace.DefaultMaxBytes

func (s *Server) maxUpload() int64 { return orDefault(s.MaxUpload, defaultMaxUpload) }

// reserveUpload takes room for an upload of n bytes (n < 0: unknown)
// among the bytes of uploads the server holds (those read and those of
// jobs not yet ended): all the room left when n is unknown. An upload
// that can never fit is refused with 413, one that does not fit now with
// 503.
func (s *Server) reserveUpload(n int64) (int64, int, error) {
	limit := s.maxUpload()
	if n > limit {
		return 0, http.StatusRequestEntityTooLarge, fmt.Errorf("the upload: %d bytes, over the %d bytes the server holds for uploads (flowq serve --max-upload)", n, limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	room := limit - s.held
	if room <= 0 || n > room {
		return 0, http.StatusServiceUnavailable, fmt.Errorf("the upload: the server holds %d bytes of uploads not yet ingested, of the %d it takes (flowq serve --max-upload): send it again when those jobs end", s.held, limit)
	}
	if n >= 0 {
		room = n
	}
	s.held += room
	return room, 0, nil
}

// releaseUpload gives back n bytes of upload room.
func (s *Server) releaseUpload(n int64) {
	if n != 0 {
		s.mu.Lock()
		s.held -= n
		s.mu.Unlock()
	}
}

// Bounds of the jobs a server holds: those not ended (one runs, the others
// wait for it, each a goroutine and its request) and those ended, kept
// for GET /ingest/ID. Without them every POST /ingest stayed in memory
// for good, and a waiting goroutine each.
const (
	maxActiveJobs = 64
	keptJobs      = 100
)

// addJob gives j the next id and keeps it, unless maxActiveJobs have not
// ended.
func (s *Server) addJob(j *job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	active := 0
	for _, o := range s.jobs {
		if !o.ended() {
			active++
		}
	}
	if active >= maxActiveJobs {
		return fmt.Errorf("%d ingest jobs are running or waiting, the most this server holds: send it again when one ends", active)
	}
	s.lastID++
	j.info.ID = s.lastID
	s.jobs = append(s.jobs, j)
	return nil
}

// trimJobs lets go of the oldest ended jobs beyond keptJobs.
func (s *Server) trimJobs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ended := 0
	for _, o := range s.jobs {
		if o.ended() {
			ended++
		}
	}
	drop := ended - keptJobs
	s.jobs = slices.DeleteFunc(s.jobs, func(o *job) bool {
		if drop > 0 && o.ended() {
			drop--
			return true
		}
		return false
	})
}

func (j *job) ended() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.info.Ended != nil
}

// runGuarded runs a job, a panic in it (a bug, a damaged index) its
// error: the job's goroutine is the server's, and a panic there ended it.
func runGuarded(ctx context.Context, run ingestFunc, opt ingest.Options) (sum ingest.Summary, report string, incomplete bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %s", repl.PanicText(p))
		}
	}()
	return run(ctx, opt)
}

type ingestFunc func(ctx context.Context, opt ingest.Options) (ingest.Summary, string, bool, error)

// plan checks a request and returns what the job runs.
func (s *Server) plan(req IngestRequest, uploads []ingest.Input) (ingestFunc, string, error) {
	path := s.Ix.Path()
	switch {
	case req.Blocks != "":
		if req.RPC == "" || len(req.Paths) > 0 || len(uploads) > 0 || req.RetryFailed {
			return nil, "", errors.New("blocks needs rpc, and takes no paths, uploads or retry_failed")
		}
		from, to, err := fetch.ParseRange(req.Blocks)
		if err != nil {
			return nil, "", err
		}
		mode, err := fetch.ParseMode(orDefault(req.Mode, "geth"))
		if err != nil {
			return nil, "", err
		}
		var confirm fetch.Mode
		if req.Confirm != "" {
			c := strings.ToLower(req.Confirm)
			if c == "traces" {
				c = string(fetch.Geth)
			}
			if confirm, err = fetch.ParseMode(c); err != nil || confirm == fetch.Receipts || mode != fetch.Receipts {
				return nil, "", fmt.Errorf("confirm %q: want traces (geth), flat or parity, with mode receipts", req.Confirm)
			}
		}
		return func(ctx context.Context, opt ingest.Options) (ingest.Summary, string, bool, error) {
			c, err := fetch.Dial(ctx, req.RPC, fetch.Options{Mode: mode, MaxResponseBytes: opt.MaxBytes})
			if err != nil {
				return ingest.Summary{}, "", false, err
			}
			defer c.Close()
			if confirm == "" {
				rep, err := c.IngestBlocks(ctx, s.Ix, from, to, opt)
				return rep.Summary, rep.String() + " into " + path, !rep.Complete(), err
			}
			tc, err := fetch.Dial(ctx, req.RPC, fetch.Options{Mode: confirm, MaxResponseBytes: opt.MaxBytes})
			if err != nil {
				return ingest.Summary{}, "", false, err
			}
			defer tc.Close()
			// Screened and confirmed a window of blocks at a time, each
			// suspect's trace fetched alone beside the receipt the
			// screening kept (as flowq ingest --confirm).
			rep, crep, err := fetch.ScreenConfirm(ctx, c, tc, s.Ix, from, to, 0, opt)
			sum := rep.Summary
			sum.Stored += crep.Stored
			sum.Failed += crep.Failed
			return sum, rep.String() + " into " + path + "\n" + crep.String(), !rep.Complete() || len(crep.Missing) > 0 || len(crep.Failures) > 0, err
		}, "blocks " + req.Blocks + " from " + req.RPC, nil
	case req.RetryFailed:
		if len(req.Paths) > 0 || len(uploads) > 0 {
			return nil, "", errors.New("retry_failed takes no paths or uploads")
		}
		return func(ctx context.Context, opt ingest.Options) (ingest.Summary, string, bool, error) {
			var sum ingest.Summary
			var err error
			if req.RPC != "" {
				c, derr := fetch.Dial(ctx, req.RPC, fetch.Options{MaxResponseBytes: opt.MaxBytes})
				if derr != nil {
					return sum, "", false, derr
				}
				defer c.Close()
				sum, err = c.RetryFailed(ctx, s.Ix, opt)
			} else {
				sum, err = ingest.RetryFailed(ctx, s.Ix, opt, nil)
			}
			return sum, sum.String() + " into " + path, false, err
		}, "retry failed", nil
	}
	for _, p := range req.Paths {
		if !filepath.IsAbs(p) {
			return nil, "", fmt.Errorf("path %q: give absolute paths (the server's working directory is not the client's)", p)
		}
	}
	inputs, err := ingest.Files(req.Paths...)
	if err != nil {
		return nil, "", err
	}
	inputs = append(inputs, uploads...)
	if len(inputs) == 0 {
		return nil, "", errors.New("nothing to ingest: give paths, upload files, or blocks with rpc, or retry_failed")
	}
	what := fmt.Sprintf("%d inputs", len(inputs))
	if len(req.Paths) > 0 {
		what = strings.Join(req.Paths, " ")
		if len(uploads) > 0 {
			what += fmt.Sprintf(" and %d uploads", len(uploads))
		}
	}
	return func(ctx context.Context, opt ingest.Options) (ingest.Summary, string, bool, error) {
		sum, err := ingest.Ingest(ctx, s.Ix, inputs, opt)
		return sum, sum.String() + " into " + path, false, err
	}, what, nil
}

// orDefault is v when set (above its type's zero: a non-empty string,
// a positive number), else d.
func orDefault[T cmp.Ordered](v, d T) T {
	var zero T
	if v > zero {
		return v
	}
	return d
}

// progressWriter keeps the progress bar's last line as the job's
// progress.
type progressWriter struct {
	j    *job
	line []byte
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

func (p *progressWriter) Write(b []byte) (int, error) {
	for _, c := range b {
		if c == '\r' || c == '\n' {
			if t := strings.TrimSpace(ansi.ReplaceAllString(string(p.line), "")); t != "" {
				p.j.mu.Lock()
				p.j.info.Progress = t
				p.j.mu.Unlock()
			}
			p.line = p.line[:0]
			continue
		}
		p.line = append(p.line, c)
	}
	return len(b), nil
}
