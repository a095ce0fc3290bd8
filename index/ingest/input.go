package ingest

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Reading inputs with a bound. The size limit (--max-bytes) is enforced on
// the bytes actually read, never on what stat says: /dev/zero, a named
// pipe, standard input or a file growing while it is read all report a
// size that means nothing. A regular file whose size is already over the
// limit is refused without being read; anything else is read through a
// reader that stops one byte past the limit.

// SizeError is an input over the size limit.
type SizeError struct {
	Limit int64 // the limit in force, in bytes
	// Size is the input's size when stat gave it (a regular file, refused
	// before reading); -1 when reading stopped one byte past the limit.
	Size int64
}

func (e *SizeError) Error() string {
	if e.Size >= 0 {
		return fmt.Sprintf("the input is %d bytes, over the limit of %d bytes (--max-bytes); not read", e.Size, e.Limit)
	}
	return fmt.Sprintf("the input is over the limit of %d bytes (--max-bytes); stopped reading after %d bytes", e.Limit, e.Limit+1)
}

// ReadAll reads r to its end, or fails with a *SizeError once r has given
// more than max bytes (max <= 0: no limit). It never holds more than
// max+1 bytes of r.
func ReadAll(r io.Reader, max int) ([]byte, error) {
	return readAll(r, max, 0)
}

// readAll is ReadAll with a size hint (a regular file's size) for one
// buffer read in place. Without a hint, r is read into chunks of growing
// size (32 KiB to 16 MiB) joined once at the end: an input over the limit
// never holds more than the limit and a chunk, and one under it about
// twice its size for a moment, where growing one buffer by doubling holds
// up to three times the size with the garbage of the earlier buffers.
func readAll(r io.Reader, max int, hint int64) ([]byte, error) {
	if max > 0 {
		r = io.LimitReader(r, int64(max)+1)
		hint = min(hint, int64(max)+1)
	}
	over := func(n int) bool { return max > 0 && n > max }
	if hint > 0 {
		b := make([]byte, 0, hint+1) // +1: the read that finds the end
		for {
			n, err := r.Read(b[len(b):cap(b)])
			b = b[:len(b)+n]
			if over(len(b)) {
				return nil, &SizeError{Limit: int64(max), Size: -1}
			}
			if err == io.EOF {
				return b, nil
			}
			if err != nil {
				return nil, err
			}
			if len(b) == cap(b) { // the file grew
				b = append(b, 0)[:len(b)]
			}
		}
	}
	var chunks [][]byte
	total := 0
	size := 32 << 10
	for {
		c := make([]byte, size)
		n, err := io.ReadFull(r, c)
		total += n
		if n > 0 {
			chunks = append(chunks, c[:n])
		}
		if over(total) {
			return nil, &SizeError{Limit: int64(max), Size: -1}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(2*size, 16<<20)
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	out := make([]byte, 0, total)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil
	}
	return out, nil
}

// ReadFile reads the file at path, at most max bytes (max <= 0: no
// limit): a regular file over the limit is refused from its size, unread;
// anything else (a device, a named pipe, /dev/stdin) is read until it ends
// or gives more than max bytes. Errors are *SizeError or the file's own.
func ReadFile(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var hint int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if max > 0 && st.Size() > int64(max) {
			return nil, &SizeError{Limit: int64(max), Size: st.Size()}
		}
		hint = st.Size()
	}
	return readAll(f, max, hint)
}

// NotRegularError is a file found in a folder that is not a regular file
// (or a link to one): a named pipe, a device, a socket. Such files are
// not read (a pipe can block forever, a device can be endless); naming
// one as an argument reads it, with the size limit.
type NotRegularError struct {
	Path string
	Kind string // "a named pipe", "a device", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: skipped (files found in a folder are read only when regular; give it by name to read it)", e.Path, e.Kind)
}

// fileKind names what a non-regular file is ("" for a regular one).
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// ReadRegularFile is ReadFile for a file nobody named (found in a folder,
// or read again by --retry-failed): it reads only a regular file, or a
// link to one, and refuses anything else with a *NotRegularError, before
// opening it (opening a named pipe blocks until a writer comes).
func ReadRegularFile(path string, max int) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if k := fileKind(st.Mode()); k != "" {
		return nil, &NotRegularError{Path: path, Kind: k}
	}
	return ReadFile(path, max)
}

// dirInputs are the inputs under dir: every *.json file (foundInput) and
// every range of cryo's Parquet datasets (cryo.go). It fails when there is
// neither, or when a cryo range lacks one of its datasets.
func dirInputs(dir string) ([]Input, error) {
	cryo, err := cryoInputs(dir)
	if err != nil {
		return nil, err
	}
	found, err := FindJSON(dir)
	if err != nil && len(cryo) == 0 {
		return nil, fmt.Errorf("%s: no *.json file and no cryo Parquet dataset (NETWORK__logs__A_to_B.parquet with its transactions and blocks) in this directory", dir)
	}
	var out []Input
	for _, q := range found {
		out = append(out, foundInput(q))
	}
	return append(out, cryo...), nil
}

// namedInput is the input of a name recorded in the index (a failure's
// source), read again: a cryo range's files, or a regular file.
func namedInput(n string) Input {
	if IsCryoName(n) {
		return cryoInput(n)
	}
	return Input{Name: n, Load: func(max int) ([]byte, error) { return ReadRegularFile(n, max) }, Size: regularSize(n)}
}

// FindJSON returns every *.json under dir, in lexical order: regular
// files, links and all (ReadRegularFile decides, when reading, which are
// read). It fails when there is none.
func FindJSON(dir string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(q, ".json") {
			found = append(found, q)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s: no *.json file in this directory", dir)
	}
	sort.Strings(found)
	return found, nil
}
