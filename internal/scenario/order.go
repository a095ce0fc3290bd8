package scenario

import (
	"github.com/ethereum/go-ethereum/core/types"
)

// The fifth phase: a contract that emits a transfer log and makes a value
// call in one frame, in both orders (contracts/LogPay.sol). The Parity trace
// shape (trace_* with receipts) orders the logs and the calls each on its
// own but not against each other when the call emits no log; the decoder
// gives such logs one canonical place (normalform/trace, settleLogs), so
// both shapes decode each transaction to the same transfers, normal form
// and verdict (TestLogAndValueCallBothShapes).

// setupOrder deploys the ticket seller, paying the collector.
func (w *World) setupOrder() {
	w.deploy("ticketSeller", "deployer", "LogPay", w.A("collector"))
	w.flush()
	w.Tokens = append(w.Tokens, w.A("ticketSeller"))
}

func orderScenarios() []Scenario {
	buy := func(method string) func(w *World) *types.Transaction {
		return func(w *World) *types.Transaction {
			s := w.A("ticketSeller")
			return w.newTx("user", &s, ether("0.3"), w.callData(s, method), scenarioGas)
		}
	}
	return []Scenario{
		{
			Name: "log_then_pay",
			Description: "a user buys tickets for 0.3 ETH: the seller mints them (an ERC-20 Transfer from the zero address) and then, in the same frame, " +
				"forwards the ETH to its collector with a value call that emits no log",
			Class: "none",
			Notes: "the Parity shape cannot tell whether the log came before or after the call; both shapes decode it to the same order (the mint after the payment)",
			build: buy("buyLogThenPay"),
		},
		{
			Name:        "pay_then_log",
			Description: "a user buys tickets for 0.3 ETH: the seller forwards the ETH to its collector with a value call and then, in the same frame, mints the tickets",
			Class:       "none",
			Notes:       "the control of log_then_pay: the same transfers in the order both shapes see",
			build:       buy("buyPayThenLog"),
		},
	}
}
