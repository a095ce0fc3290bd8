package planner

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/normalform"
)

// A table's addresses widen together; the null address is 0x0; a field
// that is not an address (a hash, a count) is left alone.
func TestShortenAddresses(t *testing.T) {
	a := common.HexToAddress("0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74")
	b := common.HexToAddress("0xbfee000000000000000000000000000000a0db74")
	z := common.HexToAddress("0x00000000ab000000000000000000000000000000")
	rows := []Row{
		{{"tx", "0x3db1", "0x3db1"}, addrField("bot", a), addrField("sender", z)},
		{{"tx", "0x68b1", "0x68b1"}, addrField("bot", b), addrField("sender", normalform.Address{})},
		{{"n", "2", "2"}, {"note", normalform.AddrKey(a), "kept"}},
	}
	ShortenAddresses(rows)
	want := [][]string{{"0x3db1", "0xbfee8…6db74", "0x00000000a…000000000"}, {"0x68b1", "0xbfee0…0db74", "0x0"}, {"2", "kept"}}
	for i, r := range rows {
		for j, f := range r {
			if f.Human != want[i][j] {
				t.Errorf("row %d %s: %q, want %q", i, f.Name, f.Human, want[i][j])
			}
		}
	}
	if rows[1][2].Value != normalform.AddrKey(normalform.Address{}) {
		t.Errorf("the machine value changed: %s", rows[1][2].Value)
	}
}
