package export

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

// Format is an export format.
type Format string

const (
	CSV   Format = "csv"
	JSONL Format = "jsonl"
)

// ParseFormat reads an export format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case CSV, JSONL:
		return f, nil
	case "json", "ndjson":
		return JSONL, nil
	}
	return "", fmt.Errorf("unknown export format %q: use csv or jsonl", s)
}

// Columns are the CSV export's columns: first the paper's released
// dataset (hash, block, verdict, reasons, cycle count, per-transaction
// latency in milliseconds), then flowq's.
//
//	hash          transaction hash, 0x and 64 hex digits
//	block         block number (empty when the input did not give it)
//	verdict       arbitrage, warning or none
//	reasons       the reasons, joined by ';'
//	cycles        arbitrage cycles at the principals (normalform.Counts)
//	latency_ms    analysis time in milliseconds (normalization, hashes, encoding)
//	index         position in the block (empty when unknown)
//	tier          confirmed, probable, attempted, uncertain, or empty
//	from, to      the transaction's sender and recipient (to empty for a creation)
//	costs_known   true when a receipt gave the costs
//	gross, net    the balance at the principals per token, as token=amount
//	              joined by ';' (amounts signed, in base units; net empty
//	              when costs are unknown, and folds wrapped native into native)
//	pools, hops, leftovers   normalform.Counts
//	hash_exact, hash_shape, hash_tokens, hash_family   the four structural hashes
var Columns = []string{"hash", "block", "verdict", "reasons", "cycles", "latency_ms",
	"index", "tier", "from", "to", "costs_known", "gross", "net", "pools", "hops", "leftovers",
	"hash_exact", "hash_shape", "hash_tokens", "hash_family"}

// Export writes the records of a block range, in position order, as CSV
// (with a header line of Columns) or as JSON lines (ExportJSON). It
// returns the number of records written.
func Export(ctx context.Context, ix *index.Index, w io.Writer, f Format, blocks index.BlockRange) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	n := 0
	var err error
	switch f {
	case CSV:
		cw := csv.NewWriter(bw)
		if err = cw.Write(Columns); err != nil {
			return 0, err
		}
		err = ix.Records(ctx, blocks, func(r *index.Record) error {
			n++
			return cw.Write(csvRow(r))
		})
		cw.Flush()
		if err == nil {
			err = cw.Error()
		}
	case JSONL:
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		err = ix.Records(ctx, blocks, func(r *index.Record) error {
			n++
			return enc.Encode(ExportRecord(r))
		})
	default:
		return 0, fmt.Errorf("unknown export format %q", f)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return n, err
}

func optBlock(r *index.Record) string {
	if r.Loc.Block == index.UnknownBlock {
		return ""
	}
	return strconv.FormatUint(r.Loc.Block, 10)
}

func latencyMS(r *index.Record) string {
	return strconv.FormatFloat(r.Latency.Seconds()*1000, 'f', 3, 64)
}

func joinReasons(rs []normalform.Reason) string {
	s := make([]string, len(rs))
	for i, x := range rs {
		s[i] = string(x)
	}
	return strings.Join(s, ";")
}

func joinAmounts(as []index.Amount) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.Token.Key() + "=" + a.Amount.String()
	}
	return strings.Join(s, ";")
}

func csvRow(r *index.Record) []string {
	idx, to, net := "", "", ""
	if r.Loc.Known() {
		idx = strconv.FormatUint(uint64(r.Loc.Index), 10)
	}
	if r.HasTo {
		to = normalform.AddrKey(r.To)
	}
	if r.CostsKnown {
		net = joinAmounts(r.Net)
	}
	return []string{r.Hash.Hex(), optBlock(r), r.Verdict.String(), joinReasons(r.Reasons), strconv.Itoa(r.Counts.Cycles), latencyMS(r),
		idx, r.Tier.String(), normalform.AddrKey(r.From), to, strconv.FormatBool(r.CostsKnown), joinAmounts(r.Gross), net,
		strconv.Itoa(r.Counts.Pools), strconv.Itoa(r.Counts.Hops), strconv.Itoa(r.Counts.Leftovers),
		r.Hashes.Exact.Hex(), r.Hashes.Shape.Hex(), r.Hashes.Tokens.Hex(), r.Hashes.Family.Hex()}
}

// ExportJSON is one line of the JSON-lines export: the JSON contract's
// show.TxJSON (the names and types of `flowq inspect --format json`
// and `query --format json`), then the analysis time.
type ExportJSON struct {
	show.TxJSON
	LatencyMS json.Number `json:"latency_ms"`
}

// RecordJSON is a record's show.TxJSON.
func RecordJSON(r *index.Record) show.TxJSON {
	j := show.TxJSON{Verdict: r.Verdict.String(), Tier: r.Tier.String(), Path: r.Path.String(),
		Reasons: show.ReasonStrings(r.Reasons), Gross: amountMap(r.Gross), CostsKnown: r.CostsKnown,
		Hashes: show.HashesToJSON(r.Hashes)}
	j.SetCounts(r.Counts)
	h := r.Hash.Hex()
	j.Tx = &h
	if r.Loc.Block != index.UnknownBlock {
		b := r.Loc.Block
		j.Block = &b
	}
	if r.Loc.Known() {
		i := r.Loc.Index
		j.Index = &i
	}
	if r.HasFrom {
		from := normalform.AddrKey(r.From)
		j.From = &from
	}
	if r.HasTo {
		to := normalform.AddrKey(r.To)
		j.To = &to
	}
	if r.CostsKnown {
		j.Net = amountMap(r.Net)
	}
	return j
}

func amountMap(as []index.Amount) show.Amounts {
	m := make(show.Amounts, len(as))
	for _, a := range as {
		m[a.Token.Key()] = a.Amount.String()
	}
	return m
}

// ExportRecord is a record's JSON-lines form.
func ExportRecord(r *index.Record) ExportJSON {
	return ExportJSON{TxJSON: RecordJSON(r), LatencyMS: json.Number(latencyMS(r))}
}
