package fetch

import (
	"strings"
	"testing"
)

// TestOptionsBounds: Check names a concurrency or batch out of its range,
// and the defaults hold one given anyway to its bound.
func TestOptionsBounds(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Concurrency: 1 << 30}, "concurrency 1073741824: want 1 to 256"},
		{Options{Concurrency: -2}, "concurrency -2"},
		{Options{BatchSize: MaxBatchSize + 1}, "batch 1025: want 1 to 1024"},
	} {
		if err := tc.o.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	o := Options{Concurrency: 1 << 30, BatchSize: 1 << 30}
	o.defaults()
	if o.Concurrency != MaxConcurrency || o.BatchSize != MaxBatchSize {
		t.Errorf("after defaults: concurrency %d, batch %d", o.Concurrency, o.BatchSize)
	}
}
