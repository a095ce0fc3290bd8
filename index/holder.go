package index

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Who holds an index.
//
// Badger lets one process open a directory for writing (an exclusive
// lock on it) and tells another only "Another process is using this
// Badger database". Open therefore writes a holder file into the index
// directory, naming the process (its id, host, command and start), and
// Close removes it. When an open finds the directory locked, LockedError
// names the holder; a file whose process no longer runs on this host
// (killed) is stale, and is said to be. Readers need not wait:
// OpenSnapshot reads an index another process is writing.

// HolderFile is the holder file's name in the index directory.
const HolderFile = "flowq.holder"

// Command is how the holder file names this process ("flowq repl");
// main sets it. Empty, the program's name is used.
var Command string

// Holder is what a holder file says.
type Holder struct {
	Pid     int
	Host    string
	Command string
	Since   time.Time
	// Stale: the process is not running (on this host).
	Stale bool
}

func (h *Holder) String() string {
	s := fmt.Sprintf("%s (pid %d", h.Command, h.Pid)
	if host, _ := os.Hostname(); h.Host != host {
		s += " on " + h.Host
	}
	return s + ", since " + h.Since.Local().Format("15:04") + ")"
}

// writeHolder writes the holder file of the index at dir for this process.
func writeHolder(dir string) error {
	cmd := Command
	if cmd == "" {
		cmd = filepath.Base(os.Args[0])
	}
	host, _ := os.Hostname()
	text := fmt.Sprintf("pid %d\nhost %s\ncommand %s\nsince %s\n", os.Getpid(), host,
		strings.ReplaceAll(cmd, "\n", " "), time.Now().UTC().Format(time.RFC3339))
	tmp := filepath.Join(dir, HolderFile+".tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, HolderFile))
}

// removeHolder removes the holder file of dir if it names this process.
func removeHolder(dir string) {
	if h, err := ReadHolder(dir); err == nil && h.Pid == os.Getpid() {
		os.Remove(filepath.Join(dir, HolderFile))
	}
}

// ReadHolder reads the holder file of the index at dir.
func ReadHolder(dir string) (*Holder, error) {
	f, err := os.Open(filepath.Join(dir, HolderFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := &Holder{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "pid":
			h.Pid, _ = strconv.Atoi(v)
		case "host":
			h.Host = v
		case "command":
			h.Command = v
		case "since":
			h.Since, _ = time.Parse(time.RFC3339, v)
		}
	}
	if h.Pid <= 0 {
		return nil, fmt.Errorf("%s names no process", filepath.Join(dir, HolderFile))
	}
	if host, _ := os.Hostname(); h.Host == host && processGone(h.Pid) {
		h.Stale = true
	}
	return h, nil
}

// LockedError is Open's and OpenReadOnly's error for an index another
// process holds for writing.
type LockedError struct {
	Path   string
	Holder *Holder // nil when no (readable) holder file names it
	Err    error   // Badger's
}

func (e *LockedError) Error() string {
	switch {
	case e.Holder == nil:
		return fmt.Sprintf("the index %s is in use by another process", e.Path)
	case e.Holder.Stale:
		return fmt.Sprintf("the index %s is in use by another process (its holder file names %s, which no longer runs: stale)", e.Path, e.Holder)
	}
	return fmt.Sprintf("the index %s is in use by %s", e.Path, e.Holder)
}

func (e *LockedError) Unwrap() error { return e.Err }

// lockedError is err as a LockedError when it is the refusal of a
// directory another process holds (Badger's, or sharedLock's), and nil
// otherwise. Badger's is matched by its text: it wraps no sentinel.
func lockedError(path string, err error) *LockedError {
	if err == nil || !strings.Contains(err.Error(), "Cannot acquire directory lock") && !errors.Is(err, errHeld) {
		return nil
	}
	h, _ := ReadHolder(path)
	return &LockedError{Path: path, Holder: h, Err: err}
}
