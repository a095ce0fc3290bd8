package repl

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const smallDOT = "digraph \"g\" {\n  \"a\" [label=\"from \\\"α\\\"\"];\n  \"b\";\n  \"a\" -> \"b\" [label=\"#0 1 WETH\"];\n}\n"

// The test takes whichever branch this machine allows, and says which.
// With dot installed: a small graph renders to SVG (well-formed XML with
// an <svg> root), to PNG (the PNG signature), and bad DOT fails with
// dot's message. Without it: the not-installed error.
func TestRenderGraphviz(t *testing.T) {
	ctx := context.Background()
	if _, err := exec.LookPath("dot"); err != nil {
		t.Log("Graphviz's dot is not on PATH: checking the not-installed error")
		var out bytes.Buffer
		err := RenderGraphviz(ctx, smallDOT, "svg", &out)
		if !errors.Is(err, ErrNoGraphviz) || !strings.Contains(err.Error(), "apt install graphviz") || !strings.Contains(err.Error(), "--format dot") {
			t.Errorf("error %v, want ErrNoGraphviz", err)
		}
		if out.Len() != 0 {
			t.Errorf("wrote %d bytes without dot", out.Len())
		}
		return
	}
	t.Log("Graphviz's dot is on PATH: rendering for real")
	var svg bytes.Buffer
	if err := RenderGraphviz(ctx, smallDOT, "svg", &svg); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg.Bytes(), "#0 1 WETH", "from \"α\"")

	var png bytes.Buffer
	if err := RenderGraphviz(ctx, smallDOT, "png", &png); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("png output starts %q", png.Bytes()[:min(8, png.Len())])
	}

	var bad bytes.Buffer
	err := RenderGraphviz(ctx, "digraph { a -> ", "svg", &bad)
	if err == nil || !strings.Contains(err.Error(), "dot -Tsvg failed") || !strings.Contains(strings.ToLower(err.Error()), "syntax error") {
		t.Errorf("bad DOT: error %v, want dot's syntax error", err)
	}
	if bad.Len() != 0 {
		t.Errorf("bad DOT wrote %d bytes", bad.Len())
	}
}

// checkSVG parses the whole document as XML and wants an <svg> root whose
// text holds each of texts.
func checkSVG(t *testing.T, b []byte, texts ...string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	root := ""
	var chars strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, b)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = x.Name.Local
			}
		case xml.CharData:
			chars.Write(x)
		}
	}
	if root != "svg" {
		t.Fatalf("root element <%s>, want <svg>", root)
	}
	for _, s := range texts {
		if !strings.Contains(chars.String(), s) {
			t.Errorf("the SVG does not show %q", s)
		}
	}
}

// Without dot on PATH (an empty directory as PATH: LookPath really fails,
// nothing is faked), the error says how to install it and how to do
// without; an unknown format is refused before dot is looked for.
func TestRenderGraphvizWithoutDot(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out bytes.Buffer
	err := RenderGraphviz(context.Background(), smallDOT, "svg", &out)
	if !errors.Is(err, ErrNoGraphviz) {
		t.Fatalf("error %v, want ErrNoGraphviz", err)
	}
	if want := "Graphviz's dot is not installed (apt install graphviz); the DOT text can be written with --format dot"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %d bytes", out.Len())
	}
	err = RenderGraphviz(context.Background(), smallDOT, "pdf", &out)
	if err == nil || !strings.Contains(err.Error(), `"pdf"`) || !strings.Contains(err.Error(), "svg or png") {
		t.Errorf("unknown format: %v", err)
	}
}
