package ingest

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// cryo's traces dataset (call_traces: trace_block, the Parity shape;
// crates/freeze/src/datasets/traces.rs), turned back into trace_block's
// frames: action_type, action_from, action_to, action_value (a string in
// cryo's older versions, action_value_binary or action_value_string with
// --u256-types), action_input, action_init, action_call_type
// ("delegate_call" and the like), result_output, result_address,
// trace_address ("0_1_2"), subtraces, transaction_hash, block_number,
// error. cryo drops every failed frame and the frames below it
// (filter_failed_traces), so:
//
//   - the frames left are renumbered (a frame after a dropped sibling
//     takes its place) and each frame's subtraces is the number of its
//     children left: a failed frame moves nothing and its logs are
//     reverted, so the value flow is the trace's;
//   - a transaction without any frame failed as a whole (its top frame
//     was dropped): it gets a top frame with an error, from the
//     transactions dataset (sender, recipient, value), which moves
//     nothing. One whose receipt says it succeeded is an error naming
//     the traces file.

type cryoFrame struct {
	addr []int
	obj  map[string]any
}

// cryoTraces reads the traces table into frames per transaction hash.
func cryoTraces(t *cryoTable, blocks map[uint64]*cryoBlock, inRange func(*cryoTable, int, uint64) error) (map[string][]*cryoFrame, error) {
	need := map[string]int{}
	var err error
	for _, n := range []string{"action_type", "action_from", "trace_address", "transaction_hash", "block_number"} {
		if need[n], err = t.need(n); err != nil {
			return nil, err
		}
	}
	opt := func(n ...string) int { i, _ := t.col(n...); return i }
	cto, cinput, cinit, ccall := opt("action_to"), opt("action_input"), opt("action_init"), opt("action_call_type")
	cout, caddr, cerr := opt("result_output"), opt("result_address"), opt("error")
	vb, vbName := t.col("action_value_binary", "action_value")
	vs, _ := t.col("action_value_string", "action_value_str", "action_value")
	if vbName == "action_value" && t.typ["action_value"].Kind() != parquet.ByteArray {
		vb = -1
	}
	if vb >= 0 && vbName == "action_value" {
		// A byte array column named action_value: cryo's older versions
		// wrote the decimal string there; read it as such.
		vb = -1
	}
	if vb < 0 && vs < 0 {
		return nil, fmt.Errorf("%s: no action_value_binary or action_value_string column (cryo --u256-types binary or string)", t.path)
	}
	out := map[string][]*cryoFrame{}
	for r := range t.rows {
		h, err := t.bytesOf(r, need["transaction_hash"], 32)
		if err != nil {
			return nil, err
		}
		if h == nil {
			continue // a block or uncle reward
		}
		n, _, err := t.uint(r, need["block_number"])
		if err != nil {
			return nil, err
		}
		if err := inRange(t, r, n); err != nil {
			return nil, err
		}
		b := blocks[n]
		var tx *cryoTx
		if b != nil {
			for _, x := range b.txs {
				if bytes.Equal(x.hash, h) {
					tx = x
				}
			}
		}
		if tx == nil {
			return nil, fmt.Errorf("%s: row %d: transaction %s is not in block %d of the transactions dataset", t.path, r, hx(h), n)
		}
		var addr []int
		if s := string(t.rows[r][need["trace_address"]].ByteArray()); s != "" {
			for _, p := range strings.Split(s, "_") {
				k, err := strconv.Atoi(p)
				if err != nil || k < 0 {
					return nil, fmt.Errorf("%s: row %d: trace_address %q is not numbers joined by _", t.path, r, s)
				}
				addr = append(addr, k)
			}
		}
		from, err := t.bytesOf(r, need["action_from"], 20)
		if err != nil {
			return nil, err
		}
		var to []byte
		if cto >= 0 {
			if to, err = t.bytesOf(r, cto, 20); err != nil {
				return nil, err
			}
		}
		value := new(big.Int)
		switch {
		case vb >= 0 && !t.rows[r][vb].IsNull():
			v, err := t.bytesOf(r, vb, 0)
			if err != nil {
				return nil, err
			}
			value.SetBytes(v)
		case vs >= 0 && !t.rows[r][vs].IsNull():
			s := string(t.rows[r][vs].ByteArray())
			if _, ok := value.SetString(s, 10); !ok || value.Sign() < 0 || value.BitLen() > 256 {
				return nil, fmt.Errorf("%s: row %d: action_value %q is not a decimal u256", t.path, r, s)
			}
		}
		bin := func(c int) string {
			if c < 0 {
				return "0x"
			}
			v, err2 := t.bytesOf(r, c, 0)
			if err2 != nil {
				err = err2
			}
			return hx(v)
		}
		typ := string(t.rows[r][need["action_type"]].ByteArray())
		action := map[string]any{}
		result := map[string]any{}
		switch typ {
		case "call":
			ct := "call"
			if ccall >= 0 && !t.rows[r][ccall].IsNull() {
				ct = strings.ReplaceAll(string(t.rows[r][ccall].ByteArray()), "_", "")
			}
			action["callType"] = ct
			action["from"], action["to"], action["value"], action["input"] = hx(from), hx(to), "0x"+value.Text(16), bin(cinput)
			result["output"] = bin(cout)
		case "create":
			action["from"], action["value"], action["init"] = hx(from), "0x"+value.Text(16), bin(cinit)
			if caddr >= 0 {
				a, err := t.bytesOf(r, caddr, 20)
				if err != nil {
					return nil, err
				}
				if a != nil {
					result["address"] = hx(a)
				}
			}
		case "suicide", "selfdestruct":
			typ = "suicide"
			action["address"], action["refundAddress"], action["balance"] = hx(from), hx(to), "0x"+value.Text(16)
		case "reward":
			continue
		default:
			return nil, fmt.Errorf("%s: row %d: action_type %q is not call, create, suicide or reward", t.path, r, typ)
		}
		if err != nil {
			return nil, err
		}
		f := map[string]any{"type": typ, "action": action, "result": result, "transactionHash": hx(h), "transactionPosition": tx.index, "blockNumber": n}
		if cerr >= 0 && !t.rows[r][cerr].IsNull() {
			f["error"] = string(t.rows[r][cerr].ByteArray())
			f["result"] = nil
		}
		out[hx(h)] = append(out[hx(h)], &cryoFrame{addr: addr, obj: f})
	}
	// renumber what cryo left of each transaction's tree
	for h, fs := range out {
		slices.SortStableFunc(fs, func(a, b *cryoFrame) int { return slices.Compare(a.addr, b.addr) })
		if len(fs[0].addr) != 0 {
			return nil, fmt.Errorf("%s: transaction %s has frames but not its top frame (trace_address empty)", t.path, h)
		}
		type node struct {
			addr     []int
			children int
			obj      map[string]any
		}
		nodes := map[string]*node{}
		key := func(a []int) string { return fmt.Sprint(a) }
		for _, f := range fs {
			if len(f.addr) == 0 {
				if nodes[key(nil)] != nil {
					return nil, fmt.Errorf("%s: transaction %s has two top frames", t.path, h)
				}
				nodes[key(nil)] = &node{addr: []int{}, obj: f.obj}
				continue
			}
			p := nodes[key(f.addr[:len(f.addr)-1])]
			if p == nil {
				return nil, fmt.Errorf("%s: transaction %s: frame %s has no parent frame", t.path, h, strings.Trim(strings.ReplaceAll(fmt.Sprint(f.addr), " ", "_"), "[]"))
			}
			if nodes[key(f.addr)] != nil {
				return nil, fmt.Errorf("%s: transaction %s: frame %v appears twice", t.path, h, f.addr)
			}
			na := append(append([]int{}, p.addr...), p.children)
			p.children++
			nodes[key(f.addr)] = &node{addr: na, obj: f.obj}
		}
		for _, n := range nodes {
			n.obj["traceAddress"] = n.addr
			n.obj["subtraces"] = n.children
		}
	}
	return out, nil
}

// failedTop is the top frame of a transaction cryo kept no frame of.
func failedTop(x *cryoTx, n uint64) map[string]any {
	v := "0x0"
	if x.value != nil {
		v = "0x" + x.value.Text(16)
	}
	action := map[string]any{"from": hx(x.from), "value": v}
	typ := "call"
	if x.to != nil {
		action["callType"], action["to"], action["input"] = "call", hx(x.to), "0x"
	} else {
		typ = "create"
		action["init"] = "0x"
	}
	return map[string]any{"type": typ, "action": action, "result": nil, "error": "failed (cryo's traces keep no frame of a failed transaction)",
		"traceAddress": []int{}, "subtraces": 0, "transactionHash": hx(x.hash), "transactionPosition": x.index, "blockNumber": n}
}
