package planner

import (
	"os"
	"strings"
	"testing"
)

// plainSource hides the index's Fetcher methods: the executor then reads
// refs and records one by one, as for any Source. It keeps the block
// findings (BlockSource), which no Fetcher method replaces.
type plainSource struct {
	Source
	BlockSource
}

// TestFetcherSameRows: every query of testdata/queries.txt gives the same
// rows, in the same order, with the index's Fetch and header scans
// (Fetcher) as through the plain Source methods.
func TestFetcherSameRows(t *testing.T) {
	data, err := os.ReadFile("testdata/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range strings.Split(string(data), "\n====\n") {
		head, _, _ := strings.Cut(strings.Trim(c, "\n"), "\n----")
		lines := strings.Split(head, "\n")
		if len(lines) < 2 {
			continue
		}
		query := strings.Join(lines[1:], "\n")
		fast, plain := runOn(testIndex, query), runOn(plainSource{testIndex, testIndex}, query)
		if fast != plain {
			t.Errorf("%s\n%s\n--- with Fetcher:\n%s\n--- without:\n%s", lines[0], query, fast, plain)
		}
		n++
	}
	extra := []string{"count by sender", "count bots by family", "count by exact", "count by block",
		"find where bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 and hops >= 2", "find where not (pools < 2 or cycles = 0)",
		"find where has reason no_cycles and block between 11017338 and 11017338", "count shapes by tier"}
	for _, q := range extra {
		if fast, plain := runOn(testIndex, q), runOn(plainSource{testIndex, testIndex}, q); fast != plain {
			t.Errorf("%s\n--- with Fetcher:\n%s\n--- without:\n%s", q, fast, plain)
		}
	}
	if n < 20 {
		t.Fatalf("only %d queries", n)
	}
}
