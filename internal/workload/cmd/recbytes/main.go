// Command recbytes says where a synthetic record's bytes go (issue 22):
// it generates SYNTHETIC blocks (package workload), decodes and analyses
// every transaction as the ingest does, builds its record and its value,
// and prints the mean bytes per transaction of the value's parts, of the
// NF key's value (the normal form is under its own key since schema 9;
// since schema 10 its tables refer to the record's addresses and tokens)
// and of the normal form's encoding (EncodeNF): its tables, its step log,
// the rest.
//
//	go run ./internal/workload/cmd/recbytes --blocks 20
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

func main() {
	blocks := flag.Int("blocks", 20, "synthetic blocks of 100 transactions")
	scen := flag.String("scenarios", "examples/scenarios/geth", "directory of scenario bundles")
	flag.Parse()
	if err := run(*blocks, *scen); err != nil {
		fmt.Fprintln(os.Stderr, "recbytes:", err)
		os.Exit(1)
	}
}

func run(blocks int, scen string) error {
	sc, err := workload.LoadScenarios(scen)
	if err != nil {
		return err
	}
	gen, err := workload.New(sc, workload.Options{Seed: 1, BlockTxs: 100})
	if err != nil {
		return err
	}
	cfg := normalform.DefaultConfig()
	var n int
	sum := map[string]int{}
	order := []string{"value", "pre (versions, latency, hash, flags, counts)", "ids (hashes and dictionary addresses)", "post: exact hash", "post: reasons",
		"post: NF checksum (XXH3-64)", "post: from/to/recipient, gross, net, gas, costs (what a row reads)", "post: addresses, tokens",
		"NF key's value (key 9 bytes more)", "NF key: its address and token tables (references to the record's)",
		"NF (EncodeNF) bytes", "NF: step log", "NF: address table", "NF: token table", "NF: balances (left out of the NF key when they are the record's gross and net)",
		"NF: the rest (meta, transfers, tree, analysis)",
		"steps (count)", "transfers (count)", "NF addresses not in the record (count)", "NF values without their balances (the record's; share)"}
	for i := 0; i < blocks; i++ {
		b := gen.Block()
		res := trace.Decode(b.Bundle, trace.Options{Config: cfg, Source: "synthetic"})
		if len(res.Errors) > 0 {
			return fmt.Errorf("block %d: %v", b.Number, res.Errors[0])
		}
		for _, tx := range res.Txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				return err
			}
			rec, err := layout.NewRecord(a, 0)
			if err != nil {
				return err
			}
			e := rec.Parts()
			v := e.Join(layout.IDs{0, 1000, 1000, 1000}, dictIDs(e))
			sum[order[0]] += len(v)
			sum[order[1]] += len(e.Pre)
			sum[order[2]] += len(v) - len(e.Pre) - len(e.Post)
			sum[order[3]] += 32
			reasons := 1 + len(rec.Reasons) // each a one-byte code (every reason the engine gives has one)
			sum[order[4]] += reasons
			sum[order[5]] += 8
			row := *rec
			row.Addresses, row.Tokens = nil, nil
			rowPost := len(row.Parts().Post)
			sum[order[6]] += rowPost - 2 - 32 - reasons - 8 // the two empty lists' counts
			sum[order[7]] += len(e.Post) - rowPost + 2
			nfv := rec.NFValue()
			sum[order[8]] += len(nfv)
			h, err := normalform.ReadHead(rec.NF)
			if err != nil {
				return err
			}
			// the value: form, the head's length and bytes, the tables, the body without the hash (and the balances)
			body := len(rec.NF) - h.BodyAt - 32
			if nfv[0]&4 != 0 {
				body -= h.BalancesEnd - h.BodyAt
				sum[order[19]]++
			}
			sum[order[9]] += len(nfv) - 1 - varintLen(uint64(h.TablesAt)) - h.TablesAt - body
			sum[order[10]] += len(rec.NF)
			steps := a.Steps
			a.Steps = nil
			noSteps := len(normalform.EncodeNF(a))
			a.Steps = steps
			sum[order[11]] += len(rec.NF) - noSteps
			sum[order[12]] += h.ToksAt - h.TablesAt
			sum[order[13]] += h.BodyAt - h.ToksAt
			sum[order[14]] += h.BalancesEnd - h.BodyAt
			sum[order[15]] += noSteps - h.BalancesEnd
			sum[order[16]] += len(steps)
			sum[order[17]] += len(a.Tx.Transfers)
			in := map[normalform.Address]bool{}
			for _, x := range rec.Addresses {
				in[x] = true
			}
			for _, x := range rec.Tokens {
				in[x.Addr] = true
			}
			for _, x := range h.Addrs {
				if !in[x] {
					sum[order[18]]++
				}
			}
			n++
		}
	}
	fmt.Printf("%d synthetic transactions (seed 1): mean bytes per record value\n", n)
	for _, k := range order {
		fmt.Printf("  %-70s %8.1f\n", k, float64(sum[k])/float64(n))
	}
	return nil
}

func varintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// dictIDs gives a record's dictionary addresses ids as an index would:
// in the order they are first met, after about as many structural ids as
// a million synthetic transactions assign (7,000), so that their varints
// are as long as an index's.
func dictIDs(e *layout.Encoded) []uint32 {
	var out []uint32
	for i := 0; i+20 <= len(e.Dict); i += 20 {
		a := string(e.Dict[i : i+20])
		id, ok := seenAddrs[a]
		if !ok {
			id = uint32(7000 + len(seenAddrs))
			seenAddrs[a] = id
		}
		out = append(out, id)
	}
	return out
}

var seenAddrs = map[string]uint32{}
