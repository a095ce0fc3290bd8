package repl

import (
	"context"
	"time"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
)

// delayed is the QueryDelay test hook: a Source that waits d before each
// row it yields, so that a query over a small index runs long enough to be
// interrupted. Its wait ends, with ctx.Err(), when the statement's context
// is cancelled: the cancellation travels through the executor as it would
// through a long scan of the index.
type delayed struct {
	planner.Source
	d time.Duration
}

func (s *delayed) wait(ctx context.Context) error {
	t := time.NewTimer(s.d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *delayed) records(ctx context.Context, fn func(*layout.Record) error) func(*layout.Record) error {
	return func(rec *layout.Record) error {
		if err := s.wait(ctx); err != nil {
			return err
		}
		return fn(rec)
	}
}

func (s *delayed) Fetch(ctx context.Context, lk layout.Lookup, fn func(*layout.Record) error) error {
	return s.Source.Fetch(ctx, lk, s.records(ctx, fn))
}

func (s *delayed) Filter(ctx context.Context, blocks layout.BlockRange, addrs bool, match func(*layout.Record) (bool, error), whole bool, fn func(*layout.Record) error) error {
	return s.Source.Filter(ctx, blocks, addrs, match, whole, s.records(ctx, fn))
}

func (s *delayed) BotShapes(ctx context.Context, bot normalform.Address, fn func(normalform.Hash, layout.Ref) error) error {
	return s.Source.BotShapes(ctx, bot, func(shape normalform.Hash, r layout.Ref) error {
		if err := s.wait(ctx); err != nil {
			return err
		}
		return fn(shape, r)
	})
}
