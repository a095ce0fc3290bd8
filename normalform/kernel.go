package normalform

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Step is one entry of the rewrite log: the rule, where it fired, its
// operands and its result, and what its note says.
//
// The kernel does not write notes while it rewrites: a step it logs
// carries the chain it built or relabelled and the label it had then
// (note), and NoteText renders the gist (label, endpoints, tokens) when
// the step is shown or stored. Note, when set, is the note's text as
// given (a decoded step's, or one written by a stage after the kernel)
// and is shown as it is.
type Step struct {
	Rule Rule
	// The note's label and kind (see stepNote), in the room between Rule
	// and Frame: a step is 80 bytes, not 88, and the kernel logs about
	// two per transfer.
	noteLabel Label
	noteKind  noteKind
	Frame     int32    // index of the frame node where it fired
	Operands  []string // "#3" for transfer 3, "C5" for chain 5, "frame 12" for a lift
	Result    string   // the chain it built or relabelled, or what a lift moved
	Note      string   // a readable gist given as text (see NoteText)
	note      stepNote // the note's structured data, rendered by NoteText
}

func (s Step) String() string {
	op := strings.Join(s.Operands, ", ")
	if note := s.NoteText(); note != "" {
		return fmt.Sprintf("%-8s at frame %d: %s -> %s  %s", s.Rule, s.Frame, op, s.Result, note)
	}
	return fmt.Sprintf("%-8s at frame %d: %s -> %s", s.Rule, s.Frame, op, s.Result)
}

// kernel is the deterministic rewriting kernel. The rules, their
// premises, operands, orientations, labels and priority are ruleTable's
// (rules.go): the kernel reads which rules to try, in what order, from it.
// Its policy (the package documentation states it in full):
//
//   - leaf stage, bottom-up: a frame's child frames are reduced first and
//     their children lifted into it, in place and in order; then its
//     children are scanned as adjacent pairs, left to right, trying the
//     leaf rules R1–R10 in that priority; each rule is tried on the pair
//     in sibling order, then reversed. A rewrite replaces the pair by its
//     result at the left position and the scan backs up one position.
//   - at the root, after the leaf scan finds nothing, the node rules
//     R11–R13 are tried on all pairs (i, j), i < j, in lexicographic order,
//     same priority and orientation policy; the first that fires is
//     applied and the leaf scan runs again. This is the structural fixpoint.
//   - then annotation (R14, R15) labels every closed unlabelled chain, and
//     connection joins the first eligible pair; repeated until nothing
//     changes; then R16.
type kernel struct {
	cfg       *Config
	an        *Analysis // whose principals the rules read (principal)
	steps     []Step
	stepRoom  int // the steps the tree may log (reserve): the log's array is made this size at its first step
	nextID    int32
	err       error
	tr        *rootTracker // the root's partner index during the structural fixpoint
	sib       siblings     // a frame's children during its leaf pass (reused)
	opsBuf    []string     // the step log's operand pairs, allocated in blocks
	buf       []byte       // scratch for a lift's result
	stack     []*Node      // reduce's children of the frames being reduced, innermost last
	builtSlab []builtNode  // the rest of the block built nodes are carved from
	leafSlab  []Chain      // the rest of the block leaf chains (and chains for reused nodes) are carved from
	reuse     bool         // build may put its result in a consumed operand's node (see reduce)
	deltas    deltaSlab    // the blocks built chains' small δs are carved from
	slabN     int          // the size of a new block (reserve's hint; 0: slabSize)
	opsN      int          // the size of a new block of operands (reserve's hint; 0: 128)
	texts     []byte       // the rest of the block the lifts' results are carved from (see text)
	warm      bool         // k came from the pool: its pointer-free blocks' rests carry over, new ones are full

	// Names of leaves ("#3"), built chains ("C5") and frames ("frame 12")
	// for the step log, made in blocks (see numNames).
	leafNames, chainNames, frameNames numNames
}

// kernelPool keeps kernels between analyses for their scratch (the
// sibling links, the lift-name buffer, the step log's working array) and
// for the unused rests of the blocks of small δs, operand lists and lift
// texts: a kernel is otherwise made fresh for every transaction. What a
// kernel built (steps, chains, nodes, names, texts) is the analysis's and
// is never reused: a block's rest holds only elements no analysis was
// given, and the next analysis carves its own from there
// (releaseKernel). Each element of a block goes to one analysis, once.
//
// Only blocks that lead to no analysis are shared so: δ entries and texts
// hold no pointers, and operand lists hold strings only (names and
// texts). A block of chains or nodes shared by two analyses would let one
// kept analysis hold the other's tree, and through its other blocks a
// third's: those blocks stay each analysis's own.
var kernelPool sync.Pool

// kernelKeep bounds the scratch a kept kernel holds (sibling slots, and
// reduce's stack): 1<<16 slots are 512 KB of links and 512 KB of stack,
// so that a transaction of up to 65,536 transfers reuses them instead of
// allocating its own (issue 22, session 8).
const kernelKeep = 1 << 16

// newKernel returns an empty kernel for cfg, from the pool when it can.
func newKernel(cfg *Config, an *Analysis) *kernel {
	k, _ := kernelPool.Get().(*kernel)
	if k == nil {
		k = &kernel{}
	}
	k.cfg, k.an = cfg, an
	return k
}

// principal is k.an.Principal (a pointer to the analysis, not the method
// value, which was an allocation per transaction).
func (k *kernel) principal(addr Address) bool { return k.an.Principal(addr) }

// releaseKernel empties k and keeps it for the next analysis, with its
// scratch and the rests of its pointer-free blocks (small δs, operands,
// texts; see kernelPool), which hold nothing handed out: the analysis
// keeps what k built, and the next one carves after it. Those blocks are
// then always full-sized (k.warm): a small transaction no longer pays for
// blocks of its own (issue 22, session 12).
func releaseKernel(k *kernel) {
	if cap(k.sib.next) > kernelKeep || k.tr != nil {
		return
	}
	next, prev, buf, stack := k.sib.next[:0], k.sib.prev[:0], k.buf[:0], k.stack[:0]
	if cap(stack) > kernelKeep {
		stack = nil
	}
	clear(k.steps) // a Rewrite's log (Analyze's was emptied by keepSteps)
	steps := k.steps[:0]
	if cap(steps) > stepKeep {
		steps = nil
	}
	deltas, ops, texts := k.deltas.rest, k.opsBuf[len(k.opsBuf):], k.texts[len(k.texts):]
	*k = kernel{}
	k.sib.next, k.sib.prev, k.buf, k.stack, k.steps = next, prev, buf, stack, steps
	k.opsBuf, k.texts = ops, texts
	k.deltas = deltaSlab{rest: deltas, size: deltaBlock, sums: deltaAlone}
	k.warm = true
	kernelPool.Put(k)
}

// stepKeep bounds the working step log a kept kernel holds (80 bytes a
// step).
const stepKeep = 4096

// keepSteps returns a copy of s, the working log, for the analysis to
// keep, at its length (nil when s is empty): the working log is made at
// reserve's count, which runs to about two and a half times what is
// logged (mainnet block 11017338: room for 529 steps, 218 logged), and
// stays the kernel's. It is emptied for the next analysis (its
// references cleared).
func (k *kernel) keepSteps(s []Step) []Step {
	var out []Step
	if len(s) > 0 {
		out = make([]Step, len(s))
		copy(out, s)
	}
	clear(s)
	k.steps = s[:0]
	return out
}

// numNames makes the names prefix+"0", prefix+"1", … for the step log, a
// block of nameBlockSize at a time in one string (each name a substring of
// it), instead of two allocations per name (the number, the concatenation).
type numNames struct {
	blocks []*nameBlock // by number / nameBlockSize
}

const nameBlockSize = 256

type nameBlock struct {
	s   string
	end [nameBlockSize]uint32 // where each name ends in s
}

// maxNamed bounds the numbers named by blocks (a sparse large number is
// named on its own).
const maxNamed = 1 << 22

// get returns prefix followed by i in decimal (an instance is always
// asked with the same prefix). Numbers below sharedNamed are named from
// shared, blocks made once per process and read by every kernel (names
// are immutable strings); larger ones from the kernel's own blocks.
func (nn *numNames) get(shared *sharedNames, prefix string, i int64) string {
	if i < 0 || i >= maxNamed {
		return prefix + strconv.FormatInt(i, 10)
	}
	b := int(i / nameBlockSize)
	var blk *nameBlock
	if i < sharedNamed {
		p := &shared[b]
		if blk = p.Load(); blk == nil {
			blk = makeNameBlock(prefix, b)
			if !p.CompareAndSwap(nil, blk) {
				blk = p.Load()
			}
		}
	} else {
		for len(nn.blocks) <= b {
			nn.blocks = append(nn.blocks, nil)
		}
		if blk = nn.blocks[b]; blk == nil {
			blk = makeNameBlock(prefix, b)
			nn.blocks[b] = blk
		}
	}
	j := int(i % nameBlockSize)
	start := uint32(0)
	if j > 0 {
		start = blk.end[j-1]
	}
	return blk.s[start:blk.end[j]]
}

// makeNameBlock names the numbers of block b.
func makeNameBlock(prefix string, b int) *nameBlock {
	blk := &nameBlock{}
	var sb strings.Builder
	sb.Grow(nameBlockSize * (len(prefix) + 7))
	var num [20]byte
	for j := range nameBlockSize {
		sb.WriteString(prefix)
		sb.Write(strconv.AppendInt(num[:0], int64(b*nameBlockSize+j), 10))
		blk.end[j] = uint32(sb.Len())
	}
	blk.s = sb.String()
	return blk
}

// sharedNamed bounds the numbers whose names are shared by all kernels
// (at most sharedNamed/nameBlockSize blocks per prefix, about 2.5 MB
// when all are made).
const sharedNamed = 1 << 18

// sharedNames holds one prefix's shared name blocks.
type sharedNames [sharedNamed / nameBlockSize]atomic.Pointer[nameBlock]

// The shared names of leaves, built chains and frames.
var sharedLeafNames, sharedChainNames, sharedFrameNames sharedNames

// opsLen is the capacity of a new block of operands: 128, or what a small
// tree's steps can use (a lift per frame, a pair per rewrite).
func (k *kernel) opsLen() int {
	if k.opsN > 0 && !k.warm {
		return k.opsN
	}
	return 128
}

// one returns the operand list [a] for a step, carved like pair's.
func (k *kernel) one(a string) []string {
	if len(k.opsBuf)+1 > cap(k.opsBuf) {
		k.opsBuf = make([]string, 0, k.opsLen())
	}
	k.opsBuf = append(k.opsBuf, a)
	n := len(k.opsBuf)
	return k.opsBuf[n-1 : n : n]
}

// pair returns the operand list [a, b] for a step, carved from a block
// (capped, so that an append to one step's list never reaches the next).
func (k *kernel) pair(a, b string) []string {
	if len(k.opsBuf)+2 > cap(k.opsBuf) {
		k.opsBuf = make([]string, 0, k.opsLen())
	}
	k.opsBuf = append(k.opsBuf, a, b)
	n := len(k.opsBuf)
	return k.opsBuf[n-2 : n : n]
}

// siblings holds a frame's children while rules rewrite them: a doubly
// linked list over the slots of a slice, in sibling order. A rewrite puts
// its result in its first operand's slot and unlinks its partner's slot;
// nothing shifts, so a removal costs the same wherever it happens, and the
// slice is compacted once, when the pass is over. At the root a slot's
// index is the node's number in the rootTracker (kids are numbered by
// their initial position, and a result takes its first operand's number).
type siblings struct {
	ns         []*Node // the slots: nil once removed
	next, prev []int32 // the neighbouring live slots, -1 for none
	head       int32   // the first live slot, -1 when empty
}

// init makes kids the slots, all live, in order. The link arrays are
// reused from the previous pass.
func (s *siblings) init(kids []*Node) {
	n := len(kids)
	s.ns = kids
	if cap(s.next) < n {
		// One allocation for both (reserve sizes it for the whole tree).
		s.grow(n + n/4)
	}
	s.next, s.prev = s.next[:n], s.prev[:n]
	for i := range n {
		s.next[i], s.prev[i] = int32(i+1), int32(i-1)
	}
	if n > 0 {
		s.next[n-1] = -1
		s.head = 0
	} else {
		s.head = -1
	}
}

// grow gives the link arrays room for c slots, in one allocation.
func (s *siblings) grow(c int) {
	links := make([]int32, 2*c)
	s.next, s.prev = links[:0:c], links[c:c:2*c]
}

// remove unlinks slot j. Its own links keep the neighbours it had, which
// the caller may read until the next removal (and liveFrom relies on).
func (s *siblings) remove(j int32) {
	p, q := s.prev[j], s.next[j]
	if p >= 0 {
		s.next[p] = q
	} else {
		s.head = q
	}
	if q >= 0 {
		s.prev[q] = p
	}
	s.ns[j] = nil
}

// liveFrom returns the first live slot at or after p, or -1. A removed
// slot's next link led, when it was removed, to the first live slot after
// it, and slots never come back, so following the links of removed slots
// finds it; the links passed are shortened on the way (path compression).
func (s *siblings) liveFrom(p int64) int32 {
	if p >= int64(len(s.ns)) {
		return -1
	}
	q := int32(p)
	for q >= 0 && s.ns[q] == nil {
		q = s.next[q]
	}
	for r := int32(p); r >= 0 && s.ns[r] == nil; {
		r, s.next[r] = s.next[r], q
	}
	return q
}

// compact returns the live nodes in order, in the slots' own slice.
func (s *siblings) compact() []*Node {
	w := 0
	for p := s.head; p >= 0; p = s.next[p] {
		s.ns[w] = s.ns[p]
		w++
	}
	clear(s.ns[w:])
	out := s.ns[:w]
	s.ns = nil
	return out
}

func (k *kernel) name(n *Node) string {
	if n.Leaf != nil {
		return k.leafNames.get(&sharedLeafNames, "#", int64(n.Leaf.Pos))
	}
	return k.chainName(n.Chain)
}

// chainName is chainName for the kernel's own chains, its names made in
// blocks (numNames).
func (k *kernel) chainName(c *Chain) string {
	if c.Leaf != nil {
		return k.leafNames.get(&sharedLeafNames, "#", int64(c.Leaf.Pos))
	}
	return k.chainNames.get(&sharedChainNames, "C", int64(c.ID))
}

// appendNodeName appends n's name (as name returns it) to b.
func appendNodeName(b []byte, n *Node) []byte {
	if n.Leaf != nil {
		return strconv.AppendInt(append(b, '#'), int64(n.Leaf.Pos), 10)
	}
	return strconv.AppendInt(append(b, 'C'), int64(n.Chain.ID), 10)
}

func chainName(c *Chain) string {
	if c.Leaf != nil {
		return "#" + strconv.Itoa(int(c.Leaf.Pos))
	}
	return "C" + strconv.Itoa(int(c.ID))
}

func (k *kernel) log(rule Rule, f *Frame, ops []string, res *Chain) {
	k.step(Step{Rule: rule, Frame: f.Index, Operands: ops, Result: k.chainName(res),
		noteLabel: res.Label, noteKind: gistNote, note: stepNote{cfg: k.cfg, chain: res}})
}

// step appends s to the working step log (kept by the pooled kernel;
// Analyze keeps a copy at its length, keepSteps). The log's array is made
// at its first step, stepRoom steps long (reserve's count for the tree),
// unless the kernel's is already that long; not before:
// most transactions log no step (90 of the 124 of mainnet block
// 11017338), and their reserved arrays were 4.8% of Analyze's CPU
// there. A log past stepRoom grows as append grows it.
func (k *kernel) step(s Step) {
	if len(k.steps) == cap(k.steps) && cap(k.steps) < k.stepRoom {
		k.steps = append(make([]Step, 0, k.stepRoom), k.steps...)
	}
	k.steps = append(k.steps, s)
}

// gist renders a chain's endpoints and tokens, under its label, as a
// step's note says them (for stages that write their notes as text).
func (k *kernel) gist(c *Chain) string { return gistText(k.cfg, c, c.Label) }

// build creates the chain of rule's conclusion from operands a, b (in
// sequence order) at frame f.
func (k *kernel) build(f *Frame, rule Rule, label Label, merged bool, a, b *Node) *Node {
	ca, cb := k.asChain(a), k.asChain(b)
	// Below the root (k.reuse) an operand that is a node the kernel built
	// is held by nothing but the sibling slot the result takes or the one
	// it empties: its node carries the result, and only a chain is new.
	var n *Node
	var c *Chain
	switch {
	case k.reuse && a.built:
		n, c = a, k.newChain()
	case k.reuse && b.built:
		n, c = b, k.newChain()
	default:
		m := k.newBuilt()
		n, c = &m.n, &m.c
		n.built = true
	}
	if err := joinInto(c, ca, cb, rule, label, merged, &k.deltas); err != nil {
		if k.err == nil {
			k.err = err
		}
		return nil
	}
	k.nextID++
	c.ID = k.nextID
	c.Frame, c.FrameSender = f.Index, f.Sender
	k.log(rule, f, k.pair(k.name(a), k.name(b)), c)
	n.Chain = c
	return n
}

// builtNode is a built chain and the node that holds it, allocated
// together.
type builtNode struct {
	n Node
	c Chain
}

// slabSize is how many built nodes, or leaf chains, one allocation holds.
const slabSize = 64

// slabLen is the number of items of a new block: slabSize, or fewer for a
// small tree (reserve's hint: its transfers), whose leaves, leaf chains
// and built nodes number at most its transfers. A block of 64 for a
// transaction of three transfers was most of what Analyze allocated.
//
// full is the count of a full block for the item's size: slabSize items
// rounded up to fill the allocation's size class (78 chains of 104 bytes
// are 8,112 of an 8 KB class, where 64 left 1,536 bytes unused; 76 built
// nodes of 160 bytes are 12,160 of a 12 KB class).
func (k *kernel) slabLen(full int) int {
	if k.slabN > 0 && k.slabN < slabSize {
		return k.slabN
	}
	return full
}

// Full blocks: see slabLen.
const (
	fullBuilt = 76 // builtNode: 160 bytes
	fullChain = 78 // Chain: 104 bytes
)

// carve returns the next zero element of *slab, allocating a block of
// n when it is used up.
func carve[T any](slab *[]T, n int) *T {
	if len(*slab) == 0 {
		*slab = make([]T, n)
	}
	x := &(*slab)[0]
	*slab = (*slab)[1:]
	return x
}

// newBuilt returns a zero builtNode, carved from a block.
// Every build takes two of the root's nodes and leaves one, so a tree of
// n leaves builds at most n-1 chains: a small tree's block is n-1 long.
func (k *kernel) newBuilt() *builtNode {
	n := k.slabLen(fullBuilt)
	if n == k.slabN && n > 1 {
		n--
	}
	return carve(&k.builtSlab, n)
}

// newChain returns a zero Chain, carved from a block.
func (k *kernel) newChain() *Chain { return carve(&k.leafSlab, k.slabLen(fullChain)) }

// asChain returns n's chain, wrapping a leaf (a leaf chain carved from a
// block).
func (k *kernel) asChain(n *Node) *Chain {
	if n.Chain != nil {
		return n.Chain
	}
	c := k.newChain()
	t := n.Leaf
	*c = Chain{ID: -1, Leaf: t, First: t, Last: t, N: 1} // leafChain's
	return c
}

func asChain(n *Node) *Chain {
	if n.Chain != nil {
		return n.Chain
	}
	return leafChain(n.Leaf)
}

// structural reports whether a chain node may take part in R6–R13:
// unlabelled chains, and token burns and mints (a wrap or an unwrap is a
// step of a route through the wrapped-token contract, wherever it happens).
func structural(n *Node) bool {
	return n.Chain != nil && (n.Chain.Label.Unlabelled() || n.Chain.Label == TokenBurn || n.Chain.Label == TokenMint)
}

// pairKind is the kind of operands a pair of siblings is, for the binary
// rules (ok false: no binary rule applies to it). Chains take part when
// structural; a chain a single transfer would extend must be open.
func pairKind(x, y *Node) (operands, bool) {
	switch {
	case x.Leaf != nil && y.Leaf != nil:
		return twoLeaves, true
	case x.Leaf != nil && structural(y):
		return leafAndChain, !y.Chain.Closed()
	case structural(x) && y.Leaf != nil:
		return leafAndChain, !x.Chain.Closed()
	case structural(x) && structural(y):
		return twoChains, true
	}
	return 0, false
}

// leafRule tries the leaf rules on the pair (x, y), x before y among the
// siblings, and returns the conclusion, or nil.
func (k *kernel) leafRule(f *Frame, x, y *Node) *Node {
	ops, ok := pairKind(x, y)
	if !ok {
		return nil
	}
	return k.apply(f, stageRules[leafStage][ops], x, y)
}

// nodeRule tries the node rules on (x, y).
func (k *kernel) nodeRule(f *Frame, x, y *Node) *Node {
	ops, ok := pairKind(x, y)
	if !ok {
		return nil
	}
	return k.apply(f, stageRules[nodeStage][ops], x, y)
}

// leafLeaf tries the leaf rules on two leaves (when throughClosed is set,
// only those that reach across closed chains: R2, R3, R1).
func (k *kernel) leafLeaf(f *Frame, x, y *Node, throughClosed bool) *Node {
	rules := stageRules[leafStage][twoLeaves]
	if throughClosed {
		rules = acrossRules
	}
	return k.apply(f, rules, x, y)
}

// apply tries rules, in order, on the pair (x, y), x before y among the
// siblings, all of the pair's kind, and builds the conclusion of the first
// whose premise holds; nil when none does.
func (k *kernel) apply(f *Frame, rules []*ruleSpec, x, y *Node) *Node {
	for _, r := range rules {
		if a, b := k.premise(r, x, y); a != nil {
			return k.build(f, r.rule, r.label, r.merged, a, b)
		}
	}
	return nil
}

// premise reports whether r's premise holds on the pair (x, y) in an
// orientation r allows, and returns the operands in the conclusion's
// order (nil, nil when it does not hold). It has no side effects.
//
// When a premise holds both ways (the pair closes a loop either way), the
// loop is rooted as rootPair (two leaves) or rootAppend (a leaf and a
// chain: appending keeps the chain's origin) says.
func (k *kernel) premise(r *ruleSpec, x, y *Node) (first, second *Node) {
	switch r.ops {
	case twoLeaves:
		a, b := x.Leaf, y.Leaf
		ab := r.leaves(k.cfg, a, b)
		if r.orient == symmetric || (ab && r.orient == forwardFirst) {
			if ab {
				return x, y
			}
			return nil, nil
		}
		ba := r.leaves(k.cfg, b, a)
		if ab && ba && r.orient == eitherRooted {
			// (a, b) is rooted at a.From, (b, a) at b.From.
			ab = k.rootPair(a, b)
			ba = !ab
		}
		if ab {
			return x, y
		}
		if ba {
			return y, x
		}
	case leafAndChain:
		l, c := x, y
		if x.Chain != nil {
			l, c = y, x
		}
		app, pre := r.attach(c.Chain, l.Leaf)
		if app && pre {
			app = k.rootAppend(c.Chain.Origin(), l.Leaf.From, l.Leaf.Pos > c.Chain.First.Pos)
		}
		if app {
			return c, l
		}
		if pre {
			return l, c
		}
	case twoChains:
		if r.chains(k.cfg, x.Chain, y.Chain) {
			return x, y
		}
		if r.orient != symmetric && r.chains(k.cfg, y.Chain, x.Chain) {
			return y, x
		}
	}
	return nil, nil
}

// rootAppend decides where a loop that a transfer closes either way is
// rooted: appending keeps the chain's origin, prepending makes the
// transfer's source the origin. The loop is rooted at a principal of the
// transaction when exactly one of the two is one (the accounting closes
// there: a flash swap pays the bot before the bot pays the pool back);
// otherwise trace order decides (the transfer goes where it happened).
func (k *kernel) rootAppend(chainOrigin, leafSource Address, leafLater bool) bool {
	if a, b := k.principal(chainOrigin), k.principal(leafSource); a != b {
		return a
	}
	return leafLater
}

// rootPair decides where the loop of two transfers a: A→B and b: B→A is
// rooted (true: at A). When one party initiated both legs (σ(a) = σ(b) is
// A or B), it is the venue that pulled one asset and paid out the other
// (CoW's settlement filling a user's order), and the loop belongs to the
// other party. Otherwise rootAppend decides: at a principal of the
// transaction, else in trace order.
func (k *kernel) rootPair(a, b *Transfer) bool {
	if a.Sender == b.Sender {
		switch a.Sender {
		case a.To: // B drove both legs: the loop is A's
			return true
		case a.From: // A drove both legs: the loop is B's
			return false
		}
	}
	return k.rootAppend(a.From, b.From, a.Pos > b.Pos)
}

// leafPass runs the leaf rules over adjacent siblings to a fixpoint. Two
// leaves separated only by closed chains count as adjacent for R1, R2 and
// R3: a loop that closed between the two legs of a swap (a flash swap's
// inner trades) does not separate them. Same-token rules (R4, R5) keep
// strict adjacency: a flash loan's borrow and repay around the borrower's
// callback are not a pair.
//
// The children are held in k.sib while the pass runs: the position i is a
// slot, i+1 its next live slot, i-1 its previous one.
func (k *kernel) leafPass(f *Frame, kids []*Node) []*Node {
	if len(kids) < 2 {
		return kids
	}
	s := &k.sib
	s.init(kids)
	i := s.head
	for s.next[i] >= 0 && k.err == nil {
		if k.leafCheck(f, s, i) >= 0 {
			if p := s.prev[i]; p >= 0 {
				i = p
			}
			continue
		}
		i = s.next[i]
	}
	return s.compact()
}

// leafCheck is leafPass's check at the live slot i (which has a next
// sibling): leafRule on s.ns[i] and its next sibling, then, for a leaf
// followed by closed chains, leafLeaf through them to the next leaf. When
// a rule fires it puts the result in slot i, removes the partner's slot
// and returns it (its links still name its former neighbours); otherwise
// it returns -1 and leaves the siblings alone.
func (k *kernel) leafCheck(f *Frame, s *siblings, i int32) int32 {
	ns, next := s.ns, s.next
	j := next[i]
	if r := k.leafRule(f, ns[i], ns[j]); r != nil {
		k.tracked(i, j, r)
		ns[i] = r
		s.remove(j)
		return j
	}
	if ns[i].Leaf == nil || ns[j].Chain == nil || !ns[j].Chain.Closed() {
		return -1
	}
	for j >= 0 && ns[j].Chain != nil && ns[j].Chain.Closed() {
		j = next[j]
	}
	if j < 0 || ns[j].Leaf == nil {
		return -1
	}
	r := k.leafLeaf(f, ns[i], ns[j], true)
	if r == nil {
		return -1
	}
	k.tracked(i, j, r)
	ns[i] = r
	s.remove(j)
	return j
}

// nodeStep fires the first node rule over all pairs, if any: the pair
// (i, j), i < j, first in lexicographic order for which nodeRule fires.
//
// It does not try every pair, and it does not retry the pairs an earlier
// call has already tried. Two facts make this exact:
//
//  1. A node rule can only fire on a pair that meets at a junction in one
//     token (the junctions are the node rules' meets in ruleTable): R11 (two leaves) when d(x) = s(y) or d(y) = s(x) in their
//     common token; R12 (a leaf ℓ and an open structural chain C) when
//     d(C) = s(ℓ) in τ_out(C) = τ(ℓ), or d(ℓ) = s(C) in τ(ℓ) = τ_in(C);
//     R13 (two open structural chains) when they share origin and τ_in.
//     Closed and labelled chains never take part. The root tracker indexes
//     the kids by these junctions (partner lists), and the candidates of a
//     node, the union of the lists at its junctions, are a superset of the
//     nodes it can fire with. The relation is symmetric: y is a candidate
//     of x exactly when x is one of y.
//  2. nodeRule is a pure function of its two operands until it fires (the
//     configuration and the principals are fixed). A pair that did not
//     fire will not fire later if both nodes are still there.
//
// The tracker keeps a watermark: every node before it (in kids order) that
// is not fresh (built since the previous call) has been tried against every
// node that was then after it. So the first firing pair (a, b) is either
// a verified node a before the first unverified node with a fresh b (phase
// 1: only the verified candidates of the fresh nodes are tried, in order),
// or a pair whose first node is unverified (phase 2: the usual scan in kids
// order, each node against its candidates in kids order). Pairs left out
// are pairs on which nodeRule returns nil without side effects, so the pair
// that fires, the step log and the normal form are those of the full
// lexicographic scan over all pairs.
//
// The root's kids are the slots of s, a slot's index being its node's
// number: positions are numbers, and "the nodes before u0" are those with
// a smaller number.
func (k *kernel) nodeStep(f *Frame, s *siblings) bool {
	tr := k.tr
	fire := func(i, j int32) bool {
		r := k.nodeRule(f, s.ns[i], s.ns[j])
		if r == nil {
			return false
		}
		tr.wm = int64(i) // everything before a is verified now
		tr.fresh = tr.fresh[:0]
		tr.replace(i, j, r)
		s.ns[i] = r
		s.remove(j)
		tr.touch(s, i, s.prev[i])
		tr.touch(s, s.next[j], s.prev[j])
		return true
	}
	// u0: the first unverified node (fresh, or at or after the watermark),
	// as a number (len(s.ns) when there is none).
	u0 := int64(len(s.ns))
	if p := s.liveFrom(max(tr.wm, 0)); p >= 0 {
		u0 = int64(p)
	}
	fresh := tr.freshBuf[:0]
	for _, e := range tr.fresh {
		if tr.live(e) {
			fresh = append(fresh, e.s)
			u0 = min(u0, int64(e.s))
		}
	}
	tr.freshBuf = fresh
	slices.Sort(fresh)
	// Phase 1: verified nodes before u0 against the fresh nodes.
	if s.head >= 0 && int64(s.head) < u0 && len(fresh) > 0 {
		limit := u0 - 1 // live nodes before u0 are numbered at most this
		cands := tr.cands[:0]
		var buf [maxPartnerLists][]entry
		for _, b := range fresh {
			for _, l := range tr.candidates(b, &buf) {
				for _, e := range l {
					if tr.live(e) && int64(e.s) <= limit && e.s < b {
						cands = append(cands, e.s)
					}
				}
			}
		}
		tr.cands = cands
		slices.Sort(cands)
		for c, a := range cands {
			if c > 0 && cands[c-1] == a {
				continue
			}
			for _, b := range fresh {
				if b <= a {
					continue
				}
				if fire(a, b) {
					return true
				}
				if k.err != nil {
					return false
				}
			}
		}
	}
	// Phase 2: the scan from u0, each node against its candidates after it.
	var buf [maxPartnerLists][]entry
	i := int32(-1)
	if u0 < int64(len(s.ns)) {
		i = int32(u0) // live: the watermark's first live slot, or a fresh node
	}
	for ; i >= 0; i = s.next[i] {
		sa := int64(i)
		lists := tr.candidates(i, &buf)
		for l, c := range lists { // drop the nodes at or before a
			lists[l] = c[sort.Search(len(c), func(n int) bool { return int64(c[n].s) > sa }):]
		}
		for {
			// Merge: the first live node over the lists, once.
			sb := int64(-1)
			for l, c := range lists {
				for len(c) > 0 && !tr.live(c[0]) {
					c = c[1:]
				}
				lists[l] = c
				if len(c) > 0 && (sb < 0 || int64(c[0].s) < sb) {
					sb = int64(c[0].s)
				}
			}
			if sb < 0 {
				break
			}
			for l, c := range lists {
				if len(c) > 0 && int64(c[0].s) == sb { // b: one live node a number
					lists[l] = c[1:]
				}
			}
			if fire(i, int32(sb)) {
				return true
			}
			if k.err != nil {
				return false
			}
		}
	}
	tr.wm, tr.fresh = math.MaxInt64, tr.fresh[:0]
	return false
}

// Kinds of partner lists.
const (
	leafFrom  = iota // leaves by (s, τ)
	leafTo           // leaves by (d, τ)
	chainOrig        // open structural chains by (s, τ_in)
	chainDest        // open structural chains by (d, τ_out)
	listKinds
)

// entry is a partner list's entry: the number its node had when it was
// listed and the generation of that number's slot then (rootTracker.gen).
// Numbers never change, so a list stays sorted by them even as its nodes
// die; a dead entry is one whose slot is empty or has a later generation
// (a rewrite's result took the number). The node is the slot's (node).
// Entries hold no pointers: 8 bytes where a (node, number) pair was 16,
// neither scanned by the collector nor behind write barriers when a list
// shifts.
type entry struct {
	s int32
	g int32
}

// rootTracker indexes the root's kids during the structural fixpoint.
//
// Each live kid has a sequence number; kids are in increasing sequence
// order, always: the initial kids are numbered by position, a rewrite puts
// its result where its first operand was and gives it that operand's
// number, and removals keep the order. A node's position is found by
// binary search on the numbers. The partner lists hold nodes in increasing
// number (see entry); a dead node (consumed by a rewrite) has no number
// and is skipped where met. Fresh nodes are those built since the previous nodeStep.
type rootTracker struct {
	// A live kid's number is in its node (Node.rootSeq, Node.rootDirty):
	// field reads, where maps keyed by node cost most of the tracker.
	// A junction is hashed once into a small number, which indexes the
	// partner lists of every kind at it.
	//
	// A junction's number is found from its address's number and its
	// token's (small keys, where the 80-byte junction made hashing and
	// comparing keys a fifth of the tracker), and kept per transfer
	// position (byPos): a chain's junctions are its first transfer's
	// source and its last one's destination, numbered once for the leaf.
	addrs numTab[Address]
	toks  numTab[Token]
	ids   numTab[uint64]       // (address number, token number), by junction number
	byPos []posJunctions       // by transfer position
	lists [][listKinds]listRef // by junction number, then kind
	nj    int                  // junctions numbered
	// deferLists: lists are not made yet (newRootTracker numbers the
	// kids' junctions first).
	deferLists bool
	fresh      []entry // the nodes built since the previous nodeStep (dead ones are skipped)
	wm         int64   // the watermark (see nodeStep)

	partners *[2][]partnerList // partnerLists (a test's variant in tests)

	// The lists' entries: blocks[0] is the arena the kids' lists are
	// carved from once counted (kept for reuse across analyses, see
	// trackerPool), the later blocks those of the lists that outgrew
	// their room (see carve).
	arena  []entry
	blocks [][]entry
	moreAt int       // entries of the last block carved so far
	moreN  int       // the size of the next such block
	spare  [][]entry // blocks kept from earlier analyses, the last taken first

	// The kids' slots (the siblings' ns: a number's live node, nil once
	// removed) and each number's generation, which a rewrite that puts its
	// result at the number, or empties it, advances (see entry).
	ns  []*Node
	gen []int32
	// By number, the live node's two junctions (a leaf's source and
	// destination, an open chain's origin and destination, each with its
	// token: finding its partners hashes nothing) and whether its leaf
	// check is pending (see leafPassRoot). Kept here, not in the nodes:
	// the tracker writes nothing into a node, so the leaves that reach the
	// root are T0's own nodes, not copies (issue 22, session 8).
	junc    [][2]int32
	pending []bool

	// Scratch reused by nodeStep from call to call (numbers).
	freshBuf, cands []int32

	// The leaf scan's state (see leafPassRoot): the numbers whose node
	// may be dirty, as a bitset over the kids' numbers (bit s of
	// dirty[s/64]) with a summary bit per word (bit w of dirtyW[w/64]:
	// dirty[w] != 0), and the scan's position. A set bit whose slot is
	// empty or whose node is clean is stale and cleared when met. It
	// replaces a heap of (node, number) entries and the entries set aside
	// before the position: pointer-free, a bit a kid instead of 16 bytes
	// a mark, and what was set aside stays in place.
	dirty, dirtyW []uint64
	cur           int64
}

// trackerPool keeps root trackers between analyses: a tracker's tables
// and slices are emptied and kept (releaseRootTracker), so that a block's
// transactions share one set instead of allocating their own each.
var trackerPool sync.Pool

// trackerKeep bounds the kids of a tracker kept for reuse. Emptying a
// tracker costs what its last analysis used of it (its numbering tables
// are numTabs, not maps, whose clear cost their capacity), so a small
// transaction pays nothing for a large one's; until issue 22's session 8
// a tracker past 4,096 junctions was dropped and the root tracker of a
// random tree of 20,000 transfers allocated 2.9 MB a rewrite.
const trackerKeep = 1 << 16

func newRootTracker(kids []*Node) *rootTracker {
	tr, _ := trackerPool.Get().(*rootTracker)
	if tr == nil {
		tr = &rootTracker{}
	}
	tr.ns = kids
	tr.addrs.reserve(len(kids) / 4)
	tr.toks.reserve(0)
	tr.ids.reserve(len(kids))
	if cap(tr.gen) >= len(kids) {
		tr.gen, tr.junc, tr.pending = tr.gen[:len(kids)], tr.junc[:len(kids)], tr.pending[:len(kids)]
	} else {
		tr.gen, tr.junc, tr.pending = make([]int32, len(kids)), make([][2]int32, len(kids)), make([]bool, len(kids))
	}
	words := (len(kids) + 63) / 64
	if cap(tr.dirty) >= words {
		tr.dirty = tr.dirty[:words]
	} else {
		tr.dirty = make([]uint64, words)
	}
	if nw := (words + 63) / 64; cap(tr.dirtyW) >= nw {
		tr.dirtyW = tr.dirtyW[:nw]
	} else {
		tr.dirtyW = make([]uint64, nw)
	}
	// The partner lists are made once the kids' junctions are numbered,
	// at their number (not grown by doubling as they are numbered).
	tr.deferLists = true
	tr.partners = &partnerLists
	// Number the kids' junctions and count each list's entries, so that
	// the lists are carved from one allocation (a list that grows later
	// is moved out on its own).
	// The junctions looked up later are those of these transfers (a
	// rewrite's result starts with its first operand's first transfer and
	// ends with its second's last), so byPos is sized for them once.
	maxPos := int32(-1)
	for _, n := range kids {
		switch {
		case n.Leaf != nil:
			maxPos = max(maxPos, n.Leaf.Pos)
		case n.Chain != nil:
			maxPos = max(maxPos, n.Chain.First.Pos, n.Chain.Last.Pos)
		}
	}
	if np := min(int(maxPos)+1, maxNamed); cap(tr.byPos) >= np {
		tr.byPos = tr.byPos[:np]
	} else {
		tr.byPos = make([]posJunctions, np)
	}
	for _, n := range kids {
		switch {
		case n.Leaf != nil:
			tr.junctionOf(n.Leaf, false)
			tr.junctionOf(n.Leaf, true)
		case nodeCandidate(n):
			tr.junctionOf(n.Chain.First, false)
			tr.junctionOf(n.Chain.Last, true)
		}
	}
	if cap(tr.lists) >= tr.nj {
		tr.lists = tr.lists[:tr.nj]
	} else {
		tr.lists = make([][listKinds]listRef, tr.nj)
	}
	tr.deferLists = false
	// Each list's room is counted into its reference's c, then placed.
	for _, n := range kids {
		switch {
		case n.Leaf != nil:
			tr.lists[tr.junctionOf(n.Leaf, false)][leafFrom].c++
			tr.lists[tr.junctionOf(n.Leaf, true)][leafTo].c++
		case nodeCandidate(n):
			tr.lists[tr.junctionOf(n.Chain.First, false)][chainOrig].c++
			tr.lists[tr.junctionOf(n.Chain.Last, true)][chainDest].c++
		}
	}
	var off int32
	for x := range tr.lists {
		for kind := range tr.lists[x] {
			r := &tr.lists[x][kind]
			r.off = off
			off += r.c
		}
	}
	arena := tr.arena
	if cap(arena) < int(off) {
		arena = make([]entry, off)
	}
	arena = arena[:off]
	tr.arena = arena
	tr.blocks = append(tr.blocks[:0], arena)
	for p := range kids {
		tr.add(int64(p))
		tr.mark(int64(p))
	}
	return tr
}

// releaseRootTracker empties tr and keeps it for the next analysis (see
// trackerPool), unless it grew too large to be worth emptying. Nothing of
// the analysis stays reachable from a kept tracker.
func releaseRootTracker(tr *rootTracker) {
	if len(tr.ns) > trackerKeep || len(tr.byPos) > 2*trackerKeep || tr.ids.len() > 4*trackerKeep {
		return // too large to keep
	}
	tr.addrs.reset()
	tr.toks.reset()
	tr.ids.reset()
	clear(tr.byPos)
	clear(tr.lists)
	tr.lists, tr.nj = tr.lists[:0], 0
	clear(tr.arena)
	// The grown lists' blocks are kept for the next analysis's (entries
	// hold no pointers, and a list's room is written before it is read).
	for _, b := range tr.blocks[1:] {
		tr.spare = append(tr.spare, b)
	}
	clear(tr.blocks)
	tr.blocks, tr.moreAt, tr.moreN = tr.blocks[:0], 0, 0
	clear(tr.dirty)
	clear(tr.dirtyW)
	clear(tr.gen)
	clear(tr.junc)
	clear(tr.pending)
	tr.ns, tr.gen, tr.junc, tr.pending = nil, tr.gen[:0], tr.junc[:0], tr.pending[:0]
	tr.fresh, tr.freshBuf, tr.cands = tr.fresh[:0], tr.freshBuf[:0], tr.cands[:0]
	tr.dirty, tr.dirtyW = tr.dirty[:0], tr.dirtyW[:0]
	tr.wm, tr.cur, tr.partners = 0, 0, nil
	trackerPool.Put(tr)
}

// live reports whether an entry's node is still a kid.
func (tr *rootTracker) live(e entry) bool {
	return tr.ns[e.s] != nil && tr.gen[e.s] == e.g
}

// node is a live entry's node.
func (tr *rootTracker) node(e entry) *Node { return tr.ns[e.s] }

// nodeCandidate reports whether n can take part in a node rule at all.
func nodeCandidate(n *Node) bool {
	return n.Leaf != nil || (structural(n) && !n.Chain.Closed())
}

// id returns the number of the junction (addr, tok), numbering it if it
// is new.
func (tr *rootTracker) id(addr Address, tok *Token) int32 {
	a := tr.addrs.num(&addr, hashAddr(&addr), hashAddr)
	t := tr.toks.num(tok, hashToken(tok), hashToken)
	key := uint64(uint32(a))<<32 | uint64(uint32(t))
	x := tr.ids.num(&key, hashJunction(&key), hashJunction)
	if int(x) < tr.nj {
		return x
	}
	tr.nj++
	if !tr.deferLists {
		tr.lists = append(tr.lists, [listKinds]listRef{})
	}
	return x
}

// posJunctions is what byPos keeps for a transfer: the transfer's
// address (so that two transfers that share a position are never
// confused) and its two junctions' numbers + 1 (0: not numbered yet).
// The address is compared, never followed: it is kept as a number, so
// that byPos holds no pointers and the collector does not scan it (the
// transfers are the tree's, reachable from it for the whole fixpoint, and
// Go's heap objects do not move).
type posJunctions struct {
	t uintptr
	j [2]int32 // source, destination
}

// junctionOf returns the number of t's source junction (s, τ), or of its
// destination's (d, τ) when dest is set, kept by t's position.
func (tr *rootTracker) junctionOf(t *Transfer, dest bool) int32 {
	side := 0
	addr := t.From
	if dest {
		side, addr = 1, t.To
	}
	pos := int64(t.Pos)
	if pos >= 0 && pos < int64(len(tr.byPos)) && tr.byPos[pos].t == uintptr(unsafe.Pointer(t)) && tr.byPos[pos].j[side] != 0 {
		return tr.byPos[pos].j[side] - 1
	}
	x := tr.id(addr, &t.Token)
	if pos >= 0 && pos < maxNamed {
		if pos >= int64(len(tr.byPos)) {
			tr.byPos = append(tr.byPos, make([]posJunctions, max(pos+1, 2*int64(len(tr.byPos)), 256)-int64(len(tr.byPos)))...)
		}
		p := &tr.byPos[pos]
		if id := uintptr(unsafe.Pointer(t)); p.t != id {
			*p = posJunctions{t: id}
		}
		p.j[side] = x + 1
	}
	return x
}

// add lists the live node numbered s at its junctions, in number order.
func (tr *rootTracker) add(s int64) {
	n := tr.ns[s]
	ins := func(kind int, x int32) int32 {
		r := &tr.lists[x][kind]
		l := tr.list(r)
		if len(l) == cap(l) && len(l) > 0 {
			// Full: drop the dead entries first (nothing reads a list
			// while a node is added), so that a list grows with its
			// live nodes, not with every node it ever held.
			w := 0
			for _, e := range l {
				if tr.live(e) {
					l[w] = e
					w++
				}
			}
			clear(l[w:])
			l = l[:w]
		}
		if len(l) == cap(l) {
			// Still full: move it to room carved from the tracker's
			// block (one allocation per block, not one per list).
			l = append(tr.carve(r, max(4, 2*cap(l))), l...)
		}
		at := sort.Search(len(l), func(x int) bool { return int64(l[x].s) > s })
		l = append(l, entry{})
		copy(l[at+1:], l[at:])
		l[at] = entry{int32(s), tr.gen[s]}
		r.n = int32(len(l))
		return x
	}
	switch {
	case n.Leaf != nil:
		t := n.Leaf
		tr.junc[s][0] = ins(leafFrom, tr.junctionOf(t, false))
		tr.junc[s][1] = ins(leafTo, tr.junctionOf(t, true))
	case nodeCandidate(n):
		c := n.Chain
		tr.junc[s][0] = ins(chainOrig, tr.junctionOf(c.First, false)) // (s(C), τ_in(C))
		tr.junc[s][1] = ins(chainDest, tr.junctionOf(c.Last, true))   // (d(C), τ_out(C))
	}
}

// listRef is where a partner list is: entries off to off+n of
// tr.blocks[blk], with room to off+c. The references hold no pointers
// (the collector does not scan them) and are 16 bytes a list where a
// slice header was 24, and they take the place of the counts the lists
// were sized from.
type listRef struct {
	blk, off, n, c int32
}

// list returns the list r refers to (nil when it has no room).
func (tr *rootTracker) list(r *listRef) []entry {
	if r.c == 0 {
		return nil
	}
	return tr.blocks[r.blk][r.off : r.off+r.n : r.off+r.c]
}

// carve moves r to an empty list with room for c entries, carved from the
// tracker's current block of grown lists (see add), and returns it.
func (tr *rootTracker) carve(r *listRef, c int) []entry {
	if len(tr.blocks) < 2 || tr.moreAt+c > len(tr.blocks[len(tr.blocks)-1]) {
		size := max(tr.moreN, 16)
		var blk []entry
		if n := len(tr.spare); n > 0 && len(tr.spare[n-1]) >= max(c, size) {
			blk, tr.spare[n-1], tr.spare = tr.spare[n-1], nil, tr.spare[:n-1]
		} else {
			blk = make([]entry, max(c, size))
		}
		tr.blocks = append(tr.blocks, blk)
		tr.moreAt = 0
		tr.moreN = min(2*size, listBlock) // blocks double up to listBlock
	}
	b := len(tr.blocks) - 1
	r.blk, r.off, r.n, r.c = int32(b), int32(tr.moreAt), 0, int32(c)
	tr.moreAt += c
	return tr.blocks[b][r.off : r.off : r.off+r.c]
}

// listBlock is the most entries of a block grown lists are carved from
// (4 KB); the first block of an analysis has 16.
const listBlock = 256

// replace records a rewrite: r takes the place and number of the first
// operand (numbered i), and the first and second (j) leave.
func (tr *rootTracker) replace(i, j int32, r *Node) {
	tr.gen[i]++
	tr.gen[j]++
	tr.ns[i] = r // the siblings' slot (the caller's too)
	tr.pending[i] = false
	tr.add(int64(i))
	tr.fresh = append(tr.fresh, entry{i, tr.gen[i]})
}

// tracked records a leaf-stage rewrite at the root of slots i and j (the
// numbers of its operands there).
func (k *kernel) tracked(i, j int32, r *Node) {
	if k.tr != nil {
		k.tr.replace(i, j, r)
	}
}

// candidates returns the partner lists (each in kids order) whose union
// holds every node y such that nodeRule(x, y) or nodeRule(y, x) may fire
// (a superset: nodeRule decides). The lists are partnerLists', derived
// from the node rules' junctions in ruleTable: x's two junctions were
// numbered when it was listed (add), and its partners are in the lists of
// the kinds its kind meets at the same junctions. The slices alias the
// index; callers advance them, never write.
func (tr *rootTracker) candidates(s int32, buf *[maxPartnerLists][]entry) [][]entry {
	out := buf[:0]
	x := tr.ns[s]
	var pls []partnerList
	switch {
	case x.Leaf != nil:
		pls = tr.partners[0]
	case nodeCandidate(x):
		pls = tr.partners[1]
	}
	for _, p := range pls {
		out = append(out, tr.list(&tr.lists[tr.junc[s][p.slot]][p.kind]))
	}
	return out
}

// reduce runs the leaf stage on a frame node and returns its reduced
// children, ready to be lifted into the parent (or kept, at the root).
// The children of the frames being reduced are on one stack (k.stack),
// where a frame's reduced children stay, in place, as its parent's: no
// slice per frame, nothing copied to lift. The slice returned aliases the
// stack, and is the caller's until the next reduce.
//
// The kernel writes nothing into a leaf's node (the root tracker keeps
// its marks by kid number), so the frames are reduced on T0's own leaf
// nodes, and the leaves that reach the root are T0's nodes too: a leaf
// costs no node.
//
// While it runs no root tracker exists and a node is held only by its
// sibling slot (the step log keeps names), so build may reuse a consumed
// built operand's node (k.reuse).
func (k *kernel) reduce(n *Node) []*Node {
	base := len(k.stack)
	k.reuse = k.tr == nil
	k.reduceOnStack(n)
	k.reuse = false
	out := k.stack[base:]
	k.stack = k.stack[:base:base]
	return out
}

// reduceOnStack reduces n and leaves its reduced children on top of
// k.stack.
func (k *kernel) reduceOnStack(n *Node) {
	base := len(k.stack)
	for _, c := range n.Children {
		if c.Frame == nil {
			k.stack = append(k.stack, c) // T0's node, read only (see reduce)
			continue
		}
		at := len(k.stack)
		k.reduceOnStack(c)
		b := k.buf[:0] // the lifted nodes' names, space-separated
		for i, l := range k.stack[at:] {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendNodeName(b, l)
		}
		k.buf = b
		k.step(Step{Rule: Lift, Frame: n.Frame.Index, Operands: k.one(k.frameNames.get(&sharedFrameNames, "frame ", int64(c.Frame.Index))),
			Result: k.text(b)})
	}
	out := k.leafPass(n.Frame, k.stack[base:])
	k.stack = k.stack[:base+len(out)]
}

// text returns b as a string carved from a block (k.texts): the lifts'
// results, one allocation per few kilobytes instead of one each.
func (k *kernel) text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(k.texts)+len(b) > cap(k.texts) {
		// The strings made so far keep the old block. A cold kernel's
		// first block is small: most transactions lift a few texts.
		size := 4096
		if cap(k.texts) == 0 && !k.warm {
			size = 512
		}
		k.texts = make([]byte, 0, max(size, len(b)))
	}
	// Bytes appended are never written again (a later text goes after
	// them, in this block or a new one): the string may share them.
	at := len(k.texts)
	k.texts = append(k.texts, b...)
	return unsafe.String(&k.texts[at], len(b))
}

// reserve sizes the step log (its room, made at its first step) and
// reduce's stack for the tree under root: a lift per frame below the
// root, at most a rewrite per transfer but one. It returns the tree's
// leaves.
func (k *kernel) reserve(root *Node) int {
	var leaves, frames int
	var count func(n *Node)
	count = func(n *Node) {
		for _, c := range n.Children {
			if c.Frame == nil {
				leaves++
				continue
			}
			frames++
			count(c)
		}
	}
	count(root)
	k.slabN = min(max(leaves, 1), slabSize)
	k.opsN = min(frames+2*leaves+2, 128)
	k.stepRoom = max(k.stepRoom, len(k.steps)+leaves+frames+8)
	if cap(k.stack) < leaves {
		k.stack = make([]*Node, 0, leaves)
	}
	if cap(k.sib.next) < leaves { // no frame has more children than the tree has leaves
		k.sib.grow(leaves)
	}
	return leaves
}

// structuralFixpoint reduces the whole tree: leaf stage bottom-up, then
// leaf and node rules at the root until neither applies.
func (k *kernel) structuralFixpoint(root *Node) []*Node {
	leaves := k.reserve(root)
	stack := k.stack[:cap(k.stack)] // reduce's array: the root's kids are its bottom
	kids := k.reduce(root)
	k.stack = nil
	k.tr = newRootTracker(kids)
	s := &k.sib
	s.init(kids)
	for k.err == nil && k.nodeStep(root.Frame, s) {
		k.leafPassRoot(root.Frame, s)
	}
	kids = s.compact()
	releaseRootTracker(k.tr)
	k.tr = nil
	// The kids leave the stack's array, which stays the kernel's scratch
	// (releaseKernel), emptied up to the most it held: a node a leaf.
	kids = slices.Clone(kids)
	clear(stack[:leaves])
	k.stack = stack[:0]
	return kids
}

// C1·C2 may be connected (Algorithm 2) when both are labelled cycle, token
// burn or token mint, both originate at a principal of the transaction
// (recipient or sender), neither is reduced to routing (M(C) = {σ(C)}),
// and their tokens are complementary with a closed concatenation.

// connectEligible is the condition on each operand alone.
func (k *kernel) connectEligible(c *Chain) bool {
	if c.Label != Cycle && c.Label != TokenBurn && c.Label != TokenMint {
		return false
	}
	if !k.principal(c.Origin()) {
		return false
	}
	m, one := soleMiddleman(c)
	return !(one && m == c.Sigma())
}

// soleMiddleman returns M(C)'s member when M(C) = {d(t_1), …, d(t_{k-1})}
// has exactly one (what len(c.Middlemen()) == 1 tests, without making
// the list).
func soleMiddleman(c *Chain) (Address, bool) {
	if c.N < 2 {
		return Address{}, false
	}
	var m Address
	one, i, last := true, 0, int(c.N)-1
	c.eachTransfer(func(t *Transfer) bool {
		if i == last {
			return false
		}
		if i == 0 {
			m = t.To
		} else if t.To != m {
			one = false
			return false
		}
		i++
		return true
	})
	return m, one && i > 0
}

// connectMeets is the condition on the pair: complementary
// tokens and a closed concatenation.
func connectMeets(c1, c2 *Chain) bool {
	return c1.TokOut() == c2.TokIn() && c1.Origin() == c2.Dest()
}

// annotateAndReduce is Algorithm 2. It returns the number of passes.
func (k *kernel) annotateAndReduce(root *Frame, kids []*Node) ([]*Node, int) {
	// Room for a label per chain, and some (one growth instead of several).
	k.stepRoom = max(k.stepRoom, len(k.steps)+len(kids)+8)
	passes := 0
	for k.err == nil {
		passes++
		changed := false
		for _, n := range kids {
			c := n.Chain
			if c == nil || !c.Label.Unlabelled() || !c.Closed() {
				continue
			}
			for _, r := range stageRules[annotation][oneChain] {
				if r.one(k.cfg, c) {
					c.Label = r.label
					name := k.chainName(c)
					k.step(Step{Rule: r.rule, Frame: root.Index, Operands: k.one(name), Result: name,
						noteLabel: c.Label, noteKind: gistNote, note: stepNote{cfg: k.cfg, chain: c}})
					changed = true
					break
				}
			}
		}
		// Connection: the first pair (i, j), i < j, that is connectable
		// either way. A pair can only connect when both operands are eligible on
		// their own, so the pairs are drawn from the eligible chains only
		// (computed once per pass, in order): the first pair found is the
		// one the scan over all pairs finds.
		var elig []int
		for i, n := range kids {
			if n.Chain != nil && k.connectEligible(n.Chain) {
				elig = append(elig, i)
			}
		}
	connect:
		for p, i := range elig {
			for _, j := range elig[p+1:] {
				x, y := kids[i], kids[j]
				if !connectMeets(x.Chain, y.Chain) {
					if !connectMeets(y.Chain, x.Chain) {
						continue
					}
					x, y = y, x
				}
				r := k.build(root, Connect, Chaining, false, x, y)
				if r == nil {
					break connect
				}
				kids[i] = r
				kids = append(kids[:j], kids[j+1:]...)
				changed = true
				break connect
			}
		}
		if !changed {
			break
		}
	}
	return kids, passes
}

// validate runs the validation rules (R16: an arbitrage whose balance at
// its origin, in its entry token, is not positive becomes a cycle) on the
// root's chains, each downgrading the chain it relabels. Skipped for
// self-calls.
func (k *kernel) validate(root *Frame, kids []*Node) {
	for _, n := range kids {
		c := n.Chain
		if c == nil {
			continue
		}
		for _, r := range stageRules[validation][oneChain] {
			if !r.one(k.cfg, c) {
				continue
			}
			c.Label, c.Downgraded = r.label, true
			name := k.chainName(c)
			k.step(Step{Rule: r.rule, Frame: root.Index, Operands: k.one(name), Result: name,
				noteLabel: c.Label, noteKind: balanceNote, note: stepNote{cfg: k.cfg, chain: c}})
			break
		}
	}
}

// Rewrite runs the kernel alone on a copy of tx's T0: the structural
// fixpoint, annotation and connection, and R16, without recovery, profit or
// classification, and discards the result. It exists so that the rewriting
// stage can be measured on its own (the stage benchmarks of issue 8);
// Analyze is what callers want.
func Rewrite(tx *Tx, cfg *Config) error {
	k, _ := rewrite(tx, cfg, (*kernel).structuralFixpoint)
	if k == nil {
		return nil
	}
	err := k.err
	releaseKernel(k)
	return err
}

// rewrite runs the kernel on a copy of tx's tree with the given
// structural fixpoint (the reference one in tests), then annotation and
// connection and R16's check, and returns the kernel and the root's kids
// (nil, nil without a tree).
func rewrite(tx *Tx, cfg *Config, fixpoint func(*kernel, *Node) []*Node) (*kernel, []*Node) {
	if tx.Root == nil {
		return nil, nil
	}
	a := &Analysis{Tx: tx, cfg: cfg, Sender: tx.Meta.From}
	if tx.Meta.HasTo {
		a.Recipient = tx.Meta.To
	} else {
		a.Recipient = tx.Root.Frame.To
	}
	k := newKernel(cfg, a)
	root := tx.Root // read only: reduce copies the leaves it rewrites
	kids := fixpoint(k, root)
	kids, _ = k.annotateAndReduce(root.Frame, kids)
	if !(tx.Meta.HasFrom && tx.Meta.From == a.Recipient) {
		k.validate(root.Frame, kids)
	}
	return k, kids
}

// leafPassRoot is leafPass at the root during the structural fixpoint,
// with the rootTracker: it performs exactly the checks leafPass would
// perform that can fire, in the same order, and skips the others.
//
// leafPass checks each position i in order: leafRule on kids[i] and its
// next sibling, then (for a leaf followed by closed chains) leafLeaf
// through the closed chains to the next leaf. A check is a pure function
// of three nodes until it fires: kids[i], its next sibling, and the first
// sibling after kids[i] that is not a closed chain. The tracker keeps the
// set of dirty nodes, whose check has not failed on their current three
// nodes (all kids at first; then every node a rewrite builds or whose next
// sibling or first non-closed successor a rewrite changes, marked by
// touch). A clean node's check would fail again, so skipping it changes
// nothing. leafPass scans forward and, after a rewrite at i, backs up to
// i-1 only: a dirty node before that is not checked again in this pass
// (its check waits for the next pass, where leafPass starts from 0), and
// leafPassRoot keeps it dirty, unchecked, likewise: it takes the first
// dirty node at or after the scan's position, never one before.
//
// Positions are slots of s (numbers): i+1 is the next live slot, and the
// position of the node after a removed partner is the partner's next link.
func (k *kernel) leafPassRoot(f *Frame, s *siblings) {
	tr := k.tr
	tr.cur = math.MinInt64
	for k.err == nil {
		i := tr.nextDirty(s)
		if i < 0 {
			break
		}
		if s.next[i] >= 0 {
			if j := k.leafCheck(f, s, i); j >= 0 {
				tr.touch(s, i, s.prev[i])
				tr.touch(s, s.next[j], s.prev[j])
				tr.backUp(s, i)
				continue
			}
		}
		tr.pending[i] = false // its check failed on its current three nodes
		tr.clearDirty(int64(i))
		tr.cur = int64(i) + 1
	}
}

// mark makes the live node numbered x dirty.
func (tr *rootTracker) mark(x int64) {
	if !tr.pending[x] {
		tr.pending[x] = true
		tr.dirty[x>>6] |= 1 << (x & 63)
		tr.dirtyW[x>>12] |= 1 << ((x >> 6) & 63)
	}
}

// clearDirty clears number x's bit (its node is clean, or gone).
func (tr *rootTracker) clearDirty(x int64) {
	w := x >> 6
	tr.dirty[w] &^= 1 << (x & 63)
	if tr.dirty[w] == 0 {
		tr.dirtyW[w>>6] &^= 1 << (w & 63)
	}
}

// firstDirty returns the first number at or after x whose bit is set, or
// -1.
func (tr *rootTracker) firstDirty(x int64) int64 {
	x = max(x, 0)
	w := x >> 6
	if w >= int64(len(tr.dirty)) {
		return -1
	}
	if b := tr.dirty[w] &^ (1<<(x&63) - 1); b != 0 {
		return w<<6 | int64(bits.TrailingZeros64(b))
	}
	// The next non-empty word, by the summary.
	w++
	for W := w >> 6; W < int64(len(tr.dirtyW)); W++ {
		b := tr.dirtyW[W]
		if W == w>>6 {
			b &^= 1<<(w&63) - 1
		}
		if b != 0 {
			v := W<<6 | int64(bits.TrailingZeros64(b))
			return v<<6 | int64(bits.TrailingZeros64(tr.dirty[v]))
		}
	}
	return -1
}

// touch marks what a change at a position (a new node there, or a removal
// just before it) can affect: the node at it, p (-1 at the end), the node
// before it, q (-1 at the start; its next sibling changed), and the nearest
// node at or before q that is not a closed chain (its first non-closed
// successor may have changed).
func (tr *rootTracker) touch(s *siblings, p, q int32) {
	if p >= 0 {
		tr.mark(int64(p))
	}
	if q < 0 {
		return
	}
	tr.mark(int64(q))
	for q >= 0 && s.ns[q].Chain != nil && s.ns[q].Chain.Closed() {
		q = s.prev[q]
	}
	if q >= 0 {
		tr.mark(int64(q))
	}
}

// backUp moves the scan to the node before slot i (or i, the first), as
// leafPass does after a rewrite at i: the dirty nodes from there on are
// the scan's again.
func (tr *rootTracker) backUp(s *siblings, i int32) {
	if p := s.prev[i]; p >= 0 {
		i = p
	}
	tr.cur = int64(i)
}

// nextDirty returns the number of the first live dirty node at or after
// the scan's position, or -1; the dirty nodes before it wait for the next
// pass (their bits stay set).
func (tr *rootTracker) nextDirty(s *siblings) int32 {
	for {
		x := tr.firstDirty(tr.cur)
		if x < 0 {
			return -1
		}
		if s.ns[x] != nil && tr.pending[x] {
			return int32(x)
		}
		tr.clearDirty(x) // stale: the slot is empty, or its node clean
	}
}
