package extract

import (
	"encoding/binary"
	"math/bits"
)

// The fast path: skip validates a value that no Go value is built for (a record, or a part of
// the body outside the field path) in one tight loop over the byte slice, without recursion,
// method calls or allocations. It only says whether the value is valid; on any failure the
// caller scans the same value again with the parser, which finds the error and words it, so
// both paths give the same messages.

// maxSkipDepth is the nesting skip tracks in one word; deeper values take the parser's path.
const maxSkipDepth = 64

// isSpace marks the four JSON whitespace bytes.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skip validates the JSON value that starts at d[i] (no whitespace before it) and returns the
// index just after it, and whether there was whitespace inside it. ok is false when the value
// is not valid JSON, or nests deeper than maxSkipDepth.
//
// It is one loop with two places: the start of a value (or of an object key, when key is
// set) and what follows a value. Strings, keys and values alike, are scanned in one place,
// inline, eight bytes at a time; only escapes leave the loop (skipEscape). Whitespace is
// tested in place (`if i < n && isSpace[d[i]]`) rather than through spaces(): on compact
// bodies, where there is none, the call measured about 10% slower.
func skip(d []byte, i int) (end int, spaced, ok bool) {
	var stack uint64 // bit k set: level k is an object; clear: a list
	depth := 0
	key := false
	n := len(d)
	for {
		// A value (or, with key, an object key) starts at d[i].
		if i >= n {
			return 0, false, false
		}
		c := d[i]
		if c == '"' {
			i++
			for {
				for {
					if i+8 > n {
						for i < n && d[i] != '"' && d[i] != '\\' && d[i] >= 0x20 {
							i++ // the last bytes, fewer than eight
						}
						if i >= n {
							return 0, false, false
						}
						break
					}
					if m := stop(binary.LittleEndian.Uint64(d[i:])); m != 0 {
						i += bits.TrailingZeros64(m) >> 3
						break
					}
					i += 8
				}
				if d[i] == '"' {
					i++
					break
				}
				if i = skipEscape(d, i); i < 0 {
					return 0, false, false
				}
			}
			if key {
				key = false
				if i < n && d[i] == ':' {
					i++ // the usual compact "key":
				} else {
					for i < n && isSpace[d[i]] {
						spaced = true
						i++
					}
					if i >= n || d[i] != ':' {
						return 0, false, false
					}
					i++
				}
				if i < n && isSpace[d[i]] {
					spaced = true
					for i < n && isSpace[d[i]] {
						i++
					}
				}
				continue
			}
		} else {
			if key {
				return 0, false, false
			}
			switch c {
			case '{', '[':
				if depth == maxSkipDepth {
					return 0, false, false
				}
				i++
				if i < n && isSpace[d[i]] {
					spaced = true
					for i < n && isSpace[d[i]] {
						i++
					}
				}
				if i >= n {
					return 0, false, false
				}
				if c == '{' {
					if d[i] == '}' {
						i++
						break
					}
					stack |= 1 << depth
					depth++
					key = true
					continue
				}
				if d[i] == ']' {
					i++
					break
				}
				stack &^= 1 << depth
				depth++
				continue
			case 't':
				if n-i < 4 || d[i+1] != 'r' || d[i+2] != 'u' || d[i+3] != 'e' {
					return 0, false, false
				}
				i += 4
			case 'f':
				if n-i < 5 || d[i+1] != 'a' || d[i+2] != 'l' || d[i+3] != 's' || d[i+4] != 'e' {
					return 0, false, false
				}
				i += 5
			case 'n':
				if n-i < 4 || d[i+1] != 'u' || d[i+2] != 'l' || d[i+3] != 'l' {
					return 0, false, false
				}
				i += 4
			default:
				if i = skipNumber(d, i); i < 0 {
					return 0, false, false
				}
			}
		}
		// After a value: close every container that ends here, then find the next value.
		for {
			if depth == 0 {
				return i, spaced, true
			}
			if i >= n {
				return 0, false, false
			}
			c := d[i]
			if isSpace[c] {
				spaced = true
				for i < n && isSpace[d[i]] {
					i++
				}
				if i >= n {
					return 0, false, false
				}
				c = d[i]
			}
			i++
			inObject := stack&(1<<(depth-1)) != 0
			if c == ',' {
				if i < n && isSpace[d[i]] {
					spaced = true
					for i < n && isSpace[d[i]] {
						i++
					}
				}
				key = inObject
				break
			}
			if inObject && c != '}' || !inObject && c != ']' {
				return 0, false, false
			}
			depth--
		}
	}
}

// skipEscape validates the escape or control character at d[i] inside a string and returns
// the index after it, or -1.
func skipEscape(d []byte, i int) int {
	if d[i] < 0x20 || i+1 >= len(d) {
		return -1
	}
	switch d[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
		if i+6 > len(d) || !isHex4(d[i+2:i+6]) {
			return -1
		}
		return i + 6
	}
	return -1
}

// stop returns the word's lanes holding '"', '\\' or a byte below 0x20, as the high bit of
// each lane. The lowest marked lane is exact (a borrow only carries upward), which is all
// the string scans need.
func stop(w uint64) uint64 {
	q := w ^ (lanes01 * '"')
	s := w ^ (lanes01 * '\\')
	return ((q-lanes01)&^q | (s-lanes01)&^s | (w-lanes01*0x20)&^w) & lanes80
}

// skipNumber validates a number at d[i] and returns the index after it, or -1.
func skipNumber(d []byte, i int) int {
	n := len(d)
	if i < n && d[i] == '-' {
		i++
	}
	if i >= n {
		return -1
	}
	switch c := d[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i = digits(d, i+1)
	default:
		return -1
	}
	if i < n && d[i] == '.' {
		i++
		start := i
		i = digits(d, i)
		if i == start {
			return -1
		}
	}
	if i < n && d[i]|0x20 == 'e' {
		i++
		if i < n && (d[i] == '+' || d[i] == '-') {
			i++
		}
		start := i
		for i < n && d[i]-'0' < 10 {
			i++
		}
		if i == start {
			return -1
		}
	}
	return i
}

// digits returns the index of the first byte at or after i that is not a decimal digit,
// looking at eight bytes at a time.
func digits(d []byte, i int) int {
	for i+8 <= len(d) {
		w := binary.LittleEndian.Uint64(d[i:])
		// A lane is a digit when its high nibble is 3 and adding 6 keeps it 3 (0x30-0x39).
		// A carry out of a lane only reaches lanes above the first non-digit.
		bad := (w&lanesF0 ^ lanes01*0x30) | ((w+lanes01*0x06)&lanesF0 ^ lanes01*0x30)
		if bad != 0 {
			return i + bits.TrailingZeros64(bad)>>3
		}
		i += 8
	}
	for i < len(d) && d[i]-'0' < 10 {
		i++
	}
	return i
}

const lanesF0 = 0xF0F0F0F0F0F0F0F0
