package lake

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// DefaultRangeSize is the number of blocks of a range file.
const DefaultRangeSize = 1000

// MaxBlock is the largest block a lake names: file names carry twelve
// digits.
const MaxBlock = 999_999_999_999

// Layout is where a lake's files are: DIR/chain=CHAIN/ holds one file per
// range of RangeSize blocks aligned on multiples of RangeSize, named
// blocks-FIRST-LAST.parquet with both block numbers on twelve digits
// (DIR/chain=mainnet/blocks-000011017000-000011017999.parquet). The
// directory is a hive partition (read_parquet(..., hive_partitioning=true)
// gives a chain column from it); the file name is not.
type Layout struct {
	Dir       string
	Chain     string
	RangeSize uint64
}

// Range is an inclusive block range of a lake.
type Range struct{ First, Last uint64 }

// Shard is the part of the ranges a worker writes: the ranges whose index
// (First / RangeSize) is I modulo N. The zero Shard (N 0) is every range.
type Shard struct{ I, N uint64 }

var chainName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Check reports a layout that cannot name files.
func (l Layout) Check() error {
	if l.Dir == "" {
		return fmt.Errorf("lake: no directory")
	}
	if !chainName.MatchString(l.Chain) {
		return fmt.Errorf("lake: chain name %q: want lower-case letters, digits, '-' and '_'", l.Chain)
	}
	if l.RangeSize == 0 || l.RangeSize > MaxBlock {
		return fmt.Errorf("lake: range size %d: want 1 to %d blocks", l.RangeSize, uint64(MaxBlock))
	}
	return nil
}

// ChainDir is DIR/chain=CHAIN.
func (l Layout) ChainDir() string { return filepath.Join(l.Dir, "chain="+l.Chain) }

// RangeOf is the range holding block b.
func (l Layout) RangeOf(b uint64) Range {
	first := b - b%l.RangeSize
	return Range{First: first, Last: first + l.RangeSize - 1}
}

// Index is the range's position: First / RangeSize.
func (l Layout) Index(r Range) uint64 { return r.First / l.RangeSize }

// Path is the file of range r.
func (l Layout) Path(r Range) string {
	return filepath.Join(l.ChainDir(), FileName(r))
}

// FileName is the base name of range r's file.
func FileName(r Range) string { return fmt.Sprintf("blocks-%012d-%012d.parquet", r.First, r.Last) }

var fileName = regexp.MustCompile(`^blocks-(\d{12})-(\d{12})\.parquet$`)

// ParseFileName reads a range file's base name.
func ParseFileName(name string) (Range, bool) {
	m := fileName.FindStringSubmatch(name)
	if m == nil {
		return Range{}, false
	}
	a, _ := strconv.ParseUint(m[1], 10, 64)
	b, _ := strconv.ParseUint(m[2], 10, 64)
	return Range{First: a, Last: b}, a <= b
}

// Ranges are the ranges that meet blocks from..to (inclusive), in order.
func (l Layout) Ranges(from, to uint64) []Range {
	var out []Range
	if from > to {
		return nil
	}
	for r := l.RangeOf(from); ; r = l.RangeOf(r.Last + 1) {
		out = append(out, r)
		if r.Last >= to {
			return out
		}
	}
}

// Has reports whether the shard writes range r.
func (s Shard) Has(l Layout, r Range) bool { return s.N == 0 || l.Index(r)%s.N == s.I }

// ParseShard reads "i/n" (0 <= i < n).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.ParseUint(a, 10, 64)
	n, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || n == 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 <= i < n (for example 0/4)", s)
	}
	return Shard{I: i, N: n}, nil
}

// Files lists the range files of a lake directory (every chain), sorted by
// path. Temporary files (a killed writer's) are not listed.
func Files(dir string) ([]string, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	return out, nil
}
