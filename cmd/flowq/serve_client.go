package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/flowq/flowq/index/export"
	"github.com/flowq/flowq/repl/serve"
)

// The commands as clients of a flowq server (serve.go's serverFor found
// one): they print what they print without one.

// ingestRemote is `flowq ingest` through a server: the job runs there,
// its progress and failures are shown here, and Ctrl-C stops waiting
// (the job goes on: GET /ingest/ID on the server follows it).
func ingestRemote(c *serve.Client, req serve.IngestRequest, list, progress, quiet bool, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if list {
		n, err := c.Failures(ctx, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "flowq ingest: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "flowq ingest: %d failures recorded in %s (through %s)\n", n, c.Info.Index, c.Info)
		return 0
	}
	if !quiet {
		fmt.Fprintf(stderr, "flowq ingest: the index is served by %s: ingesting there\n", c.Info)
	}
	shown := 0
	const maxShown = 20
	lastProgress := ""
	show := func(j *serve.JobInfo) {
		for ; !quiet && shown < len(j.Log); shown++ {
			if progress && lastProgress != "" {
				fmt.Fprint(stderr, "\r\033[K")
			}
			fmt.Fprintf(stderr, "flowq ingest: %s\n", j.Log[shown])
		}
		if progress && j.Progress != "" && j.Progress != lastProgress {
			fmt.Fprintf(stderr, "\r\033[K%s", j.Progress)
			lastProgress = j.Progress
		}
	}
	j, err := c.Ingest(ctx, req, 200*time.Millisecond, show)
	if progress && lastProgress != "" {
		fmt.Fprint(stderr, "\r\033[K")
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "flowq ingest: interrupted: the job %d goes on in the server (GET %s/ingest/%d)\n", j.ID, c.Base, j.ID)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "flowq ingest: %v\n", err)
		return 1
	}
	show(j)
	if j.Failures > maxShown && !quiet {
		fmt.Fprintf(stderr, "flowq ingest: ... %d more failures ('flowq ingest --failures' lists them all)\n", j.Failures-maxShown)
	}
	if j.Report != "" {
		fmt.Fprintf(stderr, "flowq ingest: %s\n", j.Report)
	}
	switch j.State {
	case "canceled":
		fmt.Fprintln(stderr, "flowq ingest: the server stopped the job; run the same command again to resume")
		return 1
	case "failed":
		fmt.Fprintf(stderr, "flowq ingest: %s\n", j.Error)
		return 1
	}
	if j.Summary.Failed > 0 || j.Incomplete {
		return 1
	}
	return 0
}

// exportRemote is `flowq export` through a server.
func exportRemote(c *serve.Client, f export.Format, blocks, out string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	w := stdout
	var file *os.File
	var err error
	if out != "" {
		if file, err = os.Create(out); err != nil {
			fmt.Fprintf(stderr, "flowq export: %v\n", err)
			return 1
		}
		w = file
	}
	n, err := c.Export(ctx, string(f), blocks, w)
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "flowq export: %v\n", err)
		return 1
	}
	dest := "standard output"
	if out != "" {
		dest = out
	}
	fmt.Fprintf(stderr, "flowq export: %d transactions written to %s\n", n, dest)
	return 0
}

// drawRemote is a transaction's DOT drawn by the server holding the index
// at dir, or "" when no server holds it.
func drawRemote(dir, hash, view string, lookupEnv func(string) (string, bool), stderr io.Writer) (string, error) {
	path, err := indexDir(dir, lookupEnv)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err != nil {
		return "", nil // analysisFromIndex says so
	}
	c := serverFor(path, "flowq draw", stderr, lookupEnv)
	if c == nil {
		return "", nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	b, err := c.Draw(ctx, hash, view, "dot")
	if err != nil {
		return "", err
	}
	return string(b), nil
}
