package planner

import (
	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/normalform"
)

// addrField is a field naming an address: its value the whole lowercase
// address, its human form ShortAddr's 4+4 form until ShortenAddresses
// widens it with the rest of its table.
func addrField(name string, a normalform.Address) Field {
	return Field{name, normalform.AddrKey(a), normalform.ShortAddr(a)}
}

// ShortenAddresses rewrites the human form of every address of a result
// table (a field whose value is a whole address and whose human form is
// its 4+4 short form: bot, sender, a group's key) so that no two addresses
// of the table share one: the colliding forms widen, both sides together,
// and the null address is written 0x0 (normalform.Shortener). Rows are
// rewritten in place; the machine values are left as they are.
func ShortenAddresses(rows []Row) {
	type cell struct{ row, col int }
	var cells []cell
	var addrs []normalform.Address
	for i, r := range rows {
		for j, f := range r {
			a, ok := addressField(f)
			if ok {
				cells = append(cells, cell{i, j})
				addrs = append(addrs, a)
			}
		}
	}
	if len(cells) == 0 {
		return
	}
	s := normalform.NewShortener(addrs)
	for k, c := range cells {
		rows[c.row][c.col].Human = s.Short(addrs[k])
	}
}

// addressField reports whether f names an address as addrField writes it.
func addressField(f Field) (normalform.Address, bool) {
	if len(f.Value) != 42 || !common.IsHexAddress(f.Value) {
		return normalform.Address{}, false
	}
	a := common.HexToAddress(f.Value)
	if normalform.AddrKey(a) != f.Value || normalform.ShortAddr(a) != f.Human {
		return normalform.Address{}, false
	}
	return a, true
}
