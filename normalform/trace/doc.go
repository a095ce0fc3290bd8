// Package trace is flowq's decode layer: it reads the traces Ethereum nodes
// return and builds each transaction's cash flow tree T0 (package
// normalform). It reads bytes, never files or sockets.
//
// # Input shapes
//
// Decode detects the shape of its input by the keys of its objects:
//
//   - geth debug_traceTransaction with {"tracer":"callTracer",
//     "tracerConfig":{"withLog":true}}: a bare frame, or the JSON-RPC
//     response {"jsonrpc","id","result": frame};
//   - geth debug_traceBlockByNumber / ByHash: a list of {"txHash","result"}
//     (an entry with "error" instead of "result" is reported as failed);
//   - Parity trace_transaction / trace_block (flat frames with
//     traceAddress), with the transactions' logs from receipts or
//     eth_getLogs; block reward entries are skipped;
//   - receipts (eth_getTransactionReceipt, eth_getBlockReceipts) and block
//     headers (eth_getBlockByNumber, with transaction hashes or objects),
//     for metadata: from, to, status, type, gasUsed, effectiveGasPrice
//     (or the body's gasPrice before London), baseFeePerGas, miner;
//   - a bundle: one JSON object holding any of "block" (or "header"),
//     "receipts", "traces" (or "trace") and "logs", each exactly as the node
//     returned it, for one transaction or a whole block; a list of bundles;
//   - a JSON-RPC batch response: a list of {"jsonrpc","id","result"};
//   - go-ethereum's tracer test files {"genesis","context","input","result"}
//     (the hash is keccak256 of the raw transaction in "input").
//
// # Transfers
//
// Only the standard ABIs: ERC-20 Transfer (3 topics, 32 data bytes),
// ERC-721 Transfer (4 topics, no data), ERC-1155 TransferSingle and
// TransferBatch, ERC-6909 Transfer (its own topic0: 4 topics, the caller
// and the amount as data; the token is the contract plus the id, as for
// ERC-1155), Deposit and Withdrawal of the configured wrapped-native
// contracts, and native value on CALL, CREATE/CREATE2 and SELFDESTRUCT.
// A log with a transfer signature but another shape is counted in
// DecodeStats.IgnoredLogs, never guessed at. Value on CALLCODE moves from
// the caller to itself and is not a transfer; DELEGATECALL and STATICCALL
// move none. Nothing is taken from a frame that failed or from its
// descendants. Mints (from the null address, and Deposit) and burns (to it,
// and Withdrawal) name the emitting contract instead and carry a flag.
//
// σ is the initiator of the nearest enclosing CALL-type frame: for a log
// emitted in a frame called by A, σ = A; DELEGATECALL and CALLCODE frames
// keep their parent's σ. A native value leaf goes first among the children
// of the frame that receives it, with σ = the caller.
//
// Trace positions number the transfers in execution order: a frame's native
// value, then its logs and child frames interleaved as executed (geth's log
// "position" is the number of child calls before the log).
//
// # Attribution of Parity-style logs
//
// See attribute: logs are aligned to the frames' execution gaps by dynamic
// programming, which recovers every frame of the geth corpus when it is
// flattened to the Parity shape (TestFlattenGethToParity).
//
// # Errors
//
// Every failure is an *Error naming the input, the transaction when it can
// be known, the JSON path and the byte offset. A bad transaction is left out
// and the others of the same file or block are still decoded. The JSON
// scanner validates everything it reads past, decoded or skipped, as
// encoding/json.Valid does (UTF-8 inside strings unchecked, as there): an
// input Valid rejects always gets an error.
package trace
