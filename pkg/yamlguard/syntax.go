package yamlguard

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxSearch is the largest text whose syntax errors are located by SyntaxError: beyond it the
// line yaml.v3 gives is kept, as parsing again costs too much.
const maxSearch = 1 << 20

var syntaxLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// SyntaxError finds the line of the syntax error err that yaml.Unmarshal returned for src,
// and the message without its "yaml: line N: " prefix; ok is false when err is not one
// syntax error.
//
// yaml.v3 says where the block or the flow collection holding the error starts (counted
// from 0, so the line before it), not where the parser stopped: an indentation error on
// line 31 of a mapping opened on line 27 reads "yaml: line 26: did not find expected key".
// The line where it stopped is the first whose text, with the lines before it, gives the
// same error; it is at or after the line said. Parsing is linear and the search doubles
// then halves its step, so a file is parsed about 2·log2(lines) times more.
func SyntaxError(src []byte, err error) (line int, msg string, ok bool) {
	if err == nil {
		return 0, "", false
	}
	m := syntaxLine.FindStringSubmatch(err.Error())
	if m == nil || strings.Contains(err.Error(), "\n") {
		return 0, "", false
	}
	said, _ := strconv.Atoi(m[1])
	msg = m[2]
	if len(src) > maxSearch {
		return max(said, 1), msg, true
	}
	var ends []int // ends[k-1] is the end of line k, its newline included
	for i, c := range src {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(src) {
		ends = append(ends, len(src))
	}
	n := len(ends)
	fails := func(k int) bool {
		if k >= n {
			return true
		}
		var doc yaml.Node
		err := yaml.Unmarshal(src[:ends[k-1]], &doc)
		if err == nil {
			return false
		}
		m := syntaxLine.FindStringSubmatch(err.Error())
		return m != nil && m[2] == msg
	}
	lo := min(max(said, 1), n)
	if fails(lo) {
		return lo, msg, true
	}
	// fails(lo) is false: find hi with fails(hi), then the first such line in (lo, hi].
	hi := lo + 1
	for step := 1; !fails(hi); step *= 2 {
		lo, hi = hi, min(hi+2*step, n)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, msg, true
}
