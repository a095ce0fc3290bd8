package index

import (
	"testing"

	"github.com/flowq/flowq/index/layout"
)

// BenchmarkNFPage: an NF page of NFPageSpan corpus NFs written
// (compressed) and read (decompressed, parsed); per page.
//
//	go test ./index -run '^$' -bench NFPage -benchmem
func BenchmarkNFPage(b *testing.B) {
	var nfs [layout.NFPageSpan][]byte
	raw := 0
	for i, r := range fullNFPage(b, 7, layout.NFPageSpan) {
		nfs[i] = r.NFValue()
		raw += len(nfs[i])
	}
	v, _, err := appendNFPage(nil, &nfs)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d NFs, %d bytes raw, %d compressed", layout.NFPageSpan, raw, len(v))
	b.Run("write", func(b *testing.B) {
		b.SetBytes(int64(raw))
		var dst []byte
		for b.Loop() {
			dst, _, _ = appendNFPage(dst[:0], &nfs)
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(raw))
		var body []byte
		var got [layout.NFPageSpan][]byte
		for b.Loop() {
			body, err = nfPageEntries(Loc{Block: 7}, v, body, &got)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
