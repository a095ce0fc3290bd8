package fetch

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Node URLs carry secrets: a user and password, an API key as a path
// segment (Alchemy's /v2/KEY, Infura's /v3/KEY, QuickNode's /TOKEN/,
// Ankr's /eth/KEY) or as a query value (?apikey=KEY). RedactURL is how
// flowq prints a node URL, everywhere; the client scrubs its errors with
// it, since Go's net/http puts the URL in its errors (url.Error: `Post
// "http://user:***@host/v2/KEY?key=K": ...`, the password masked, the
// rest not).

// keptSegment matches the path segments shown as they are: a version
// (v2) or a short lowercase word (eth, rpc, mainnet). Anything else (a
// segment with digits or capitals, or longer) may be a key.
var keptSegment = regexp.MustCompile(`^(v[0-9]{1,3}|[a-z_-]{1,12})$`)

// RedactURL returns the node URL endpoint for messages: scheme and host
// kept, the user and password replaced by ***, every path segment that
// may be a key by ***, every query value by ***, the fragment dropped.
//
//	http://user:pass@host/v2/KEY?key=K  ->  http://***@host/v2/***?key=***
//	https://mainnet.infura.io/v3/0123abcd…  ->  https://mainnet.infura.io/v3/***
//
// A URL that does not parse is "the node URL".
func RedactURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err == nil && u.Host == "" && u.Opaque == "" && !strings.HasPrefix(endpoint, "/") {
		if v, err2 := url.Parse("//" + endpoint); err2 == nil && v.Host != "" { // host/path without a scheme
			u = v
		}
	}
	if err != nil {
		return "the node URL"
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme)
		b.WriteString("://")
	} else if u.Host != "" {
		b.WriteString("//")
	}
	if u.User != nil {
		b.WriteString("***@")
	}
	b.WriteString(u.Host)
	if u.Opaque != "" {
		b.WriteString("***")
	}
	if p := u.EscapedPath(); p != "" {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			if s != "" && !keptSegment.MatchString(s) {
				segs[i] = "***"
			}
		}
		b.WriteString(strings.Join(segs, "/"))
	}
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		for i, kv := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			k, _, hasV := strings.Cut(kv, "=")
			if !keptSegment.MatchString(k) && k != "" {
				k = "***" // a bare key (?KEY) or an odd name
			}
			b.WriteString(k)
			if hasV {
				b.WriteString("=***")
			}
		}
	}
	return b.String()
}

// scrubber replaces every form of a node URL, and the secrets in it, in
// error texts.
type scrubber struct {
	redacted string
	urls     []string // the forms the URL is printed in, longest first
	paths    []string // the path and query as the node sees them
	secrets  []string // its secrets, longest first
}

// minSecret is the shortest secret replaced wherever it appears in a
// message (a node's error page quoting the key); shorter ones are only
// replaced as part of the URL, so that a secret "K" does not eat every K.
const minSecret = 6

func newScrubber(endpoint string) *scrubber {
	s := &scrubber{redacted: RedactURL(endpoint)}
	addURL := func(f string) {
		if f != "" && f != s.redacted && !slices.Contains(s.urls, f) {
			s.urls = append(s.urls, f)
		}
	}
	addSecret := func(x string) {
		if len(x) >= minSecret && !strings.Contains(s.redacted, x) && !slices.Contains(s.secrets, x) {
			s.secrets = append(s.secrets, x)
		}
	}
	addURL(endpoint)
	if u, err := url.Parse(endpoint); err == nil {
		addURL(u.String())
		addURL(u.Redacted())
		if _, ok := u.User.Password(); ok { // as net/http prints it (stripPassword)
			addURL(strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1))
		}
		if ru := u.RequestURI(); ru != "/" && ru != "" { // as the node sees it
			s.paths = append(s.paths, ru)
		}
		if u.User != nil {
			addSecret(u.User.Username())
			p, _ := u.User.Password()
			addSecret(p)
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if !keptSegment.MatchString(seg) {
				addSecret(seg)
			}
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				addSecret(v)
			}
		}
	}
	longestFirst := func(a, b string) int { return len(b) - len(a) }
	slices.SortStableFunc(s.urls, longestFirst)
	slices.SortStableFunc(s.secrets, longestFirst)
	return s
}

// text scrubs one message: the URL's forms become the redacted URL, then
// any secret left becomes ***.
func (s *scrubber) text(msg string) string {
	for _, f := range s.urls {
		msg = strings.ReplaceAll(msg, f, s.redacted)
	}
	for _, p := range s.paths {
		msg = strings.ReplaceAll(msg, p, s.redactedPath())
	}
	for _, x := range s.secrets {
		msg = strings.ReplaceAll(msg, x, "***")
	}
	return msg
}

// redactedPath is the redacted URL's path and query.
func (s *scrubber) redactedPath() string {
	r := s.redacted
	if i := strings.Index(r, "://"); i >= 0 {
		r = r[i+3:]
	} else {
		r = strings.TrimPrefix(r, "//")
	}
	if i := strings.IndexAny(r, "/?"); i >= 0 {
		return r[i:]
	}
	return ""
}

// err wraps err so that its message is scrubbed; errors.Is and As still
// see the cause.
func (s *scrubber) err(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*scrubbed); ok {
		return err
	}
	return &scrubbed{msg: s.text(err.Error()), err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
