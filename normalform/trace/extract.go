package trace

import (
	"fmt"
	"slices"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// Event signatures of the standard ABIs flowq decodes, and nothing else.
var (
	sigTransfer       = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	sigTransferSingle = crypto.Keccak256Hash([]byte("TransferSingle(address,address,address,uint256,uint256)"))
	sigTransferBatch  = crypto.Keccak256Hash([]byte("TransferBatch(address,address,address,uint256[],uint256[])"))
	sigDeposit        = crypto.Keccak256Hash([]byte("Deposit(address,uint256)"))
	sigWithdrawal     = crypto.Keccak256Hash([]byte("Withdrawal(address,uint256)"))
	// ERC-6909's Transfer(address caller, address indexed from, address
	// indexed to, uint256 indexed id, uint256 amount): not ERC-20's topic0.
	sigTransfer6909 = crypto.Keccak256Hash([]byte("Transfer(address,address,address,uint256,uint256)"))
)

// build fills tx from the frame tree: every transfer in trace order, the
// decode statistics, and T0, trimmed as it is built (builder.frame).
func (d *decoder) build(tx *normalform.Tx, root *frame) *scanError {
	b := &builder{cfg: d.opt.Config, tx: tx, maxDepth: d.opt.MaxDepth, maxTransfers: d.opt.MaxTransfers,
		scratch: d.buildScratch[:0], leaves: d.buildLeaves[:0]}
	defer func() {
		// frame leaves the scratch stack empty (nil); the leaves are
		// emptied here, so that neither keeps this tree alive.
		clear(b.leaves)
		d.buildScratch, d.buildLeaves = b.scratch[:0], b.leaves[:0]
	}()
	if tx.Shape == normalform.ShapeReceipts {
		b.receipts = true
		if root.hasValue && !root.value.IsZero() && b.cfg.IsWrappedNative(root.to) {
			b.paid, b.payer = &root.value, root.from
		}
	}
	if !tx.Meta.HasFrom {
		tx.Meta.From, tx.Meta.HasFrom = root.from, true
	}
	if !tx.Meta.HasTo && root.typ == normalform.Call {
		tx.Meta.To, tx.Meta.HasTo = root.to, true
	}
	if !tx.Meta.HasReceipt && root.failed {
		tx.Meta.Status = normalform.StatusFailed
	}
	settleLogs(root, &d.pinStack)
	b.size(root)
	n := b.frame(root, root.from, false, true)
	if b.err != nil {
		return b.err
	}
	// Transfers point into tx.Transfers: fix the slice before taking addresses.
	tx.Transfers = b.transfers
	for _, l := range b.leaves {
		l.node.Leaf = &tx.Transfers[l.i]
	}
	if n == &dropped {
		n = nil // no transfer survives
	}
	tx.Root = n
	return nil
}

// dropped stands, among the children of a frame being built, for a child
// that normalform.Trim removes but counts: a degenerate leaf, or a frame
// under which no transfer survives.
var dropped normalform.Node

type builder struct {
	cfg       *normalform.Config
	tx        *normalform.Tx
	transfers []normalform.Transfer
	leaves    []pendingLeaf
	frames    int32
	err       *scanError

	maxDepth, maxTransfers int
	off                    int // the frame being built, for errors

	// receipts: the frame tree is receipts.go's root frame (receipts-only
	// mode). paid is the transaction's own value when it went to a
	// wrapped-native contract from payer: the native leg of the first
	// Deposit of that amount to payer (nil once used).
	receipts bool
	paid     *uint256.Int
	payer    normalform.Address

	nodes                 []normalform.Node  // newNode's chunk
	frameBuf              []normalform.Frame // newFrame's chunk
	kidBuf                []*normalform.Node // kids' chunk (children lists)
	nodeChunk, frameChunk int
	// scratch holds the children of the frames being built, deepest
	// last (builder.frame): a frame's node is made only once they are
	// known, and only when it survives trimming.
	scratch []*normalform.Node
}

// size carves the first chunks of nodes, frames and children lists, and
// the transfer list, to the tree's measure: a node and a frame per frame,
// a leaf per value call and per transfer event (a log of several
// transfers takes more from newNode's next chunk), and the children
// lists' room. A transaction's tree then costs a few allocations, not
// chains of growing chunks.
func (b *builder) size(root *frame) {
	var frames, leaves int
	var walk func(f *frame) bool
	walk = func(f *frame) bool {
		own := 0 // f's own leaves
		if f.hasValue && !f.value.IsZero() {
			own++
		}
		for i := range f.logs {
			if transferLog(&f.logs[i]) {
				own++ // a batch's further transfers grow the lists
			}
		}
		leaves += own
		any := own > 0
		for _, c := range f.calls {
			any = walk(c) || any
		}
		// A frame keeps a node only with a leaf under it and two children
		// or more (one is collapsed into its child, none removed), the
		// root always.
		if f == root || any && own+len(f.calls) >= 2 {
			frames++
		}
		return any
	}
	walk(root)
	if b.maxTransfers > 0 {
		leaves = min(leaves, b.maxTransfers+1)
	}
	if leaves == 0 {
		// No value moves and no transfer is logged: no node survives
		// (frame makes a frame's node only with a leaf under it), and the
		// tree is nil (52 of mainnet block 11017338's 124 transactions).
		// Nothing is carved; newNode and newFrame allocate if asked.
		b.nodes, b.frameBuf, b.kidBuf = nil, nil, nil
		b.transfers = make([]normalform.Transfer, 0)
		b.leaves = b.leaves[:0]
		b.nodeChunk, b.frameChunk = 0, 0
		return
	}
	b.nodes = make([]normalform.Node, frames+leaves)
	b.frameBuf = make([]normalform.Frame, frames)
	// Every node but the root is one child in one list.
	b.kidBuf = make([]*normalform.Node, frames+leaves)
	b.transfers = make([]normalform.Transfer, 0, leaves)
	b.leaves = slices.Grow(b.leaves[:0], leaves)
	b.nodeChunk, b.frameChunk = min(frames+leaves, maxChunk), min(frames, maxChunk)
}

// kids returns an empty children list with room for n, carved from the
// builder's chunk (capped: an append past n moves it out on its own).
func (b *builder) kids(n int) []*normalform.Node {
	if len(b.kidBuf) < n {
		return make([]*normalform.Node, 0, n)
	}
	k := b.kidBuf[:0:n]
	b.kidBuf = b.kidBuf[n:]
	return k
}

// Nodes and frames are allocated in chunks (newNode, newFrame): a
// transaction's tree is built and dropped whole, and one allocation per
// chunk costs the allocator and the collector less than one per node.
const maxChunk = 256

// newNode returns a zero node from the builder's current chunk.
func (b *builder) newNode() *normalform.Node {
	if len(b.nodes) == 0 {
		b.nodeChunk = min(max(2*b.nodeChunk, 8), maxChunk)
		b.nodes = make([]normalform.Node, b.nodeChunk)
	}
	n := &b.nodes[0]
	b.nodes = b.nodes[1:]
	return n
}

// newFrame returns a zero frame from the builder's current chunk.
func (b *builder) newFrame() *normalform.Frame {
	if len(b.frameBuf) == 0 {
		b.frameChunk = min(max(2*b.frameChunk, 4), maxChunk)
		b.frameBuf = make([]normalform.Frame, b.frameChunk)
	}
	f := &b.frameBuf[0]
	b.frameBuf = b.frameBuf[1:]
	return f
}

type pendingLeaf struct {
	node *normalform.Node
	i    int
}

// leaf appends a transfer and returns its (not yet linked) leaf node.
func (b *builder) leaf(t normalform.Transfer) *normalform.Node {
	if max := b.maxTransfers; max > 0 && len(b.transfers) >= max && b.err == nil {
		b.err = &scanError{offset: b.off, msg: fmt.Sprintf(limitTransfersMsg, max, max)}
	}
	t.Pos = int32(len(b.transfers))
	b.transfers = append(b.transfers, t)
	if normalform.Degenerate(&t) {
		b.tx.Stats.Degenerate++
		return &dropped // trimmed: counted among its frame's children, no node
	}
	n := b.newNode()
	b.leaves = append(b.leaves, pendingLeaf{n, len(b.transfers) - 1})
	return n
}

// frame builds the call node of f. sigma is σ for the events f emits: the
// initiator of the nearest enclosing CALL-type frame (DELEGATECALL and
// CALLCODE keep their parent's). It returns nil for reverted frames, which
// contribute nothing.
//
// The node comes out trimmed, as normalform.Trim would leave it (T0): f's
// children are built first, on b.scratch, and then f's node is made only
// when it survives. Trim's rules (normalform.Degenerate and
// normalform.FrameFateOf decide, as they do for Trim), with its count of
// the children "as decoded" (reverted frames are not children; degenerate leaves and frames
// with nothing under them are, and stand as &dropped until removed):
// a degenerate leaf is removed; a frame with no child left is removed
// (&dropped is returned); a frame other than the root with exactly one
// child as decoded is that child; any other keeps a node with the
// children left. Most frames of a real transaction (balance checks,
// token calls with one Transfer) then cost no node, frame or list.
func (b *builder) frame(f *frame, parentSigma normalform.Address, reverted, isRoot bool) *normalform.Node {
	if f.depth > b.maxDepth && b.err == nil {
		b.err = &scanError{offset: f.off, msg: fmt.Sprintf(limitDepthMsg, f.depth, b.maxDepth)}
	}
	if b.err != nil {
		return nil
	}
	b.off = f.off
	idx := b.frames
	b.frames++
	b.tx.Stats.Frames++
	reverted = reverted || f.failed
	if reverted {
		b.tx.Stats.RevertedFrames++
		for _, c := range f.calls {
			b.countReverted(c)
		}
		return nil
	}
	sigma := f.from
	if f.typ == normalform.DelegateCall || f.typ == normalform.CallCode {
		sigma = parentSigma
	}
	mark := len(b.scratch)
	// Native value enters with the call: its leaf comes first, beside the
	// events the receiving frame emits (WETH's Deposit, for one).
	if f.hasValue && !f.value.IsZero() {
		switch f.typ {
		case normalform.Call, normalform.Create, normalform.Create2:
			ev := normalform.EvNativeCall
			if f.typ != normalform.Call {
				ev = normalform.EvNativeCreate
			}
			b.scratch = append(b.scratch, b.leaf(normalform.Transfer{
				From: f.from, To: f.to, Amount: f.value, Token: normalform.NativeToken,
				Sender: f.from, Flags: normalform.NativeValue, Event: ev, LogIndex: -1, Frame: idx}))
		}
	}
	li := 0
	for gap := 0; gap <= len(f.calls); gap++ {
		for ; li < len(f.logs) && f.logs[li].pos == gap; li++ {
			b.tx.Stats.Logs++
			b.scratch = b.logLeaves(b.scratch, &f.logs[li], sigma, idx)
		}
		if gap == len(f.calls) {
			break
		}
		c := f.calls[gap]
		if c.typ == normalform.SelfDestruct {
			// A SELFDESTRUCT runs no code: its value leaf belongs to the
			// frame that executed it.
			b.frames++
			b.tx.Stats.Frames++
			if c.failed {
				b.tx.Stats.RevertedFrames++
				continue
			}
			if c.hasValue && !c.value.IsZero() {
				b.scratch = append(b.scratch, b.leaf(normalform.Transfer{
					From: c.from, To: c.to, Amount: c.value, Token: normalform.NativeToken,
					Sender: sigma, Flags: normalform.NativeValue, Event: normalform.EvNativeSelfdestruct, LogIndex: -1, Frame: b.frames - 1}))
			}
			continue
		}
		if cn := b.frame(c, sigma, false, false); cn != nil {
			b.scratch = append(b.scratch, cn)
		}
	}
	// Trimmed (see above).
	kids := b.scratch[mark:]
	raw := len(kids)
	live := kids[:0]
	for _, k := range kids {
		if k != &dropped {
			live = append(live, k)
		}
	}
	var out *normalform.Node
	switch normalform.FrameFateOf(raw, len(live), isRoot) {
	case normalform.FrameRemoved:
		out = &dropped
	case normalform.FrameCollapsed:
		out = live[0]
	default:
		out = b.newNode()
		out.Frame = b.newFrame()
		*out.Frame = normalform.Frame{Type: f.typ, From: f.from, To: f.to, Index: idx, Depth: int32(f.depth), Sender: sigma}
		out.Children = append(b.kids(len(live)), live...)
	}
	clear(kids)
	b.scratch = b.scratch[:mark]
	return out
}

// settleLogs gives every frame's logs a canonical position among the
// frame's child calls, the same in both trace shapes.
//
// The geth shape says where each log sits among its frame's calls; the
// Parity shape (trace_* with receipts) does not: a receipt orders the logs,
// and the trace orders the calls, but a call that emits no log (a plain
// native-value call, a call into a contract that only moves ETH) can be
// placed on either side of a log of its parent. A contract that logs and
// then pays ETH (Uniswap V4's PositionManager mints the position NFT in its
// unlock callback, then settles the ETH with a value call) would decode to
// one transfer order from callTracer and to another from trace_*, and the
// orders reduce to different normal forms.
//
// What both shapes know is the order of the logs that become transfers: a
// log cannot move past a child call whose subtree emits a transfer log (it
// would break the receipt's order), and it can move past any other. So each
// log goes to the latest gap before the first later child whose subtree
// emits a transfer log (or to the frame's end): its transfers then follow
// the native-value leaves of the calls it could not be placed against, in
// both shapes. Transfer logs keep their receipt order, every leaf keeps its
// frame, and only native-value leaves (and logs that make no transfer)
// change sides. The transfer logs' frames are the attributor's
// (attribute.go), which the shape tests hold equal to geth's.
func settleLogs(root *frame, st *[]int) {
	// Each frame's pin list is a region of one stack (*st), above its
	// ancestors' and below its children's, while its children are walked.
	var walk func(f *frame) bool
	walk = func(f *frame) bool {
		if f.failed {
			for _, c := range f.calls {
				walk(c)
			}
			return false // a reverted frame's logs are not in the receipt
		}
		// pin[g] is the first child at index >= g whose subtree emits a
		// transfer log (len(f.calls) when none does): first, whether each
		// child's subtree emits one (1 or 0), then the pins, from the end.
		n := len(f.calls)
		base := len(*st)
		*st = slices.Grow(*st, n+1)[:base+n+1]
		any := false
		for i, c := range f.calls {
			e := walk(c)
			(*st)[base+i] = 0
			if e {
				(*st)[base+i], any = 1, true
			}
		}
		pin := (*st)[base : base+n+1]
		pin[n] = n
		for g := n - 1; g >= 0; g-- {
			if pin[g] == 1 {
				pin[g] = g
			} else {
				pin[g] = pin[g+1]
			}
		}
		for i := range f.logs {
			l := &f.logs[i]
			if l.pos >= 0 && l.pos <= n {
				l.pos = pin[l.pos]
			}
			any = any || transferLog(l)
		}
		*st = (*st)[:base]
		return any
	}
	walk(root)
}

// transferLog reports whether l is one of the events flowq reads as a
// transfer (whatever its operands): the logs that pin a call's place.
func transferLog(l *rlog) bool {
	if len(l.topics) == 0 {
		return false
	}
	switch l.topics[0] {
	case sigTransfer, sigTransferSingle, sigTransferBatch, sigTransfer6909, sigDeposit, sigWithdrawal:
		return true
	}
	return false
}

func (b *builder) countReverted(f *frame) {
	b.frames++
	b.tx.Stats.Frames++
	b.tx.Stats.RevertedFrames++
	for _, c := range f.calls {
		b.countReverted(c)
	}
}

// word reads the i-th 32-byte word of data as an address, checking that its
// upper 12 bytes are zero (as the ABI encodes an address).
func topicAddr(h normalform.Hash) (normalform.Address, bool) {
	for _, c := range h[:12] {
		if c != 0 {
			return normalform.Address{}, false
		}
	}
	var a normalform.Address
	copy(a[:], h[12:])
	return a, true
}

var zeroAddr normalform.Address

// logLeaves decodes one log into zero or more transfers and appends their
// leaves. Logs with a transfer signature but a non-standard shape are
// counted as ignored, never guessed at.
func (b *builder) logLeaves(dst []*normalform.Node, l *rlog, sigma normalform.Address, frame int32) []*normalform.Node {
	if len(l.topics) == 0 {
		return dst
	}
	if b.receipts {
		sigma = zeroAddr // unknown: who called the token is not in a receipt
	}
	base := normalform.Transfer{Sender: sigma, LogIndex: int32(l.index), Frame: frame}
	ignored := func() []*normalform.Node { b.tx.Stats.IgnoredLogs++; return dst }
	switch l.topics[0] {
	case sigTransfer:
		from, ok1 := topicAddrAt(l, 1)
		to, ok2 := topicAddrAt(l, 2)
		if !ok1 || !ok2 {
			return ignored()
		}
		t := base
		t.From, t.To = from, to
		switch {
		case len(l.topics) == 3 && len(l.data) == 32:
			t.Token = normalform.FungibleToken(l.addr)
			t.Amount.SetBytes32(l.data)
			t.Event = normalform.EvERC20Transfer
		case len(l.topics) == 4 && len(l.data) == 0:
			t.Token = normalform.Token{Addr: l.addr, Kind: normalform.NFT721}
			t.Token.ID.SetBytes32(l.topics[3][:])
			t.Amount.SetOne()
			t.Flags |= normalform.NFT
			t.Event = normalform.EvERC721Transfer
		default:
			return ignored()
		}
		b.tx.Stats.TransferLogs++
		return append(dst, b.leaf(mintBurn(t, l.addr)))
	case sigTransferSingle:
		from, ok1 := topicAddrAt(l, 2)
		to, ok2 := topicAddrAt(l, 3)
		if !ok1 || !ok2 || len(l.topics) != 4 || len(l.data) != 64 {
			return ignored()
		}
		t := base
		t.From, t.To = from, to
		t.Token = normalform.Token{Addr: l.addr, Kind: normalform.Multi1155}
		t.Token.ID.SetBytes32(l.data[:32])
		t.Amount.SetBytes32(l.data[32:64])
		t.Flags |= normalform.NFT
		t.Event = normalform.EvTransferSingle
		b.tx.Stats.TransferLogs++
		return append(dst, b.leaf(mintBurn(t, l.addr)))
	case sigTransferBatch:
		from, ok1 := topicAddrAt(l, 2)
		to, ok2 := topicAddrAt(l, 3)
		if !ok1 || !ok2 || len(l.topics) != 4 {
			return ignored()
		}
		ids, ok3 := abiUintArray(l.data, 0)
		vals, ok4 := abiUintArray(l.data, 1)
		if !ok3 || !ok4 || len(ids) != len(vals) {
			return ignored()
		}
		b.tx.Stats.TransferLogs++
		for k := range ids {
			t := base
			t.From, t.To = from, to
			t.Token = normalform.Token{Addr: l.addr, Kind: normalform.Multi1155, ID: ids[k]}
			t.Amount = vals[k]
			t.Flags |= normalform.NFT
			t.Event = normalform.EvTransferBatch
			dst = append(dst, b.leaf(mintBurn(t, l.addr)))
		}
		return dst
	case sigTransfer6909:
		from, ok1 := topicAddrAt(l, 1)
		to, ok2 := topicAddrAt(l, 2)
		if !ok1 || !ok2 || len(l.topics) != 4 || len(l.data) != 64 {
			return ignored()
		}
		if _, ok := topicAddr(normalform.Hash(l.data[:32])); !ok { // caller: an address
			return ignored()
		}
		t := base
		t.From, t.To = from, to
		t.Token = normalform.Token{Addr: l.addr, Kind: normalform.Multi6909}
		t.Token.ID.SetBytes32(l.topics[3][:])
		t.Amount.SetBytes32(l.data[32:64])
		t.Event = normalform.EvERC6909Transfer
		b.tx.Stats.TransferLogs++
		return append(dst, b.leaf(mintBurn(t, l.addr)))
	case sigDeposit, sigWithdrawal:
		if !b.cfg.IsWrappedNative(l.addr) {
			return dst
		}
		who, ok := topicAddrAt(l, 1)
		if !ok || len(l.topics) != 2 || len(l.data) != 32 {
			return ignored()
		}
		t := base
		t.Token = normalform.FungibleToken(l.addr)
		t.Amount.SetBytes32(l.data)
		if l.topics[0] == sigDeposit {
			t.From, t.To, t.Flags, t.Event = l.addr, who, normalform.Mint, normalform.EvDeposit
		} else {
			t.From, t.To, t.Flags, t.Event = who, l.addr, normalform.Burn, normalform.EvWithdrawal
		}
		b.tx.Stats.TransferLogs++
		if b.receipts {
			dst = b.impliedNative(dst, l, who, &t)
		}
		return append(dst, b.leaf(t))
	}
	return dst
}

// impliedNative gives, in receipts-only mode, the native leg of a
// wrapped-native Deposit or Withdrawal (receipts.go), before the event's
// own transfer t, whose σ it sets: the caller of the wrapped native, who.
func (b *builder) impliedNative(dst []*normalform.Node, l *rlog, who normalform.Address, t *normalform.Transfer) []*normalform.Node {
	t.Sender = who
	n := normalform.Transfer{Token: normalform.NativeToken, Amount: t.Amount, Flags: normalform.NativeValue,
		Event: normalform.EvNativeCall, LogIndex: -1, Frame: t.Frame}
	if l.topics[0] == sigDeposit {
		if b.paid != nil && who == b.payer && b.paid.Eq(&t.Amount) {
			b.paid = nil // the transaction's own value paid for it
			return dst
		}
		n.From, n.To, n.Sender = who, l.addr, who
	} else {
		n.From, n.To, n.Sender = l.addr, who, l.addr
	}
	return append(dst, b.leaf(n))
}

func topicAddrAt(l *rlog, i int) (normalform.Address, bool) {
	if i >= len(l.topics) {
		return normalform.Address{}, false
	}
	return topicAddr(l.topics[i])
}

// mintBurn names the emitting contract instead of the null address and sets
// the flag.
func mintBurn(t normalform.Transfer, emitter normalform.Address) normalform.Transfer {
	if t.From == zeroAddr {
		t.From = emitter
		t.Flags |= normalform.Mint
	}
	if t.To == zeroAddr {
		t.To = emitter
		t.Flags |= normalform.Burn
	}
	return t
}

// abiUintArray decodes the k-th head slot of data as the offset of a
// uint256[] and returns its elements. It checks every bound.
func abiUintArray(data []byte, k int) ([]uint256.Int, bool) {
	if len(data) < 32*(k+1) {
		return nil, false
	}
	var off uint256.Int
	off.SetBytes32(data[32*k : 32*(k+1)])
	if !off.IsUint64() || off.Uint64() > uint64(len(data)) || off.Uint64()%32 != 0 {
		return nil, false
	}
	o := int(off.Uint64())
	if o+32 > len(data) {
		return nil, false
	}
	var n uint256.Int
	n.SetBytes32(data[o : o+32])
	if !n.IsUint64() || n.Uint64() > uint64((len(data)-o-32)/32) {
		return nil, false
	}
	out := make([]uint256.Int, n.Uint64())
	for i := range out {
		p := o + 32 + 32*i
		out[i].SetBytes32(data[p : p+32])
	}
	return out, true
}
