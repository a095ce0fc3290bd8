package trace

import (
	"sort"

	"github.com/flowq/flowq/normalform"
)

// Receipts-only mode.
//
// A bundle with receipts (eth_getBlockReceipts, eth_getTransactionReceipt)
// or with a block's logs (eth_getLogs) and its transactions
// (eth_getBlockByNumber with full transaction objects), but no trace, is
// read from its logs: each transaction becomes a root frame, from its
// sender to its recipient, carrying the transaction's own value when the
// block gives it, and every log of the transaction in log order, as if
// the root frame had emitted them all (Tx.Shape "receipts",
// normalform.ModeReceipts). Transfers are decoded from the logs by the
// same standard ABIs as in a trace; besides them:
//
//   - a Deposit or Withdrawal of a configured wrapped-native contract
//     (WETH9's code: deposit() emits Deposit(msg.sender, msg.value), and
//     withdraw(wad) sends wad to msg.sender before it emits Withdrawal)
//     gives its native leg too: who → contract before the Deposit,
//     contract → who before the Withdrawal; a Deposit the transaction's
//     own value paid for (sender to the contract, the same amount) uses
//     that leg instead of a second one;
//   - σ is unknown for a log's transfer (the caller of the token's
//     transfer could be its sender, a router or a pool) and is the zero
//     address; the native legs above keep theirs (the sender of the
//     transaction; who calls the wrapped native; the contract paying out);
//   - native value moved by internal calls is not seen at all.
//
// A transaction whose status is unknown (logs without receipts) and that
// emitted no log may have failed: its own value is then left out, with a
// note, rather than counted as moved. A transaction's logs are checked as
// a Parity trace's are (checkLogs: logIndex gaps and repeats, the
// receipt's logs and blooms, the header's bloom).

// receiptsOnly assembles the group's transactions from receipts or from
// logs and block bodies, when the group has no trace.
func (g *group) receiptsOnly(rcpt map[normalform.Hash]*receipt, body map[normalform.Hash]*bodyTx, emit func(*normalform.Tx, int)) {
	type src struct {
		hash  normalform.Hash
		index int
		order int
	}
	var txs []src
	switch {
	case len(g.receipts) > 0:
		for i, r := range g.receipts {
			txs = append(txs, src{r.hash, r.index, i})
		}
	case g.logsGiven:
		for _, h := range g.headers {
			for i := range h.txs {
				if h.txs[i].hasFrom {
					txs = append(txs, src{h.txs[i].hash, h.txs[i].index, len(txs)})
				}
			}
		}
	}
	if len(txs) == 0 {
		if len(g.badTx) == 0 {
			g.d.fail(&scanError{path: "$", offset: 0, msg: "the input has no trace, and neither receipts nor a block with its transactions (eth_getBlockByNumber with full transactions) beside its logs: nothing to say who sent what"}, nil)
		}
		return
	}
	sort.SliceStable(txs, func(i, j int) bool { return txs[i].index < txs[j].index })
	logsByTx := map[normalform.Hash][]rlog{}
	if g.logsGiven {
		for _, l := range g.logs {
			logsByTx[l.txHash] = append(logsByTx[l.txHash], l)
		}
	}
	for _, t := range txs {
		if g.badTx[t.hash] {
			continue
		}
		h := t.hash
		tx := &normalform.Tx{Shape: normalform.ShapeReceipts}
		tx.Meta.Hash, tx.Meta.HasHash = h, true
		hdr := g.meta(tx, rcpt, body)
		r, bt := rcpt[h], body[h]
		var logs []rlog
		fromReceipt := false
		switch {
		case g.logsGiven:
			logs = logsByTx[h]
		case r != nil:
			logs, fromReceipt = r.logs, true
		}
		if serr := checkLogs(h, logs, r, fromReceipt, hdr); serr != nil {
			g.d.fail(serr, &h)
			continue
		}
		root := &frame{typ: normalform.Call, off: 0}
		switch {
		case r != nil:
			root.from, root.to = r.from, r.to
			if !r.hasTo {
				root.typ, root.to = normalform.Create, r.created
			}
			root.failed = r.status == normalform.StatusFailed
		case bt != nil:
			root.from, root.to = bt.from, bt.to
			if !bt.hasTo {
				root.typ = normalform.Create
			}
		}
		if bt != nil && bt.hasValue {
			switch {
			case r == nil && len(logs) == 0 && !bt.value.IsZero():
				// It may have failed: a transaction that emitted a log
				// did not (a revert discards its logs), one without
				// any may have.
				tx.Notes = append(tx.Notes, "no receipt and no log: the transaction may have failed, so its own value is left out")
			default:
				root.value, root.hasValue = bt.value, true
			}
		} else {
			tx.Notes = append(tx.Notes, "the block does not give the transaction's value (eth_getBlockByNumber without full transactions): its own native value is not seen")
		}
		if !tx.Meta.HasTo && root.typ == normalform.Create && root.to != (normalform.Address{}) {
			tx.Meta.To, tx.Meta.HasTo = root.to, true
		}
		root.logs = make([]rlog, len(logs))
		copy(root.logs, logs)
		sort.SliceStable(root.logs, func(i, j int) bool { return root.logs[i].index < root.logs[j].index })
		for i := range root.logs {
			root.logs[i].pos = 0
		}
		if err := g.d.build(tx, root); err != nil {
			g.d.fail(err, &h)
			continue
		}
		emit(tx, t.order)
	}
}
