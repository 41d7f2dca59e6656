package transform

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// snakeToken is the CDK's KeysToSnakeCase token pattern; group 1 is a run of separators.
var snakeToken = regexp.MustCompile(`[A-Z]+[a-z]*|[a-z]+|\d+|([^a-zA-Z\d]+)`)

// snakeCase is the CDK's KeysToSnakeCaseTransformation.process_key: the key made ASCII,
// cut into tokens (capitalised words, lower-case words, digits), separators dropped except
// at the ends, joined with "_" in lower case.
func snakeCase(key string) (string, error) {
	ascii, err := toASCII(key)
	if err != nil {
		return key, err
	}
	var tokens []string
	for _, m := range snakeToken.FindAllStringSubmatchIndex(ascii, -1) {
		if m[2] >= 0 {
			tokens = append(tokens, "")
		} else {
			tokens = append(tokens, ascii[m[0]:m[1]])
		}
	}
	if len(tokens) >= 3 {
		kept := []string{tokens[0]}
		for _, t := range tokens[1 : len(tokens)-1] {
			if t != "" {
				kept = append(kept, t)
			}
		}
		tokens = append(kept, tokens[len(tokens)-1])
	}
	if len(tokens) > 0 && isDecimal(tokens[0]) {
		tokens = append([]string{""}, tokens...)
	}
	for i, t := range tokens {
		tokens[i] = strings.ToLower(t)
	}
	return strings.Join(tokens, "_"), nil
}

// toASCII stands for the CDK's anyascii where it is simple: a letter with accents loses them
// (é → e), a compatibility form takes its plain spelling (ﬁ → fi, Ⅻ → XII). Other
// characters have no ASCII spelling here, and are an error rather than a key that differs
// from Airbyte's: a combining mark anyascii spells (U+0363 on, Hebrew and Arabic points),
// and a spacing form whose decomposition starts with a space (anyascii spells U+1FFE as h).
func toASCII(s string) (string, error) {
	if isASCII(s) {
		return s, nil
	}
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		d := norm.NFKD.String(string(r))
		ok := !strings.HasPrefix(d, " ") || unicode.Is(unicode.Zs, r)
		for _, x := range d {
			switch {
			case !ok:
			case x < utf8.RuneSelf:
				b.WriteRune(x)
			case x >= 0x300 && x <= 0x362:
				// an accent, which anyascii drops
			default:
				ok = false
			}
		}
		if !ok {
			return s, fmt.Errorf("KeysToSnakeCase: the key %q has a character (%q) connector cannot spell in ASCII as the CDK's anyascii does", s, r)
		}
	}
	return b.String(), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
