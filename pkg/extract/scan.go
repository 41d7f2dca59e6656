package extract

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// number scans a JSON number; its value is a json.Number holding the exact text.
func (p *parser) number(build bool) (any, error) {
	start := p.pos
	d := p.data
	if p.pos < len(d) && d[p.pos] == '-' {
		p.pos++
	}
	if p.pos >= len(d) {
		return nil, p.errorf("invalid number")
	}
	switch {
	case d[p.pos] == '0':
		p.pos++
	case d[p.pos] >= '1' && d[p.pos] <= '9':
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	default:
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if !p.digits() {
			return nil, p.errorf("invalid number: no digit after the decimal point")
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if !p.digits() {
			return nil, p.errorf("invalid number: no digit in the exponent")
		}
	}
	if !build {
		return nil, nil
	}
	return json.Number(d[start:p.pos]), nil
}

func (p *parser) digits() bool {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}

// str scans a JSON string starting at its opening quote; its value is built only when build
// is set.
func (p *parser) str(build bool) (any, error) {
	start := p.pos + 1
	escaped, err := p.skipString()
	if err != nil || !build {
		return nil, err
	}
	return keyString(p.data[start:p.pos-1], escaped), nil
}

// keyString is the Go string of a JSON string's body (between the quotes).
func keyString(raw []byte, escaped bool) string {
	if escaped {
		return unescape(raw)
	}
	if !utf8.Valid(raw) {
		return string([]rune(string(raw)))
	}
	return string(raw)
}

// keyIs reports whether the body of a JSON string equals s, without allocating for the
// usual key without escapes.
func keyIs(raw []byte, escaped bool, s string) bool {
	if escaped {
		return unescape(raw) == s
	}
	return string(raw) == s
}

// Masks of the word-at-a-time string scan: the byte 0x01 and 0x80 in every lane.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// skipString moves past a JSON string that starts at the opening quote at pos, validating
// its escapes, and reports whether it had any. Plain text is skipped eight bytes at a time.
func (p *parser) skipString() (escaped bool, err error) {
	p.pos++ // "
	d := p.data
	for {
		for p.pos+8 <= len(d) && stop(binary.LittleEndian.Uint64(d[p.pos:])) == 0 {
			p.pos += 8
		}
		if p.pos >= len(d) {
			return false, p.errorf("unterminated string")
		}
		switch c := d[p.pos]; {
		case c == '"':
			p.pos++
			return escaped, nil
		case c == '\\':
			escaped = true
			if p.pos+1 >= len(d) {
				return false, p.errorf("unterminated string")
			}
			switch d[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(d) || !isHex4(d[p.pos+2:p.pos+6]) {
					return false, p.errorf("invalid \\u escape in a string")
				}
				p.pos += 6
			default:
				return false, p.errorf("invalid escape \\%c in a string", d[p.pos+1])
			}
		case c < 0x20:
			return false, p.errorf("control character in a string")
		default:
			p.pos++
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// unescape decodes the body of a JSON string that was validated by str.
func unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if r2 := utf16.DecodeRune(r, hex4(raw[i+2:i+6])); r2 != utf8.RuneError {
					r = r2
					i += 6
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // " \ /
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return string(out)
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// compact returns raw without whitespace outside strings. raw is valid JSON.
func compact(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			out = append(out, c)
			switch c {
			case '\\':
				i++
				out = append(out, raw[i])
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			inString = true
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}
