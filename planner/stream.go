package planner

import (
	"errors"
	"sort"

	"github.com/flowq/flowq/lang"
)

// The steps a plan runs the same way over records and over block
// findings: the conjunction of predicates, sort, limit and the order of
// groups. Each is written once here, over the element type.

// allHold is the conjunction of evals, tried in order: the first that
// fails or errs decides.
func allHold[T any](evals []func(T) (bool, error)) func(T) (bool, error) {
	return func(v T) (bool, error) {
		for _, eval := range evals {
			if ok, err := eval(v); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	}
}

// limitTo runs run, passing on to emit the first n of what it yields,
// and stops it there.
func limitTo[T any](n int, run func(emit func(T) error) error, emit func(T) error) error {
	k := 0
	err := run(func(v T) error {
		if k == n {
			return errLimit
		}
		k++
		return emit(v)
	})
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}

// sortedBy collects what run yields, reads each one's key once, and
// passes them on to emit ordered by less of their keys (stable; largest
// first when desc).
func sortedBy[T, K any](run func(emit func(T) error) error, key func(T) (K, error), less func(a, b K) bool, desc bool, emit func(T) error) error {
	type keyed struct {
		v T
		k K
	}
	var all []keyed
	if err := run(func(v T) error {
		k, err := key(v)
		if err != nil {
			return err
		}
		all = append(all, keyed{v, k})
		return nil
	}); err != nil {
		return err
	}
	sort.SliceStable(all, func(i, j int) bool {
		if desc {
			return less(all[j].k, all[i].k)
		}
		return less(all[i].k, all[j].k)
	})
	for _, e := range all {
		if err := emit(e.v); err != nil {
			return err
		}
	}
	return nil
}

// splitGroup is a group plan's Group and the limit on its rows (-1: no
// limit).
func splitGroup(plan Plan) (*Group, int) {
	if l, ok := plan.(*Limit); ok {
		return l.Input.(*Group), l.N
	}
	return plan.(*Group), -1
}

// largestFirst orders a group's keys by their count, largest first, then
// by key, and keeps the first limit of them (all when limit < 0).
func largestFirst(keys []string, count func(string) int, limit int) []string {
	sort.SliceStable(keys, func(i, j int) bool {
		ci, cj := count(keys[i]), count(keys[j])
		if ci != cj {
			return ci > cj
		}
		return keys[i] < keys[j]
	})
	if limit >= 0 && limit < len(keys) {
		keys = keys[:limit]
	}
	return keys
}

// withLimit puts a statement's limit, if it has one, on top of plan.
func (pl *Planner) withLimit(plan Plan, limit *lang.Limit) (Plan, error) {
	if limit == nil {
		return plan, nil
	}
	n, err := pl.limit(limit)
	if err != nil {
		return nil, err
	}
	return &Limit{Input: plan, N: n}, nil
}
