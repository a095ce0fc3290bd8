package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/repl"
	"github.com/flowq/flowq/repl/serve"
)

const serveUsage = `usage: flowq serve [--index DIR] [--listen ADDR] [--explorer URL] [flags]

Opens the index for writing and serves it over HTTP, on loopback by
default: queries (results streamed as JSON lines, tables or CSV), ingest
jobs (files, uploaded bundles, --rpc block ranges) with their progress,
transactions and their pictures, the status, and a web page at /. While
it runs, flowq query, run, repl, ingest, export and draw given the same
index find it (the file flowq.server it keeps in the index directory) and
become its clients; queries read a consistent snapshot while an ingest
writes. Ctrl-C (or SIGTERM) stops it and removes the file; a file left by
a server that was killed is recognised as stale (its process is gone, or
it does not answer) and ignored.

Exit status: 0 after a clean stop, 1 when the index cannot be opened or
the address cannot be listened on, 2 for a usage error.

flags:
`

// defaultListen is where flowq serve listens unless told: loopback only.
const defaultListen = "127.0.0.1:8642"

// envNoServer, set to anything but "", keeps the commands from looking
// for a server: they open the index themselves.
const envNoServer = "FLOWQ_NO_SERVER"

// serveCmd is `flowq serve`.
func serveCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("serve", serveUsage, stderr)
	var cf chainFlags
	cf.register(fs)
	dir := fs.String("index", "", indexFlagHelp)
	listen := fs.String("listen", defaultListen, "address to listen on (host:port; port 0 picks one); a non-loopback host serves the index to the network")
	explorer := fs.String("explorer", "https://etherscan.io/tx/{tx}", "the web page's link for a transaction ({tx} is its hash; empty: no links)")
	addrExplorer := fs.String("explorer-address", "https://etherscan.io/address/{addr}", "the web page's link for an address ({addr})")
	blockExplorer := fs.String("explorer-block", "https://etherscan.io/block/{block}", "the web page's link for a block ({block})")
	drawTimeout := fs.Duration("draw-timeout", 30*time.Second, "longest layout of one picture by Graphviz (GET /draw, the page's pictures); one over it is stopped and refused, its DOT text still given")
	drawEdges := fs.Int("draw-edges", 2000, "most edges of a picture laid out by Graphviz; a larger one is refused, its DOT text still given")
	queryTimeout := fs.Duration("query-timeout", planner.DefaultTimeout, "the longest a client's statement may run (a client may ask for less)")
	maxRows := fs.Int("max-rows", planner.DefaultMaxRows, "the most rows a client's statement may return (a client may ask for fewer)")
	maxUpload := fs.Int64("max-upload", 0, "bytes of uploaded bundles (POST /ingest's files) the server holds at once, read and not yet ingested (0: 1 GiB); an upload over the room left is refused")
	ingestRoot := fs.String("ingest-root", "", "the directory under which clients on other hosts may name files of this host to ingest (default: none; clients on this host may name any)")
	allowRPC := fs.String("allow-rpc", "", "comma-separated node URLs clients on other hosts may ask the server to fetch from (clients on this host may name any)")
	allowHost := fs.String("allow-host", "", "comma-separated names the server may be addressed by, beside IP addresses, localhost and this machine's name (a guard against DNS rebinding: requests to other names are refused)")
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "serve")
	if len(rest) > 0 {
		return usageErr("unexpected argument %q", rest[0])
	}
	if *maxUpload < 0 {
		return usageErr("--max-upload %d: want 0 (1 GiB) or more", *maxUpload)
	}
	if *drawTimeout <= 0 || *drawEdges <= 0 || *queryTimeout <= 0 || *maxRows <= 0 {
		return usageErr("--draw-timeout, --draw-edges, --query-timeout and --max-rows must be positive")
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return usageErr("--listen %q: want host:port (%v)", *listen, err)
	}
	cfg, err := cf.config(lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	path, err := indexDir(*dir, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	if c, err := serve.Find(path, 2*time.Second); c != nil {
		fmt.Fprintf(stderr, "flowq serve: the index %s is already served by %s\n", path, c.Info)
		return 1
	} else if err != nil {
		fmt.Fprintf(stderr, "flowq serve: %v\n", err)
	}
	ix, err := openIndex(path)
	if err != nil {
		fmt.Fprintf(stderr, "flowq serve: %v\n", err)
		return 1
	}
	defer ix.Close()
	withTokens(cfg, ix, "flowq serve", stderr)
	srv := serve.New(ix, cfg, version)
	srv.Explorer, srv.AddrExplorer, srv.BlockExplorer = *explorer, *addrExplorer, *blockExplorer
	srv.MaxUpload, srv.DrawTimeout, srv.MaxDrawEdges = *maxUpload, *drawTimeout, *drawEdges
	srv.QueryTimeout, srv.MaxRows = *queryTimeout, *maxRows
	if *ingestRoot != "" {
		if srv.IngestRoot, err = filepath.Abs(*ingestRoot); err != nil {
			return usageErr("--ingest-root %q: %v", *ingestRoot, err)
		}
	}
	for _, u := range strings.Split(*allowRPC, ",") {
		if u = strings.TrimSpace(u); u != "" {
			srv.AllowRPC = append(srv.AllowRPC, strings.TrimSuffix(u, "/"))
		}
	}
	for _, h := range strings.Split(*allowHost, ",") {
		if h = strings.TrimSpace(h); h != "" {
			srv.AllowHosts = append(srv.AllowHosts, h)
		}
	}
	ln, err := srv.Listen(*listen)
	if err != nil {
		fmt.Fprintf(stderr, "flowq serve: %v\n", err)
		return 1
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(stderr, "flowq serve: warning: listening on %s, not loopback: anyone who reaches it can query and ingest uploads (files of this host and nodes only as --ingest-root and --allow-rpc allow)\n", ln.Addr())
	}
	abs, _ := filepath.Abs(path)
	fmt.Fprintf(stdout, "flowq serve: serving the index %s at http://%s (pid %d); Ctrl-C stops\n", abs, ln.Addr(), os.Getpid())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Close(sctx)
		cancel()
		<-done
	}
	srv.Close(context.Background()) // removes the server file (again: harmless)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(stderr, "flowq serve: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr, "flowq serve: stopped")
	return 0
}

// serverFor is a client of the server holding the index at path, or nil
// when none does (or FLOWQ_NO_SERVER is set). A stale server file is
// said on stderr as cmd, and ignored.
func serverFor(path, cmd string, stderr io.Writer, lookupEnv func(string) (string, bool)) *serve.Client {
	if v, _ := lookupEnv(envNoServer); v != "" {
		return nil
	}
	c, err := serve.Find(path, 2*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return nil
	}
	return c
}

// remoteExec runs a session's statements on a server: what
// repl.Session.Remote calls.
func remoteExec(c *serve.Client) func(ctx context.Context, s *repl.Session, file, src string, at lang.Pos) error {
	return func(ctx context.Context, s *repl.Session, file, src string, at lang.Pos) error {
		q := serve.QueryRequest{Format: s.Mode, File: file, Line: at.Line, Column: at.Column, Timer: s.Timer, Echo: s.Echo,
			Timeout: s.Timeout, MaxRows: s.MaxRows}
		err := c.Query(ctx, q, src, s.Out)
		var re *serve.RemoteError
		if errors.As(err, &re) {
			return &repl.StatementError{Err: re}
		}
		return err
	}
}
