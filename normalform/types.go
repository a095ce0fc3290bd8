package normalform

import (
	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
)

// Address is a 20-byte account address.
type Address = common.Address

// Hash is a 32-byte hash (transaction or block hash).
type Hash = common.Hash

// NativeAddress is the pseudo-address that names a chain's native asset
// (ETH, BNB, ...) wherever a token address is expected.
var NativeAddress = common.HexToAddress("0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee")

// TokenKind says which standard a token follows.
type TokenKind uint8

const (
	// Fungible is an ERC-20 token (or a wrapped-native contract).
	Fungible TokenKind = iota
	// Native is the chain's native asset; its Addr is NativeAddress.
	Native
	// NFT721 is one ERC-721 token: contract plus id, amount always 1.
	NFT721
	// Multi1155 is one ERC-1155 token class: contract plus id.
	Multi1155
	// Multi6909 is one ERC-6909 token: contract plus id (Uniswap V4's
	// PoolManager keeps its claims so, the id being the currency).
	Multi6909
)

func (k TokenKind) String() string {
	switch k {
	case Fungible:
		return "erc20"
	case Native:
		return "native"
	case NFT721:
		return "erc721"
	case Multi1155:
		return "erc1155"
	case Multi6909:
		return "erc6909"
	}
	return "unknown"
}

// Token is τ: a token type. It is a comparable value and can key maps.
// For ERC-721, ERC-1155 and ERC-6909 the id is part of the token's identity.
type Token struct {
	Addr Address
	Kind TokenKind // beside Addr, in its padding: a Token is 56 bytes, not 64
	ID   uint256.Int
}

// NativeToken is the chain's native asset.
var NativeToken = Token{Addr: NativeAddress, Kind: Native}

// FungibleToken returns the ERC-20 token at addr.
func FungibleToken(addr Address) Token { return Token{Addr: addr, Kind: Fungible} }

// HasID reports whether the token carries an id (ERC-721, ERC-1155,
// ERC-6909).
func (t Token) HasID() bool { return t.Kind == NFT721 || t.Kind == Multi1155 || t.Kind == Multi6909 }

// Key is the token's canonical text form: the lowercase contract address,
// followed by "/" and the decimal id for ERC-721, ERC-1155 and ERC-6909
// tokens. The
// native asset is the pseudo-address 0xeeee...eeee.
func (t Token) Key() string {
	s := lowerHex(t.Addr)
	if t.HasID() {
		s += "/" + t.ID.Dec()
	}
	return s
}

func lowerHex(a Address) string {
	var b [42]byte
	return string(appendHex(b[:0], a))
}

// appendHex appends a's 0x-prefixed lower-case hex to b.
func appendHex(b []byte, a Address) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '0', 'x')
	for _, c := range a {
		b = append(b, digits[c>>4], digits[c&0xf])
	}
	return b
}

// AddrKey is the lowercase 0x form of an address.
func AddrKey(a Address) string { return lowerHex(a) }

// Flags qualify a transfer.
type Flags uint8

const (
	// Mint: the transfer came out of the null address (or is a wrapped-native
	// Deposit); its source names the emitting contract instead.
	Mint Flags = 1 << iota
	// Burn: the transfer went to the null address (or is a wrapped-native
	// Withdrawal); its destination names the emitting contract instead.
	Burn
	// NativeValue: native value moved by CALL, CREATE or SELFDESTRUCT.
	NativeValue
	// NFT: an ERC-721 or ERC-1155 transfer.
	NFT
)

func (f Flags) String() string {
	s := ""
	add := func(x string) {
		if s != "" {
			s += ","
		}
		s += x
	}
	if f&Mint != 0 {
		add("mint")
	}
	if f&Burn != 0 {
		add("burn")
	}
	if f&NativeValue != 0 {
		add("native")
	}
	if f&NFT != 0 {
		add("nft")
	}
	return s
}

// Event names the trace event a transfer was decoded from.
type Event uint8

const (
	EvNativeCall Event = iota // value on CALL / CALLCODE frames' entry
	EvNativeCreate
	EvNativeSelfdestruct
	EvERC20Transfer
	EvERC721Transfer
	EvTransferSingle
	EvTransferBatch
	EvDeposit
	EvWithdrawal
	EvERC6909Transfer
)

var eventNames = [...]string{"call", "create", "selfdestruct", "Transfer", "Transfer721", "TransferSingle", "TransferBatch", "Deposit", "Withdrawal", "Transfer6909"}

func (e Event) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return "unknown"
}

// Transfer is the paper's t = (s, d, a, τ, σ), with its trace position and
// provenance.
type Transfer struct {
	From Address // s
	To   Address // d
	// Pos is the transfer's trace position: its rank among the transaction's
	// value-moving events in execution order. Unique within a transaction.
	Pos   int32
	Flags Flags
	Event Event
	// The fields above are what the rules' premises and the root tracker
	// read first (endpoints, mint and burn, position): they share the
	// transfer's first 48 bytes, so that a premise on a transfer not in
	// the cache misses once, not three times (issue 22, session 6).
	Amount uint256.Int // a
	Token  Token       // τ
	Sender Address     // σ: initiator of the nearest enclosing CALL-type frame
	// LogIndex is the log's index in the transaction's receipt, or -1 for
	// native value.
	LogIndex int32
	// Frame is the pre-order index of the call frame the event belongs to.
	Frame int32
}

// Is reports whether the flag is set.
func (t *Transfer) Is(f Flags) bool { return t.Flags&f != 0 }

// CallType is the kind of a call frame.
type CallType uint8

const (
	Call CallType = iota
	StaticCall
	DelegateCall
	CallCode
	Create
	Create2
	SelfDestruct
)

var callTypeNames = [...]string{"CALL", "STATICCALL", "DELEGATECALL", "CALLCODE", "CREATE", "CREATE2", "SELFDESTRUCT"}

func (c CallType) String() string {
	if int(c) < len(callTypeNames) {
		return callTypeNames[c]
	}
	return "UNKNOWN"
}

// Frame describes one call frame of the trace: it is the payload of a call
// node of the cash flow tree.
type Frame struct {
	Type  CallType
	From  Address // caller (for DELEGATECALL: the context the code runs in)
	To    Address // callee: the address whose code runs (created address for CREATE)
	Index int32   // pre-order index among all frames of the trace
	Depth int32   // 0 for the transaction's top frame
	// Sender is σ for the events this frame emits: the initiator of the
	// nearest enclosing CALL-type frame (its own caller, except for
	// DELEGATECALL and CALLCODE, which keep their parent's).
	Sender Address
}

// Node is a node of a cash flow tree (Definition "Cash Flow Tree"): a leaf
// carrying one transfer, a chain node carrying a labelled sequence of
// transfers (built by the rewriting engine), or a call node carrying a frame
// and its children in trace order.
type Node struct {
	Leaf     *Transfer // non-nil for a leaf
	Chain    *Chain    // non-nil for a chain node
	Frame    *Frame    // non-nil for a call node
	Children []*Node

	// built: the kernel built this chain node (not T0's, nor a decoded
	// normal form's), so that once its chain is an operand below the
	// root the node may carry the result (kernel.build). The root
	// tracker's bookkeeping is its own, by kid number (rootTracker.junc,
	// pending): a node is 56 bytes, and the kernel writes nothing into
	// T0's nodes (issue 22, session 8).
	built bool
}

// IsLeaf reports whether n is a leaf.
func (n *Node) IsLeaf() bool { return n.Leaf != nil }

// Leaves appends the transfers under n, in tree order, to dst.
func (n *Node) Leaves(dst []*Transfer) []*Transfer {
	if n == nil {
		return dst
	}
	if n.Leaf != nil {
		return append(dst, n.Leaf)
	}
	if n.Chain != nil {
		return n.Chain.Transfers(dst)
	}
	for _, c := range n.Children {
		dst = c.Leaves(dst)
	}
	return dst
}

// CountFrames returns the number of call nodes under n, n included.
func (n *Node) CountFrames() int {
	if n == nil || n.Frame == nil {
		return 0
	}
	k := 1
	for _, c := range n.Children {
		k += c.CountFrames()
	}
	return k
}

// Status is a transaction's receipt status.
type Status uint8

const (
	StatusUnknown Status = iota
	StatusSuccess
	StatusFailed
)

func (s Status) String() string {
	switch s {
	case StatusSuccess:
		return "success"
	case StatusFailed:
		return "failed"
	}
	return "unknown"
}

// Meta is what the transaction's receipt, body and block header say about
// it. A field is meaningful only when its Has* flag is set: flowq never
// guesses a cost it was not given.
type Meta struct {
	Hash     Hash
	HasHash  bool
	Block    uint64
	HasBlock bool
	Index    int // position in the block
	HasIndex bool

	From, To Address // To is zero for contract creation
	HasFrom  bool
	HasTo    bool

	// From the receipt.
	HasReceipt        bool
	Status            Status
	Type              uint8
	GasUsed           uint64
	EffectiveGasPrice uint256.Int

	// From the block header.
	HasHeader  bool
	BaseFee    uint256.Int // zero before London
	HasBaseFee bool
	Miner      Address
	Timestamp  uint64
}

// DecodeStats count what the decoder saw and what it kept.
type DecodeStats struct {
	Frames         int `json:"frames"`          // call frames in the trace
	RevertedFrames int `json:"reverted_frames"` // frames that failed, or whose ancestor failed
	Logs           int `json:"logs"`            // logs considered (in frames that did not revert)
	TransferLogs   int `json:"transfer_logs"`   // logs that decoded to at least one transfer
	IgnoredLogs    int `json:"ignored_logs"`    // logs with a transfer signature but a non-standard shape
	Degenerate     int `json:"degenerate"`      // zero-amount transfers with σ = s, dropped by trimming
}

// Tx is one decoded transaction: its metadata, every transfer the trace
// carries (in trace order) and its trimmed cash flow tree T0.
type Tx struct {
	Meta      Meta
	Transfers []Transfer // in trace order (Pos ascending), degenerate ones included
	Root      *Node      // T0; nil when no transfer survives
	Stats     DecodeStats
	Shape     string // the input shape it was read from: "geth", "parity", "receipts"
	Notes     []string
}

// Mode is what an analysis was made from: call traces, or receipts alone
// (a bundle or a fetch without traces: the transfers the logs carry, in
// log order, under the root frame).
type Mode uint8

const (
	// ModeTraces: the transaction's call trace, with its logs.
	ModeTraces Mode = iota
	// ModeReceipts: receipts (and the block) without a trace. Native value
	// moved by internal calls, other than the transaction's own value and
	// the wrapped native's Deposit and Withdrawal, is not seen; nor are
	// the senders σ of the logs' transfers, nor frame nesting.
	ModeReceipts
)

// ReceiptsBlind says what an analysis in ModeReceipts cannot see.
const ReceiptsBlind = "no trace: native value moved by internal calls, other than the transaction's own value and wrapped-native deposits and withdrawals, is not seen; nor are the senders σ of the transfers (shown as the zero address) or the call frames"

// ShapeReceipts is Tx.Shape of a transaction decoded from receipts alone.
const ShapeReceipts = "receipts"

// Mode says what the transaction was decoded from.
func (tx *Tx) Mode() Mode {
	if tx.Shape == ShapeReceipts {
		return ModeReceipts
	}
	return ModeTraces
}
