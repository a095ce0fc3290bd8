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

// Names the completer offers besides the keywords: the words of the
// language's vocabulary (lang.Vocab) that fit each place, so that the
// completer, the parser and the planner read one table
// (TestCompletionNames checks that each parses where it is offered).
var (
	// starters begin a statement.
	starters = lang.Vocab.Words(lang.ClassStatement, lang.Anywhere)
	// findKinds follow find.
	findKinds = lang.Vocab.Words(lang.ClassFindTarget, lang.Anywhere)
	// countWhat follow count.
	countWhat = lang.Vocab.Words(lang.ClassCountWhat, lang.Anywhere)
	// groups follow count … by.
	groups = lang.Vocab.Words(lang.ClassGroupBy, lang.InTxs)
	// findingGroups follow count sandwiches by, count backruns by.
	findingGroups = lang.Vocab.Words(lang.ClassGroupBy, lang.InFindings)
	// showWhat follow show: a transaction's hash, or block N.
	showWhat = []string{"block"}
	// metrics follow order by.
	metrics = lang.Vocab.Words(lang.ClassMetric, lang.Anywhere)
	// views follow show TX as.
	views = lang.Vocab.Words(lang.ClassView, lang.InTxs)
	// reasons follow reason.
	reasons = lang.Vocab.Words(lang.ClassReason, lang.InTxs)
)

func levels() []string    { return lang.Vocab.Words(lang.ClassLevel, lang.InTxs) }
func verdicts() []string  { return lang.Vocab.Words(lang.ClassVerdict, lang.InTxs) }
func modeNames() []string { return lang.Vocab.Words(lang.ClassMode, lang.InTxs) }
func paths() []string     { return lang.Vocab.Words(lang.ClassPath, lang.InTxs) }
func tiers() []string     { return lang.Vocab.Words(lang.ClassTier, lang.InTxs) }

// fieldValues are the values of the field a condition names ("verdict" in
// "verdict = "), from the vocabulary; nil when w names no field.
func fieldValues(w string) []string {
	d, ok := lang.Vocab.Lookup(lang.ClassCondition, w)
	if f, isField := d.Value.(lang.Field); ok && isField {
		return lang.Vocab.Words(f.Class(), lang.InTxs)
	}
	return nil
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
	if state != lang.InCode {
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
	case (l == "=" || l == "==" || l == "!=" || l == "is") && fieldValues(last(2)) != nil:
		return fieldValues(last(2))
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
	if cmd.name == ".open" && len(fields)-1-len(strings.Fields(word)) == 0 {
		// .open's first argument may be --lake (a Parquet lake), then
		// the lake's directory.
		out = endings(word, []string{"--lake"})
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
