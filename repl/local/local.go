// Package local is the REPL's store on this machine: a Badger index
// (package index) filled by package index/ingest. flowq repl opens its
// index through it, so that package repl stays free of the storage
// engine.
package local

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// Store is an open index as a repl.Store.
type Store struct {
	*index.Index
}

// Of wraps an open index.
func Of(ix *index.Index) *Store { return &Store{ix} }

// Open opens the index at path read-write, creating the directory when
// it is missing (.open).
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	ix, err := index.Open(path)
	if err != nil {
		return nil, err
	}
	return &Store{ix}, nil
}

// Stats reports the key kinds in index.Kinds' order.
func (s *Store) Stats(ctx context.Context, fn func(kind string, keys int, keyBytes, valueBytes int64)) error {
	st, err := s.Index.Stats(ctx)
	if err != nil {
		return err
	}
	for _, k := range index.Kinds {
		ks := st[k]
		fn(fmt.Sprint(k), ks.Keys, ks.KeyBytes, ks.ValueBytes)
	}
	return nil
}

// Ingest runs index/ingest on the files and directories named.
func (s *Store) Ingest(ctx context.Context, cfg *normalform.Config, paths []string, progress io.Writer, onFailure func(string)) (string, int, error) {
	inputs, err := ingest.Files(paths...)
	if err != nil {
		return "", 0, err
	}
	opt := ingest.Options{Config: cfg, Progress: progress}
	opt.OnFailure = func(f index.Failure) { onFailure(f.String()) }
	sum, err := ingest.Ingest(ctx, s.Index, inputs, opt)
	return sum.String(), sum.Failed, err
}
