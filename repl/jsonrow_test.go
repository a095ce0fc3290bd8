package repl

import (
	"reflect"
	"testing"

	"github.com/flowq/flowq/planner"
)

func fd(name, value, human string) planner.Field {
	return planner.Field{Name: name, Value: value, Human: human}
}

// TestJSONRowTypes: the JSON mode types each column as the JSON contract
// says, whatever row it is in (a record, a sandwich, a group, a block's
// transaction), and the CSV mode writes a balance as token and amount.
func TestJSONRowTypes(t *testing.T) {
	weth, eth := "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	for _, c := range []struct {
		row  planner.Row
		want string
	}{
		{planner.Row{fd("tx", "0xab", "0xab"), fd("block", "", ""), fd("tier", "", ""), fd("gross", weth+":12;0x01:-3", "+…"), fd("net", "", "unknown"),
			fd("cycles", "1", "1"), fd("reasons", "", "")},
			`{"tx":"0xab","block":null,"tier":"","gross":{"0x01":"-3","` + weth + `":"12"},"net":null,"cycles":1,"reasons":[]}` + "\n"},
		{planner.Row{fd("gross", "", "0"), fd("net", "", "0"), fd("reasons", "a,b", "a, b")},
			`{"gross":{},"net":{},"reasons":["a","b"]}` + "\n"},
		// a sandwich: victims a list, gain an exact amount, net in the native asset, unknown builder payment null
		{planner.Row{fd("block", "7", "7"), fd("victims", "0x1,0x2", "0x1,0x2"), fd("pools", "2", "2"), fd("gain", "-5", "-5 WETH"),
			fd("net", "9", "+9 wei"), fd("builder_paid", "", "unknown")},
			`{"block":7,"victims":["0x1","0x2"],"pools":2,"gain":"-5","net":{"` + eth + `":"9"},"builder_paid":null}` + "\n"},
		// a group and a block's transaction
		{planner.Row{fd("verdict", "none", "none"), fd("transactions", "12", "12"), fd("roles", "front,back", "front, back")},
			`{"verdict":"none","transactions":12,"roles":["front","back"]}` + "\n"},
	} {
		got, err := jsonRow(c.row)
		if err != nil || string(got) != c.want {
			t.Errorf("%v:\n got %s(%v)\nwant %s", c.row, got, err, c.want)
		}
	}
	row := planner.Row{fd("tx", "0xab", "0xab"), fd("gross", weth+":12;0x01:-3", ""), fd("net", "", "unknown"), fd("pools", "2", "2")}
	if h := CSVHeader(row); !reflect.DeepEqual(h, []string{"tx", "gross_token", "gross_amount", "net_token", "net_amount", "pools"}) {
		t.Errorf("header %v", h)
	}
	if cells := CSVCells(row); !reflect.DeepEqual(cells, []string{"0xab", weth + ";0x01", "12;-3", "", "", "2"}) {
		t.Errorf("cells %v", cells)
	}
}
