package repl

import (
	"context"
	"io"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
)

// Store is the index a REPL queries, fills and describes. The program
// that starts the REPL opens it (flowq's is repl/local, over Badger), so
// that the REPL itself never links the storage engine: `go list -deps
// ./repl` names no Badger (internal/archtest checks it).
type Store interface {
	planner.Source // what statements and .draw read

	// Path names the index (in messages, and .open's "already open").
	Path() string
	// Count is the number of transactions (.stats).
	Count(ctx context.Context) (int, error)
	// Stats calls fn once per key kind, in the kinds' order, with its key
	// count and sizes (.stats).
	Stats(ctx context.Context, fn func(kind string, keys int, keyBytes, valueBytes int64)) error
	// Ingest analyses and stores the files and directories named
	// (.ingest), writing progress to progress when it is not nil and
	// each recorded failure to onFailure. It returns the summary line
	// ("" when the inputs could not even be listed) and how many
	// failures it recorded.
	Ingest(ctx context.Context, cfg *normalform.Config, paths []string, progress io.Writer, onFailure func(string)) (summary string, failed int, err error)
	// Close closes the index.
	Close() error
}
