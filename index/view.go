package index

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
)

// Read-only opening after a crash.
//
// Badger keeps the writes not yet flushed to tables in memtable logs
// (NNNNN.mem), each created sparse at twice the memtable size and filled
// from the start. A clean close flushes them and removes them. After a
// crash (SIGKILL, a power cut) they are still there, longer than their
// data, and Badger opened read-only refuses them ("Log truncate required
// to run DB"): only a read-write open truncates them, which a reader
// must not do (and cannot, on a full disk).
//
// openView opens such an index read-only without writing to it: it
// builds a view, a temporary directory in which every file of the index
// is a symbolic link to it except the memtable logs, which are copies of
// their data alone (read with read(2), which on tmpfs reads holes
// without allocating them), and opens Badger read-only on the view. The
// first open tells how far each log's valid data goes (Badger's own
// replay decides, entries and checksums, and reports the offset in its
// error); the copy is cut there and Badger opened again. The view is
// removed when the index is closed (Badger's close opens its directory),
// and one that a killed process left is removed by the next view made.
// The index directory is held with a shared lock, as Badger's own
// read-only mode does, until the index is closed: no writer can open it
// meanwhile.

// viewPrefix names view directories: flowq-view-PID-random.
const viewPrefix = "flowq-view-"

// truncateNeeded matches Badger's error for a memtable log longer than its
// data, opened read-only: the log's file id and where its data ends.
var truncateNeeded = regexp.MustCompile(`while opening fid: (\d+)\b.*end offset: (\d+) < size: (\d+)`)

// sharedLock takes a shared lock on the index directory, as Badger's
// read-only mode does on its own directory: a writer (which takes it
// exclusively) cannot open the index while it is held.
func sharedLock(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := lockShared(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("index %s is open for writing by another process: %w (%w)", dir, errHeld, err)
	}
	return f, nil
}

// errHeld is sharedLock's error for a directory another process holds.
var errHeld = errors.New("held")

// openView opens the index at dir read-only through a view (see above).
// opts gives Badger's options for a directory. It returns the database,
// the lock on dir and the view, which the caller releases and removes
// after closing the database.
//
// live: another process holds dir for writing (OpenSnapshot). The view
// takes no lock, and copies the manifest too, after the memtable logs:
// a log the writer flushes to a table meanwhile is then either copied or
// in the manifest's tables, so the view is a consistent state of the
// index (Badger replays whole transactions only). A table the writer's
// compaction removes before the view opens it makes the open fail; the
// view is built again.
func openView(dir string, opts func(string) badger.Options, live bool) (*badger.DB, *os.File, string, error) {
	var lock *os.File
	if !live {
		var err error
		if lock, err = sharedLock(dir); err != nil {
			return nil, nil, "", err
		}
	}
	release := func() {
		if lock != nil {
			lock.Close()
		}
	}
	removeStaleViews()
	tries := 1
	if live {
		tries = 5
	}
	var err error
	for range tries {
		var view string
		view, err = os.MkdirTemp("", fmt.Sprintf("%s%d-", viewPrefix, os.Getpid()))
		if err != nil {
			release()
			return nil, nil, "", fmt.Errorf("reading index %s needs a temporary directory: %w", dir, err)
		}
		var db *badger.DB
		db, err = openIn(view, dir, opts, live)
		if err == nil {
			return db, lock, view, nil
		}
		os.RemoveAll(view)
	}
	release()
	return nil, nil, "", err
}

// openIn builds the view of dir in view and opens it.
func openIn(view, dir string, opts func(string) badger.Options, live bool) (*badger.DB, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	copied := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".mem") || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err != nil || fi.Size() == 0 {
			// Empty: created by a process killed before it sized the
			// file, it holds nothing, and Badger opened read-only cannot
			// size it. Gone: flushed by a live writer, to a table the
			// manifest copied below names.
			continue
		}
		err := copyData(filepath.Join(abs, name), filepath.Join(view, name))
		if live && errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading index %s: %w", dir, err)
		}
		copied[name] = true
	}
	if live {
		if err := copyData(filepath.Join(abs, "MANIFEST"), filepath.Join(view, "MANIFEST")); err != nil {
			return nil, fmt.Errorf("reading index %s: %w", dir, err)
		}
		copied["MANIFEST"] = true
		if ents, err = os.ReadDir(abs); err != nil {
			return nil, err
		}
	}
	for _, e := range ents {
		name := e.Name()
		empty := false
		if fi, err := e.Info(); err == nil && fi.Size() == 0 {
			empty = true
		}
		switch {
		case name == "LOCK" || name == HolderFile || copied[name] || !e.Type().IsRegular():
		case strings.HasSuffix(name, ".mem"):
			// Empty (see above), or created by a live writer after the
			// copies: newer than the manifest copied.
		case empty && strings.HasSuffix(name, ".vlog"):
			// As an empty memtable log.
		default:
			if err := os.Symlink(filepath.Join(abs, name), filepath.Join(view, name)); err != nil {
				return nil, fmt.Errorf("reading index %s: %w", dir, err)
			}
		}
	}
	// Each round cuts one log (Badger stops at the first it refuses);
	// a log already cut is accepted.
	for range len(ents) + 1 {
		db, err := openBadger(opts(view)) // its tables checked first, a panic an error
		if err == nil {
			return db, nil
		}
		m := truncateNeeded.FindStringSubmatch(err.Error())
		if m == nil {
			return nil, err
		}
		fid, _ := strconv.Atoi(m[1])
		end, _ := strconv.ParseInt(m[2], 10, 64)
		log := filepath.Join(view, fmt.Sprintf("%05d.mem", fid))
		if fi, serr := os.Stat(log); serr != nil || fi.Size() <= end {
			return nil, err // not a log of the view, or not longer than its data: Badger's error stands
		}
		if err := os.Truncate(log, end); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("reading index %s: its memtable logs could not be read", dir)
}

// copyData copies the data of a sparse file: the bytes before its first
// hole (the whole file where holes cannot be found).
func copyData(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	end := fi.Size()
	const seekHole = 4 // SEEK_HOLE (Linux, the BSDs, macOS)
	if h, err := in.Seek(0, seekHole); err == nil && h < end {
		end = h
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(out, in, end); err != nil && !errors.Is(err, io.EOF) {
		out.Close()
		return err
	}
	return out.Close()
}

// removeStaleViews removes the views that processes which no longer run
// left behind (killed while opening).
func removeStaleViews() {
	tmp := os.TempDir()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), viewPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if processGone(pid) {
			os.RemoveAll(filepath.Join(tmp, e.Name()))
		}
	}
}
