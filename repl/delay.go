package repl

import (
	"context"
	"time"

	"github.com/flowq/flowq/index"
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

func delayRefs(ctx context.Context, s *delayed, fn func(index.Ref) error) func(index.Ref) error {
	return func(r index.Ref) error {
		if err := s.wait(ctx); err != nil {
			return err
		}
		return fn(r)
	}
}

func (s *delayed) ByHash(ctx context.Context, level normalform.Level, h normalform.Hash, blocks index.BlockRange, fn func(index.Ref) error) error {
	return s.Source.ByHash(ctx, level, h, blocks, delayRefs(ctx, s, fn))
}

func (s *delayed) ByBot(ctx context.Context, bot normalform.Address, blocks index.BlockRange, fn func(normalform.Hash, index.Ref) error) error {
	return s.Source.ByBot(ctx, bot, blocks, func(shape normalform.Hash, r index.Ref) error {
		if err := s.wait(ctx); err != nil {
			return err
		}
		return fn(shape, r)
	})
}

func (s *delayed) BotShapes(ctx context.Context, bot normalform.Address, fn func(normalform.Hash, index.Ref) error) error {
	return s.Source.BotShapes(ctx, bot, func(shape normalform.Hash, r index.Ref) error {
		if err := s.wait(ctx); err != nil {
			return err
		}
		return fn(shape, r)
	})
}

func (s *delayed) ByBlocks(ctx context.Context, blocks index.BlockRange, fn func(index.Ref) error) error {
	return s.Source.ByBlocks(ctx, blocks, delayRefs(ctx, s, fn))
}

func (s *delayed) ByTier(ctx context.Context, v normalform.Verdict, t normalform.Tier, blocks index.BlockRange, fn func(index.Ref) error) error {
	return s.Source.ByTier(ctx, v, t, blocks, delayRefs(ctx, s, fn))
}

func (s *delayed) ByVerdict(ctx context.Context, v normalform.Verdict, blocks index.BlockRange, fn func(normalform.Tier, index.Ref) error) error {
	return s.Source.ByVerdict(ctx, v, blocks, func(t normalform.Tier, r index.Ref) error {
		if err := s.wait(ctx); err != nil {
			return err
		}
		return fn(t, r)
	})
}

func (s *delayed) ByProfit(ctx context.Context, side index.Side, tok normalform.Token, lo, hi *normalform.Signed, fn func(normalform.Signed, index.Ref) error) error {
	return s.Source.ByProfit(ctx, side, tok, lo, hi, func(a normalform.Signed, r index.Ref) error {
		if err := s.wait(ctx); err != nil {
			return err
		}
		return fn(a, r)
	})
}

func (s *delayed) ByAddress(ctx context.Context, a normalform.Address, blocks index.BlockRange, fn func(index.Ref) error) error {
	return s.Source.ByAddress(ctx, a, blocks, delayRefs(ctx, s, fn))
}

func (s *delayed) ByToken(ctx context.Context, tok normalform.Token, blocks index.BlockRange, fn func(index.Ref) error) error {
	return s.Source.ByToken(ctx, tok, blocks, delayRefs(ctx, s, fn))
}

func (s *delayed) Records(ctx context.Context, blocks index.BlockRange, fn func(*index.Record) error) error {
	return s.Source.Records(ctx, blocks, func(rec *index.Record) error {
		if err := s.wait(ctx); err != nil {
			return err
		}
		return fn(rec)
	})
}
