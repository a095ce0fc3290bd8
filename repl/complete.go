package repl

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// Names the completer offers besides the keywords. Each list is what the
// planner or the engine accepts in that place (TestCompletionNames checks
// them against the parser and the engine).
var (
	// starters begin a statement.
	starters = []string{"explain", "find", "same", "match", "anomalies", "count", "show"}
	// findKinds follow find.
	findKinds = []string{"arbitrages", "warnings", "none", "transactions", "txs", "sandwiches", "backruns"}
	// countWhat follow count.
	countWhat = []string{"transactions", "txs", "bots", "shapes", "families", "sandwiches", "backruns"}
	// groups follow count … by.
	groups = []string{"family", "shape", "tokens", "exact", "bot", "sender", "verdict", "tier", "path", "mode", "block"}
	// findingGroups follow count sandwiches by, count backruns by.
	findingGroups = []string{"bot", "sender", "block"}
	// showWhat follow show: a transaction's hash, or block N.
	showWhat = []string{"block"}
	// metrics follow order by.
	metrics = []string{"gross", "net", "pools", "hops", "cycles", "leftovers", "block"}
	// views follow show TX as.
	views = []string{"tree", "terms", "cycles", "balances", "steps", "transfers", "all"}
	// reasons follow reason.
	reasons = reasonNames()
)

func levels() []string {
	var out []string
	for l := normalform.Exact; l <= normalform.Family; l++ {
		out = append(out, l.String())
	}
	return out
}

func verdicts() []string {
	var out []string
	for v := normalform.VerdictNone; v <= normalform.VerdictArbitrage; v++ {
		out = append(out, v.String())
	}
	return out
}

func reasonNames() []string {
	var out []string
	for _, r := range normalform.Reasons {
		out = append(out, string(r))
	}
	return out
}

func modeNames() []string {
	var out []string
	for _, m := range normalform.Modes {
		out = append(out, m.String())
	}
	return out
}

func paths() []string {
	var out []string
	for _, p := range normalform.Paths {
		out = append(out, p.String())
	}
	return out
}

func tiers() []string {
	var out []string
	for t := normalform.TierConfirmed; t <= normalform.TierUncertain; t++ {
		out = append(out, t.String())
	}
	return out
}

// symbols are the token symbols the configuration knows: the native
// asset, the wrapped native contracts and the chain's well-known tokens.
func symbols(cfg *normalform.Config) []string {
	out := []string{cfg.NativeSymbol}
	add := func(a normalform.Address) {
		if ti, ok := cfg.TokenInfo(normalform.FungibleToken(a)); ok && ti.Symbol != "" {
			if _, unique := cfg.TokenBySymbol(ti.Symbol); unique {
				out = append(out, ti.Symbol)
			}
		}
	}
	for _, a := range cfg.WrappedNative() {
		add(a)
	}
	if n, ok := normalform.Networks[cfg.ChainID]; ok {
		for a := range n.Tokens {
			add(a)
		}
	}
	return out
}

// completer is readline's AutoCompleter: it completes dot-commands and
// their arguments, and in a statement the keywords and names that fit
// where the cursor is (the statement's earlier lines count).
type completer struct {
	symbols  []string
	keywords []string

	// pending is the open statement's earlier lines, asked for only when
	// Tab is pressed (readline calls Do while the loop waits for the line,
	// so the statement does not change meanwhile).
	pending func() string
}

func newCompleter(r *REPL) *completer {
	c := &completer{symbols: symbols(r.cfg), keywords: lang.Keywords(), pending: r.pendingText}
	c.keywords = append(c.keywords, levels()...)
	return c
}

// Do implements readline.AutoCompleter: the endings of the candidates
// for the word before pos, and that word's length.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	prefix, cands := c.complete(c.pending(), string(line[:pos]))
	var out [][]rune
	for _, s := range cands {
		out = append(out, []rune(s))
	}
	return out, len([]rune(prefix))
}

// complete returns the word being typed and the endings that complete it
// (each ends with a space, or a "/" for a directory).
func (c *completer) complete(pending, text string) (string, []string) {
	if pending == "" && strings.HasPrefix(strings.TrimLeft(text, " \t"), ".") {
		return completeCommand(text)
	}
	_, stmt, state := split(pending + "\n" + text)
	if state != inCode {
		return "", nil // in a comment or a string
	}
	prefix := trailingWord(text)
	toks := tokens(code(stmt[:len(stmt)-len(prefix)]))
	return prefix, endings(prefix, c.candidates(toks))
}

// candidates are the words that may come after toks (lower case).
func (c *completer) candidates(toks []string) []string {
	last := func(i int) string {
		if len(toks) >= i {
			return toks[len(toks)-i]
		}
		return ""
	}
	first := ""
	for _, t := range toks {
		if t != "explain" {
			first = t
			break
		}
	}
	isNum := func(s string) bool { return s != "" && unicode.IsDigit(rune(s[0])) && !strings.HasPrefix(s, "0x") }
	switch l := last(1); {
	case len(toks) == 0:
		return starters
	case l == "explain" && len(toks) == 1:
		return starters[1:]
	case l == "reason":
		return reasons
	case (l == "=" || l == "==" || l == "!=" || l == "is") && last(2) == "verdict":
		return verdicts()
	case (l == "=" || l == "==" || l == "!=" || l == "is") && last(2) == "tier":
		return tiers()
	case (l == "=" || l == "==" || l == "!=" || l == "is") && last(2) == "path":
		return paths()
	case (l == "=" || l == "==" || l == "!=" || l == "is") && last(2) == "mode":
		return modeNames()
	case l == "at":
		return levels()
	case l == "by" && last(2) == "order":
		return metrics
	case l == "by" && first == "count" && (slices.Contains(toks, "sandwiches") || slices.Contains(toks, "backruns")):
		return findingGroups
	case l == "by" && first == "count":
		return groups
	case l == "show":
		return showWhat
	case l == "as" || (l == "," && first == "show"):
		return views
	case l == "in" || l == "touches":
		return c.symbols
	case l == "find":
		return append(slices.Clone(findKinds), "where", "order", "limit")
	case l == "count":
		return append(slices.Clone(countWhat), "by")
	case isNum(l):
		return append(slices.Clone(c.symbols), c.keywords...)
	}
	return c.keywords
}

var tokenRE = regexp.MustCompile(`[A-Za-z0-9_]+|\.\.|==|!=|>=|<=|[=<>(),]`)

// tokens are the words and operators of a statement, lower-cased.
func tokens(s string) []string {
	toks := tokenRE.FindAllString(s, -1)
	for i := range toks {
		toks[i] = strings.ToLower(toks[i])
	}
	return toks
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// trailingWord is the word that ends text.
func trailingWord(text string) string {
	i := strings.LastIndexFunc(text, func(r rune) bool { return !isWordRune(r) })
	return text[i+1:]
}

// endings keeps the candidates that extend prefix (without regard to
// case) and returns what completes each, in the case the prefix is typed
// in (the language ignores case), with a space after it.
func endings(prefix string, cands []string) []string {
	seen := map[string]bool{}
	var out []string
	lower, upper := strings.ToLower(prefix), strings.ToUpper(prefix)
	for _, c := range cands {
		if len(c) < len(prefix) || !strings.EqualFold(c[:len(prefix)], prefix) {
			continue
		}
		end := c[len(prefix):]
		switch {
		case prefix != "" && prefix == lower && lower != upper:
			end = strings.ToLower(end)
		case prefix != "" && prefix == upper && lower != upper:
			end = strings.ToUpper(end)
		}
		if !seen[end] {
			seen[end] = true
			out = append(out, end+" ")
		}
	}
	sort.Strings(out)
	return out
}

// completeCommand completes a dot-command line: the command's name, then
// its arguments (words from the table, or file names).
func completeCommand(text string) (string, []string) {
	fields := strings.Fields(text)
	if len(fields) == 1 && !strings.HasSuffix(text, " ") && !strings.HasSuffix(text, "\t") {
		return fields[0], endings(fields[0], commandNames())
	}
	cmd := lookup(fields[0])
	if cmd == nil {
		return "", nil
	}
	word := ""
	if !strings.HasSuffix(text, " ") && !strings.HasSuffix(text, "\t") {
		word = fields[len(fields)-1]
	}
	var out []string
	if cmd.argWords != nil {
		out = endings(word, cmd.argWords())
	}
	if cmd.paths {
		out = append(out, pathEndings(word)...)
	}
	return word, out
}

// pathEndings completes a file name: what completes each entry of its
// directory that starts with its base ("/" after a directory).
func pathEndings(word string) []string {
	dir, base := filepath.Split(word)
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, base) || (strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		if e.IsDir() {
			out = append(out, n[len(base):]+"/")
		} else {
			out = append(out, n[len(base):]+" ")
		}
	}
	return out
}
