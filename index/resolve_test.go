package index_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
)

// TestResolvePrefixes: Resolve finds the transaction hashes, bots'
// addresses and structural hashes of the index that start with a prefix
// (an odd number of digits reads the last one as a nibble) and end with
// a suffix: one, several (each once, at most max), none; it refuses too
// few digits and says that touched addresses have no key a prefix finds.
func TestResolvePrefixes(t *testing.T) {
	ix := openTemp(t)
	as := analyseCorpus(t)
	base, err := index.NewRecord(as[0], time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	h := func(s string) normalform.Hash { return common.HexToHash(s) }
	a := func(s string) normalform.Address { return common.HexToAddress(s) }
	pad := func(head string, n int, tail string) string {
		return head + strings.Repeat("0", n-len(head)+2-len(tail)) + tail
	}
	var (
		tx1  = pad("0xabcdef01", 64, "1111")
		tx2  = pad("0xabcdef02", 64, "2222")
		tx3  = pad("0xabcdef1f", 64, "3333")
		bot1 = pad("0xbfee84", 40, "a1")
		bot2 = pad("0xbfee84f5", 40, "b2")
		fam1 = pad("0x5e4c00", 64, "01")
		fam2 = pad("0x5e4c01", 64, "02")
		ex1  = pad("0xe7e7e7e7", 64, "0001")
	)
	for i, c := range []struct{ tx, bot, fam, exact string }{
		{tx1, bot1, fam1, ex1},
		{tx2, bot2, fam2, ex1}, // the same exact hash twice: one value
		{tx3, bot1, fam1, "0x77" + strings.Repeat("0", 62)},
	} {
		r := *base
		r.Hash, r.Recipient = h(c.tx), a(c.bot)
		r.Hashes.Family, r.Hashes.Exact = h(c.fam), h(c.exact)
		r.Loc = index.Loc{Block: 900 + uint64(i), Index: 1}
		if err := ix.PutRecord(&r); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, c := range []struct {
		name           string
		by             index.Kind
		level          normalform.Level
		prefix, suffix string
		max            int
		want           []string
	}{
		{"one tx", index.KindTxHash, 0, "abcdef01", "", 0, []string{tx1}},
		{"tx, odd digits", index.KindTxHash, 0, "abcdef0", "", 0, []string{tx1, tx2}},
		{"tx, odd digits past the tag", index.KindTxHash, 0, "abcdef1f0000000", "", 0, []string{tx3}},
		{"txs", index.KindTxHash, 0, "abcdef", "", 0, []string{tx1, tx2, tx3}},
		{"txs, bounded", index.KindTxHash, 0, "abcdef", "", 2, []string{tx1, tx2}},
		{"tx by prefix and suffix", index.KindTxHash, 0, "abcd", "2222", 0, []string{tx2}},
		{"no tx", index.KindTxHash, 0, "abcdee", "", 0, nil},
		{"no tx of that suffix", index.KindTxHash, 0, "abcd", "4444", 0, nil},
		{"bots, each once", index.KindFirst, 0, "bfee84", "", 0, []string{bot1, bot2}},
		{"bot, odd digits", index.KindFirst, 0, "bfee840", "", 0, []string{bot1}},
		{"the other bot, odd digits", index.KindFirst, 0, "bfee84f", "", 0, []string{bot2}},
		{"bot by its printed form", index.KindFirst, 0, "bfee", "00b2", 0, []string{bot2}},
		{"no bot", index.KindFirst, 0, "bfee83", "", 0, nil},
		{"family hash", index.KindHash, normalform.Family, "5e4c01", "", 0, []string{fam2}},
		{"family hash, odd digits", index.KindHash, normalform.Family, "5e4c000", "", 0, []string{fam1}},
		{"family hash, odd digits and a suffix", index.KindHash, normalform.Family, "5e4c0", "2", 0, []string{fam2}},
		{"family hash by its printed form", index.KindHash, normalform.Family, "5e4c", "0002", 0, []string{fam2}},
		{"no shape hash", index.KindHash, normalform.Shape, "5e4c01", "", 0, nil},
		{"exact hash, once", index.KindHash, normalform.Exact, "e7e7e7e", "0001", 0, []string{ex1}},
	} {
		got, err := ix.Resolve(ctx, c.by, c.level, c.prefix, c.suffix, c.max)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name           string
		by             index.Kind
		prefix, suffix string
		want           string
	}{
		{"too short", index.KindTxHash, "abcde", "", "a prefix needs at least 6 hex digits"},
		{"too short before the …", index.KindTxHash, "abc", "1111", "at least 4 hex digits before the …"},
		{"too long", index.KindFirst, strings.Repeat("a", 41), "", "41 hex digits given, and the value has 40"},
		{"touched addresses", index.KindAddr, "bfee84", "", "hashed tag, which no prefix finds"},
	} {
		_, err := ix.Resolve(ctx, c.by, 0, c.prefix, c.suffix, 0)
		var re *index.ResolveError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a ResolveError with %q", c.name, err, c.want)
		}
	}
}
