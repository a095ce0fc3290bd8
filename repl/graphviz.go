package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

// ErrNoGraphviz reports that Graphviz's dot is not on PATH.
var ErrNoGraphviz = errors.New("Graphviz's dot is not installed (apt install graphviz); the DOT text can be written with --format dot")

// GraphvizFormats are the image formats RenderGraphviz produces.
var GraphvizFormats = []string{"svg", "png"}

// RenderGraphviz lays out a DOT graph with Graphviz's dot (dot -T<format>,
// the graph on its standard input) and writes the image to w: format is
// svg or png. Nothing is written to w unless dot succeeds. Errors: an
// unknown format, ErrNoGraphviz when dot is not on PATH, dot's failure
// with its standard error, the context's error when it is cancelled.
func RenderGraphviz(ctx context.Context, dot string, format string, w io.Writer) error {
	known := false
	for _, f := range GraphvizFormats {
		known = known || f == format
	}
	if !known {
		return fmt.Errorf("image format %q: want %s", format, strings.Join(GraphvizFormats, " or "))
	}
	path, err := exec.LookPath("dot")
	if err != nil {
		return ErrNoGraphviz
	}
	cmd := exec.CommandContext(ctx, path, "-T"+format)
	cmd.Stdin = strings.NewReader(dot)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("Graphviz's dot: %w", ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "no message"
		}
		return fmt.Errorf("Graphviz's dot -T%s failed (%v): %s", format, err, msg)
	}
	if out.Len() == 0 {
		return fmt.Errorf("Graphviz's dot -T%s wrote nothing: %s", format, strings.TrimSpace(stderr.String()))
	}
	_, err = w.Write(out.Bytes())
	return err
}

// DOT is the picture of an analysis as Graphviz DOT text: view "graph"
// is the transfer graph (show.TransferGraphDOT), anything else ("tree")
// the reduced tree (show.NormalFormDOT). flowq draw, the REPL's .draw
// and flowq serve's pictures all draw with it.
func DOT(cfg *normalform.Config, a *normalform.Analysis, view string) string {
	if view == "graph" {
		return show.TransferGraphDOT(cfg, a)
	}
	return show.NormalFormDOT(cfg, a)
}

// Picture writes DOT text as format: "dot" writes the text itself, "svg"
// and "png" lay it out with Graphviz's dot (RenderGraphviz).
func Picture(ctx context.Context, dot, format string, w io.Writer) error {
	if format == "dot" {
		_, err := io.WriteString(w, dot)
		return err
	}
	return RenderGraphviz(ctx, dot, format, w)
}

// Draw writes the picture of an analysis (DOT's view) as format
// (Picture's): what flowq draw and .draw write.
func Draw(ctx context.Context, cfg *normalform.Config, a *normalform.Analysis, view, format string, w io.Writer) error {
	return Picture(ctx, DOT(cfg, a, view), format, w)
}
