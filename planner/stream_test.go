package planner

import (
	"errors"
	"slices"
	"testing"
)

// TestSortedByReadsEachKeyOnce: a sort reads each element's key once
// (a findings sort by profit used to read two records per comparison),
// keeps equal keys in their order, and reverses for desc.
func TestSortedByReadsEachKeyOnce(t *testing.T) {
	type item struct {
		name string
		k    int
	}
	in := []item{{"a", 3}, {"b", 1}, {"c", 3}, {"d", 2}, {"e", 1}}
	run := func(emit func(item) error) error {
		for _, v := range in {
			if err := emit(v); err != nil {
				return err
			}
		}
		return nil
	}
	for _, desc := range []bool{false, true} {
		reads := 0
		key := func(v item) (int, error) { reads++; return v.k, nil }
		var got []string
		err := sortedBy(run, key, func(a, b int) bool { return a < b }, desc, func(v item) error { got = append(got, v.name); return nil })
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"b", "e", "d", "a", "c"}
		if desc {
			want = []string{"a", "c", "d", "b", "e"}
		}
		if !slices.Equal(got, want) || reads != len(in) {
			t.Errorf("desc %v: order %v (want %v), %d key reads for %d elements", desc, got, want, reads, len(in))
		}
	}
	bad := errors.New("no record")
	err := sortedBy(run, func(item) (int, error) { return 0, bad }, func(a, b int) bool { return a < b }, false, func(item) error { return nil })
	if !errors.Is(err, bad) {
		t.Errorf("a key's error: %v", err)
	}
}

// TestLimitToStopsTheInput: a limit passes on n elements and stops the
// input there (it yields no more), without an error.
func TestLimitToStopsTheInput(t *testing.T) {
	yielded := 0
	run := func(emit func(int) error) error {
		for i := 0; i < 100; i++ {
			yielded++
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	}
	var got []int
	if err := limitTo(3, run, func(v int) error { got = append(got, v); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{0, 1, 2}) || yielded != 4 {
		t.Errorf("got %v after %d yielded", got, yielded)
	}
}

// TestLargestFirst: groups by count, largest first, ties by key, cut to
// the limit.
func TestLargestFirst(t *testing.T) {
	n := map[string]int{"x": 1, "b": 5, "a": 5, "c": 2}
	count := func(k string) int { return n[k] }
	if got := largestFirst([]string{"x", "b", "a", "c"}, count, -1); !slices.Equal(got, []string{"a", "b", "c", "x"}) {
		t.Errorf("no limit: %v", got)
	}
	if got := largestFirst([]string{"x", "b", "a", "c"}, count, 2); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("limit 2: %v", got)
	}
}
