package values

// The patterns of a JSON schema (pattern, and the keys of patternProperties) are ECMA-262
// regular expressions. Go's regexp reads most of the ones real specifications hold, in time
// linear in the value; the rest (lookahead such as us-census's `(?!key)`, lookbehind,
// backreferences) need a backtracking engine, which regexp2 is in its ECMAScript mode.
// A backtracking engine can take exponential time on some values, so its matches are
// bounded in time, one by one and for a whole check.

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

const (
	// matchTimeout bounds one match of a pattern that only regexp2 reads. A testing value is
	// a key, an id or a query string: a pattern that is not pathological matches it in
	// microseconds, so this leaves thousands of times that on a slow or loaded machine, and
	// still stops a catastrophic pattern before a person waiting for the check notices.
	// (regexp2's clock ticks every 100 ms, so a match stops 100 to 300 ms after it starts.)
	matchTimeout = 100 * time.Millisecond
	// maxBacktracking bounds the time all such matches take in one check: testing values may
	// hold 250000 strings, each just under matchTimeout.
	maxBacktracking = time.Second
)

// ecmaOptions reads a pattern as ECMA-262 does: \w, \d and \b are ASCII, \s is Unicode's
// spaces, $ is the end of the value only (not before a final newline, as in .NET), and a
// backreference to a group that has not matched matches the empty string. Unicode adds the
// `u` flag's \u{…} code points; regexp2 matches code points (not UTF-16 units) in any mode,
// as Go's regexp does and as the `u` flag would.
const ecmaOptions = regexp2.ECMAScript | regexp2.Unicode

// pattern is a compiled pattern of the specification. Exactly one of re and ecma is set.
type pattern struct {
	text string         // as written, for messages
	re   *regexp.Regexp // Go's regexp, for every pattern it reads
	ecma *regexp2.Regexp
}

var (
	errMatchTimeout    = errors.New("match timeout")
	errBacktrackBudget = errors.New("backtracking budget spent")
)

// compilePattern reads p with Go's regexp when it can, and with regexp2 otherwise.
func compilePattern(p string) (*pattern, error) {
	re, err := regexp.Compile(ecmaPattern(p))
	if err == nil {
		return &pattern{text: p, re: re}, nil
	}
	ecma, eerr := regexp2.Compile(p, ecmaOptions)
	if eerr != nil {
		// Go's reason says where the pattern goes wrong more plainly, unless what Go's
		// regexp stopped at is a feature it lacks (lookaround, backreferences), which
		// regexp2 reads before it finds the mistake.
		var se *syntax.Error
		if errors.As(err, &se) && se.Code != syntax.ErrInvalidPerlOp && se.Code != syntax.ErrInvalidEscape && se.Code != syntax.ErrInvalidNamedCapture {
			return nil, fmt.Errorf("%s: `%s`", se.Code, se.Expr)
		}
		return nil, errors.New(strings.TrimPrefix(eerr.Error(), "error parsing regexp: "))
	}
	ecma.MatchTimeout = matchTimeout
	return &pattern{text: p, ecma: ecma}, nil
}

// matches reports whether s matches the pattern. A pattern that only regexp2 reads adds
// the time it takes to *spent*, and gives up with errMatchTimeout past matchTimeout or
// errBacktrackBudget once *spent is past maxBacktracking. regexp2's own error is never
// passed on: it quotes the value, and testing values hold credentials.
func (p *pattern) matches(s string, spent *time.Duration) (bool, error) {
	if p.re != nil {
		return p.re.MatchString(s), nil
	}
	if *spent >= maxBacktracking {
		return false, errBacktrackBudget
	}
	start := time.Now()
	ok, err := p.ecma.MatchString(s)
	*spent += time.Since(start)
	if err != nil {
		return false, errMatchTimeout
	}
	return ok, nil
}

// gaveUpMessage says why the pattern could not be matched against a value, without the value.
func (p *pattern) gaveUpMessage(err error) string {
	after := matchTimeout.String()
	if errors.Is(err, errBacktrackBudget) {
		after = fmt.Sprintf("the patterns that backtrack took %v in all", maxBacktracking)
	}
	return fmt.Sprintf("gave up matching the pattern %s after %s (lookaround and backreferences are matched by backtracking, "+
		"which this value makes too slow); simplify the pattern or the value; the testing values after it were not checked", p.text, after)
}

// ecmaSpace is ECMA-262's \s, written as the ranges of a Go character class: Go's own \s
// is ASCII whitespace only, and ECMA-262's takes in Unicode's spaces, the line
// separators and the byte-order mark. ecmaNonSpace is every other code point (\S).
const (
	ecmaSpace    = `\t-\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`
	ecmaNonSpace = `\x00-\x08\x0e-\x1f\x21-\x9f\x{a1}-\x{167f}\x{1681}-\x{1fff}\x{200b}-\x{2027}\x{202a}-\x{202e}` +
		`\x{2030}-\x{205e}\x{2060}-\x{2fff}\x{3001}-\x{fefe}\x{ff00}-\x{10ffff}`
)

// ecmaPattern rewrites the escapes of an ECMA-262 pattern that Go's regexp reads
// differently or not at all: \s and \S (Unicode whitespace in ECMA-262) and the control
// escapes \cA … \cZ. The rest of the common syntax means the same in both.
func ecmaPattern(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '\\' && i+1 < len(p):
			next := p[i+1]
			i++
			switch {
			case next == 's' || next == 'S':
				set := ecmaSpace
				if next == 'S' {
					set = ecmaNonSpace
				}
				if inClass {
					b.WriteString(set)
				} else {
					b.WriteString("[" + set + "]")
				}
			case next == 'c' && i+1 < len(p) && ('a' <= p[i+1] && p[i+1] <= 'z' || 'A' <= p[i+1] && p[i+1] <= 'Z'):
				fmt.Fprintf(&b, `\x%02x`, p[i+1]%32)
				i++
			default:
				b.WriteByte(ch)
				b.WriteByte(next)
			}
		case ch == '[':
			inClass = true
			b.WriteByte(ch)
		case ch == ']':
			inClass = false
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}
