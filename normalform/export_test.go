package normalform

import (
	"strconv"
	"strings"
	"unsafe"
)

// KernelRun is the outcome of the rewriting kernel on a transaction: the
// step log, rendered, and the normal form's kids (name, label, size).
type KernelRun struct {
	Steps []string
	Kids  []string
	Err   error
}

// RunKernel runs the kernel (structural fixpoint, annotation and
// connection, R16) as Rewrite does and returns what it produced.
func RunKernel(tx *Tx, cfg *Config) KernelRun {
	return runKernel(tx, cfg, (*kernel).structuralFixpoint)
}

// RunReferenceKernel runs the kernel's policy the plain way, as the
// package documentation states it: each frame's children in a slice, a
// leaf rewrite replacing the pair at the left position and shifting the
// rest, the scan backing up one position; at the root, after the leaf
// scan, the node rules tried on every pair (i, j), i < j, in
// lexicographic order, the first that fires applied, and the leaf scan
// run again from the start, until neither fires. No index, no
// watermark, no dirty marks, no linked siblings.
func RunReferenceKernel(tx *Tx, cfg *Config) KernelRun {
	return runKernel(tx, cfg, (*kernel).refFixpoint)
}

func runKernel(tx *Tx, cfg *Config, fixpoint func(*kernel, *Node) []*Node) KernelRun {
	k, kids := rewrite(tx, cfg, fixpoint)
	if k == nil {
		return KernelRun{}
	}
	var out KernelRun
	for _, s := range k.steps {
		out.Steps = append(out.Steps, s.String())
	}
	for _, n := range kids {
		c := asChain(n)
		out.Kids = append(out.Kids, chainName(c)+" "+c.Label.String()+" n="+strconv.Itoa(int(c.N)))
	}
	out.Err = k.err
	return out
}

func (k *kernel) refFixpoint(root *Node) []*Node {
	kids := k.refReduce(root)
	for k.err == nil {
		fired := false
	scan:
		for i := 0; i < len(kids); i++ {
			for j := i + 1; j < len(kids); j++ {
				if r := k.nodeRule(root.Frame, kids[i], kids[j]); r != nil {
					kids[i] = r
					kids = append(kids[:j], kids[j+1:]...)
					fired = true
					break scan
				}
				if k.err != nil {
					break scan
				}
			}
		}
		if !fired {
			break
		}
		kids = k.refLeafPass(root.Frame, kids)
	}
	return kids
}

func (k *kernel) refReduce(n *Node) []*Node {
	var kids []*Node
	for _, c := range n.Children {
		if c.Frame == nil {
			kids = append(kids, c)
			continue
		}
		lifted := k.refReduce(c)
		var ops []string
		for _, l := range lifted {
			ops = append(ops, k.name(l))
		}
		k.steps = append(k.steps, Step{Rule: Lift, Frame: n.Frame.Index,
			Operands: []string{"frame " + strconv.Itoa(int(c.Frame.Index))}, Result: strings.Join(ops, " ")})
		kids = append(kids, lifted...)
	}
	return k.refLeafPass(n.Frame, kids)
}

func (k *kernel) refLeafPass(f *Frame, kids []*Node) []*Node {
	i := 0
	for i+1 < len(kids) && k.err == nil {
		if k.refLeafCheck(f, &kids, i) {
			if i > 0 {
				i--
			}
			continue
		}
		i++
	}
	return kids
}

// refLeafCheck: leafRule on kids[i] and kids[i+1]; then, for a leaf
// followed by closed chains, leafLeaf through them to the next leaf.
func (k *kernel) refLeafCheck(f *Frame, kids *[]*Node, i int) bool {
	ks := *kids
	if r := k.leafRule(f, ks[i], ks[i+1]); r != nil {
		ks[i] = r
		*kids = append(ks[:i+1], ks[i+2:]...)
		return true
	}
	if ks[i].Leaf == nil || ks[i+1].Chain == nil || !ks[i+1].Chain.Closed() {
		return false
	}
	j := i + 1
	for j < len(ks) && ks[j].Chain != nil && ks[j].Chain.Closed() {
		j++
	}
	if j == len(ks) || ks[j].Leaf == nil {
		return false
	}
	r := k.leafLeaf(f, ks[i], ks[j], true)
	if r == nil {
		return false
	}
	ks[i] = r
	*kids = append(ks[:j], ks[j+1:]...)
	return true
}

// MemRange is a span of memory [Start, End) an analysis holds.
type MemRange struct{ Start, End uintptr }

// CarvedMemory lists the memory an analysis holds that the kernel carves
// from blocks a pooled kernel carries from one analysis to the next (its
// chains' small δs, its steps' operand lists and lift texts), its step
// log's array, and its balances and reasons (made in buffers and copied
// out): for tests that two analyses never share any of it.
func CarvedMemory(a *Analysis) []MemRange {
	var out []MemRange
	add := func(p unsafe.Pointer, n uintptr) {
		if p != nil && n > 0 {
			out = append(out, MemRange{uintptr(p), uintptr(p) + n})
		}
	}
	var walk func(c *Chain)
	seen := map[*Chain]bool{}
	walk = func(c *Chain) {
		if c == nil || seen[c] {
			return
		}
		seen[c] = true
		if d := c.smallDelta(); len(d) > 0 {
			add(unsafe.Pointer(unsafe.SliceData(d)), uintptr(len(d))*unsafe.Sizeof(d[0]))
		}
		walk(c.Left)
		walk(c.Right)
	}
	var nodes func(n *Node)
	nodes = func(n *Node) {
		if n == nil {
			return
		}
		walk(n.Chain)
		for _, c := range n.Children {
			nodes(c)
		}
	}
	nodes(a.NF)
	for i := range a.Steps {
		s := &a.Steps[i]
		walk(s.note.chain)
		if len(s.Operands) > 0 {
			add(unsafe.Pointer(unsafe.SliceData(s.Operands)), uintptr(len(s.Operands))*unsafe.Sizeof(s.Operands[0]))
		}
		if s.Rule == Lift {
			add(unsafe.Pointer(unsafe.StringData(s.Result)), uintptr(len(s.Result)))
		}
	}
	if len(a.Steps) > 0 {
		add(unsafe.Pointer(unsafe.SliceData(a.Steps)), uintptr(cap(a.Steps))*unsafe.Sizeof(a.Steps[0]))
	}
	// The balances and reasons classify sums and gathers in stack
	// buffers and keeps at their length.
	for _, d := range []Delta{a.Gross, a.Explained, a.Unexplained, a.Net} {
		if cap(d) > 0 {
			add(unsafe.Pointer(unsafe.SliceData(d)), uintptr(cap(d))*unsafe.Sizeof(d[0]))
		}
	}
	if cap(a.Reasons) > 0 {
		add(unsafe.Pointer(unsafe.SliceData(a.Reasons)), uintptr(cap(a.Reasons))*unsafe.Sizeof(a.Reasons[0]))
	}
	return out
}
