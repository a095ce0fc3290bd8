package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// InfoFile is the file a server keeps in the index directory it serves:
// where it listens, its process and when it started. Clients read it to
// find the server; the server removes it when it stops. A file left by a
// server that was killed is stale: its process no longer runs on this
// host, or it does not answer at its address.
const InfoFile = "flowq.server"

// Info is what the server file says.
type Info struct {
	Addr    string    `json:"addr"` // host:port, on loopback unless --listen said otherwise
	Pid     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
	Index   string    `json:"index"` // the index directory, absolute
	Version string    `json:"version"`
}

// URL is the server's base URL.
func (i *Info) URL() string { return "http://" + i.Addr }

func (i *Info) String() string {
	return fmt.Sprintf("flowq serve at %s (pid %d, since %s)", i.Addr, i.Pid, i.Since.Local().Format("15:04"))
}

// writeInfo writes the server file of dir, whole or not at all.
func writeInfo(dir string, info *Info) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, InfoFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, InfoFile))
}

// removeInfo removes the server file of dir when it names this process.
func removeInfo(dir string) {
	if info, err := ReadInfo(dir); err == nil && info.Pid == os.Getpid() {
		os.Remove(filepath.Join(dir, InfoFile))
	}
}

// ReadInfo reads the server file of the index at dir (an error wrapping
// fs.ErrNotExist when there is none).
func ReadInfo(dir string) (*Info, error) {
	b, err := os.ReadFile(filepath.Join(dir, InfoFile))
	if err != nil {
		return nil, err
	}
	info := &Info{}
	if err := json.Unmarshal(b, info); err != nil || info.Addr == "" || info.Pid <= 0 {
		return nil, fmt.Errorf("%s is not a server file (%v)", filepath.Join(dir, InfoFile), err)
	}
	return info, nil
}

// StaleError is Find's answer for a server file whose server is gone.
type StaleError struct {
	Path string // the server file
	Info *Info
	Why  string
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s names %s, which %s: stale, ignored", e.Path, e.Info, e.Why)
}

// Find looks for a live server holding the index at dir. It returns a
// client of it; nil and no error when the directory has no server file;
// a *StaleError when the file's server is gone (its process no longer
// runs: the file is removed; or it does not answer within timeout, or
// answers for another index: the file is left for its owner).
func Find(dir string, timeout time.Duration) (*Client, error) {
	info, err := ReadInfo(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, InfoFile)
	if host, _ := os.Hostname(); info.Host == host && !processAlive(info.Pid) {
		// Only a file still naming the dead process is removed: a server
		// started meanwhile has written its own.
		if again, err := ReadInfo(dir); err == nil && again.Pid == info.Pid && again.Since.Equal(info.Since) {
			os.Remove(path)
		}
		return nil, &StaleError{Path: path, Info: info, Why: "no longer runs"}
	}
	c := NewClient(info.URL())
	c.Info = info
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil {
		return nil, &StaleError{Path: path, Info: info, Why: fmt.Sprintf("does not answer (%v)", err)}
	}
	if abs, _ := filepath.Abs(dir); !sameDir(st.Index, abs) {
		return nil, &StaleError{Path: path, Info: info, Why: fmt.Sprintf("serves another index (%s)", st.Index)}
	}
	return c, nil
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// statusClient is the HTTP client of Status: a short answer.
var statusClient = &http.Client{}
