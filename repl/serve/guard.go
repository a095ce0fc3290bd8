package serve

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// What a web page elsewhere can make a browser do to a flowq server.
//
// A page on another site cannot read the server's answers (no CORS
// headers are sent), but its browser can still send a form: a POST of
// multipart/form-data or text/plain needs no preflight, and /ingest takes
// multipart. Any page a user opened could start an ingest of paths on
// the server's host, or of a block range from a node it names, into the
// user's index. crossSite (Go's http.CrossOriginProtection: the
// Sec-Fetch-Site header browsers send, or an Origin whose host is not
// the request's) refuses a browser's POST from another origin; the web
// page's own requests, and the CLI's (no such headers), pass.
//
// DNS rebinding gets past that: a name the attacker controls, resolved
// first to its own page and then to 127.0.0.1, makes the server the
// page's own origin, and its answers (queries, /export of the whole
// index) readable by it. Such a request carries the attacker's name in
// its Host header: hostGuard answers only requests addressed to a name
// of this server (an IP address, localhost, this machine's host name, or
// one given to flowq serve with --allow-host).

// hostGuard refuses a request whose Host is not one of the server's
// names; then next.
type hostGuard struct {
	allow map[string]bool // lower case, no trailing dot
	next  http.Handler
}

func newHostGuard(allow []string, next http.Handler) *hostGuard {
	g := &hostGuard{allow: map[string]bool{"localhost": true}, next: next}
	if h, err := os.Hostname(); err == nil && h != "" {
		h = canonicalHost(h)
		g.allow[h] = true
		if short, _, ok := strings.Cut(h, "."); ok {
			g.allow[short] = true
		}
	}
	for _, a := range allow {
		if a = canonicalHost(a); a != "" {
			g.allow[a] = true
		}
	}
	return g
}

// canonicalHost is a Host header's name without its port, brackets and
// trailing dot, in lower case.
func canonicalHost(h string) string {
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// allowed reports whether a request addressed to host (a Host header)
// is the server's. A request without one (HTTP/1.0) is not a browser's.
func (g *hostGuard) allowed(host string) bool {
	h := canonicalHost(host)
	if h == "" || net.ParseIP(h) != nil || g.allow[h] {
		return true
	}
	// RFC 6761: browsers resolve *.localhost to loopback themselves.
	return strings.HasSuffix(h, ".localhost")
}

func (g *hostGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.allowed(r.Host) {
		name := canonicalHost(r.Host)
		httpError(w, http.StatusForbidden, fmt.Errorf("flowq serve: the request is addressed to %q, which is not a name of this server (a guard against DNS rebinding); "+
			"to serve the index under that name, start flowq serve with --allow-host %s", name, name))
		return
	}
	g.next.ServeHTTP(w, r)
}

// crossSite wraps next in Go's protection against cross-origin browser
// requests, its refusal saying what was refused.
func crossSite(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from := r.Header.Get("Origin")
		if from == "" {
			from = "another site (Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + ")"
		}
		httpError(w, http.StatusForbidden, fmt.Errorf("flowq serve: %s %s from %s refused: a browser's request from another origin (cross-site request forgery guard); use the server's own page or the flowq commands",
			r.Method, r.URL.Path, from))
	}))
	return p.Handler(next)
}
