package extract

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Counting. The read loop can send the next request of an offset or page-number pagination
// as soon as it knows how many records a page holds, before the page is validated (see
// run's overlap). Count finds that number by the structure of the body alone: it follows
// quotes, escapes and brackets, and checks nothing else, so it is several times faster than
// Parse. On valid JSON it finds exactly the records Parse finds, or says it cannot tell; on
// anything else its answer means nothing, which is fine, since Parse decides and the read
// compares the two.
//
// A key written twice keeps its last value in Parse, as in Python's json.loads. Count finds
// the first value of each key of the path, so after the list it reads on through every
// object of the path, and says it cannot tell when one of them holds its key again (or a
// key spelled with escapes, which it does not decode). The members after the records are
// usually few and small, so this costs little.
//
// The walk counts the nesting as Parse does: a bracket that opens a level deeper than
// MaxDepth makes Count say it cannot tell, and Parse then refuses the body.

// Count returns the number of elements of the list at path (keys only, no wildcard) in
// body, or ok false when it cannot tell: the path does not lead to a list, an object of the
// path holds its key again after it, or the body is cut short or malformed in a way the
// walk notices. It allocates nothing.
func Count(body []byte, path []string) (n int, ok bool) {
	d := body
	if len(path) >= MaxDepth {
		return 0, false // the list itself would be too deep
	}
	i := skipWS(d, 0)
	for level, key := range path {
		if key == Wildcard || i >= len(d) || d[i] != '{' {
			return 0, false
		}
		// The object is at nesting level+1; its values may open MaxDepth-(level+1) more.
		if i = member(d, skipWS(d, i+1), key, MaxDepth-level-1); i < 0 {
			return 0, false
		}
	}
	if i >= len(d) || d[i] != '[' {
		return 0, false
	}
	// The list is at nesting len(path)+1; its elements may open the rest.
	n, end, ok := countList(d, skipWS(d, i+1), MaxDepth-len(path)-1)
	if !ok {
		return 0, false
	}
	// From the innermost object of the path out, the members after the one followed.
	for level := len(path) - 1; level >= 0; level-- {
		if end = after(d, end, path[level], MaxDepth-level-1); end < 0 {
			return 0, false
		}
	}
	return n, true
}

// countList counts the elements of the list whose first element (or closing bracket)
// starts at d[i], and returns the index after its closing bracket. The elements may nest
// room levels.
func countList(d []byte, i int, room int) (n, end int, ok bool) {
	if i < len(d) && d[i] == ']' {
		return 0, i + 1, true
	}
	if useBlocks {
		return countBlocks(d, i, room)
	}
	return countBytes(d, i, room)
}

// after walks the rest of an object of the path from d[i], just after the value of a
// member, and returns the index after the object's closing brace; -1 when a later member
// is key again (Parse keeps that one), when a later key has escapes, or when the walk
// fails. The values passed over may nest room levels.
func after(d []byte, i int, key string, room int) int {
	for {
		if i = skipWS(d, i); i >= len(d) {
			return -1
		}
		if d[i] == '}' {
			return i + 1
		}
		if d[i] != ',' {
			return -1
		}
		if i = skipWS(d, i+1); i >= len(d) || d[i] != '"' {
			return -1
		}
		start := i + 1
		if i = pastString(d, start); i < 0 {
			return -1
		}
		name := d[start : i-1]
		if string(name) == key || bytes.IndexByte(name, '\\') >= 0 {
			return -1
		}
		if i = skipWS(d, i); i >= len(d) || d[i] != ':' {
			return -1
		}
		if i = skipValue(d, skipWS(d, i+1), room); i < 0 {
			return -1
		}
	}
}

// skipValue is pastValue, 64 bytes at a time for an object or a list when this machine
// can.
func skipValue(d []byte, i int, room int) int {
	if useBlocks && i < len(d) && (d[i] == '{' || d[i] == '[') {
		// The value's own bracket is one of the room levels.
		if _, end, ok := countBlocks(d, skipWS(d, i+1), room-1); ok {
			return end
		}
		return -1
	}
	return pastValue(d, i, room)
}

// member finds key among the members of the object whose first key starts at d[i], and
// returns the index of its value (-1: not there, or the walk failed). A key spelled with
// escapes is not recognized: Count then says it cannot tell. The values passed over may
// nest room levels.
func member(d []byte, i int, key string, room int) int {
	for i < len(d) && d[i] == '"' {
		start := i + 1
		if i = pastString(d, start); i < 0 {
			return -1
		}
		name := d[start : i-1]
		if i = skipWS(d, i); i >= len(d) || d[i] != ':' {
			return -1
		}
		i = skipWS(d, i+1)
		if string(name) == key {
			return i
		}
		if i = pastValue(d, i, room); i < 0 {
			return -1
		}
		if i = skipWS(d, i); i >= len(d) || d[i] != ',' {
			return -1
		}
		i = skipWS(d, i+1)
	}
	return -1
}

func skipWS(d []byte, i int) int {
	for i < len(d) && isSpace[d[i]] {
		i++
	}
	return i
}

// pastString returns the index after the closing quote of the string whose body starts at
// d[i], or -1 when it is not closed.
func pastString(d []byte, i int) int {
	for {
		for i+8 <= len(d) {
			w := binary.LittleEndian.Uint64(d[i:])
			q := w ^ (lanes01 * '"')
			b := w ^ (lanes01 * '\\')
			if m := ((q-lanes01)&^q | (b-lanes01)&^b) & lanes80; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(d) && d[i] != '"' && d[i] != '\\' {
			i++
		}
		if i >= len(d) {
			return -1
		}
		if d[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: the next byte cannot end the string
	}
}

// pastValue returns the index after the value that starts at d[i], by its structure, or -1
// (also when it nests more than room levels).
func pastValue(d []byte, i int, room int) int {
	depth := 0
	for i < len(d) {
		switch c := d[i]; c {
		case '"':
			if i = pastString(d, i+1); i < 0 {
				return -1
			}
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			if depth++; depth > room {
				return -1
			}
		case '}', ']':
			depth--
			if depth <= 0 {
				return i + 1
			}
		default:
			if depth == 0 { // a number or a literal: up to the next delimiter
				for i < len(d) && !isSpace[d[i]] && d[i] != ',' && d[i] != '}' && d[i] != ']' {
					i++
				}
				return i
			}
		}
		i++
	}
	return -1
}

// countBytes counts the elements of a non-empty list whose first element starts at d[i],
// a byte at a time: the elements are one more than the commas outside strings and outside
// nested values, up to the list's closing bracket. The elements may nest room levels.
func countBytes(d []byte, i int, room int) (n, end int, ok bool) {
	commas, depth := 0, 0
	for i < len(d) {
		switch d[i] {
		case '"':
			if i = pastString(d, i+1); i < 0 {
				return 0, 0, false
			}
			continue
		case '{', '[':
			if depth++; depth > room {
				return 0, 0, false
			}
		case '}', ']':
			if depth == 0 {
				return commas + 1, i + 1, true
			}
			depth--
		case ',':
			if depth == 0 {
				commas++
			}
		}
		i++
	}
	return 0, 0, false
}

// countBlocks is countBytes 64 bytes at a time: classify (SIMD) marks the quotes,
// backslashes, brackets and commas of each block as bits, and the rest is arithmetic on
// those words. Quotes preceded by an odd run of backslashes are escaped; the bytes inside
// strings are those between an unescaped quote and the next one (a running XOR of the quote
// bits); only the brackets outside strings are visited one by one, and the commas between
// two elements are counted a word at a time. The elements may nest room levels. It returns
// the index after the list's closing bracket too.
func countBlocks(d []byte, i int, room int) (n, end int, ok bool) {
	var (
		masks    [classifyBlocks * 4]uint64
		tail     [64]byte
		commas   int
		depth    int
		inString uint64 // all ones when the previous block ended inside a string
		escape   uint64 // 1 when the previous block ended with an escaping backslash
	)
	for i < len(d) {
		src := d[i:]
		if len(src) < 64 {
			// The last bytes: padded with spaces, which mark nothing.
			for k := copy(tail[:], src); k < len(tail); k++ {
				tail[k] = ' '
			}
			src = tail[:]
		}
		blocks := min(len(src)/64, classifyBlocks)
		classify(src[:blocks*64], masks[:blocks*4])
		for b := range blocks {
			m := masks[b*4 : b*4+4]
			quotes, backslashes, brackets, commaBits := m[0], m[1], m[2], m[3]
			var escaped uint64
			if backslashes|escape != 0 {
				escaped, escape = escapedBits(backslashes, escape)
			}
			inside := prefixXOR(quotes&^escaped) ^ inString
			inString = uint64(int64(inside) >> 63)
			brackets &^= inside
			commaBits &^= inside
			from := 0 // the first bit of this block not yet counted at depth 0
			for brackets != 0 {
				at := bits.TrailingZeros64(brackets)
				brackets &= brackets - 1
				c := src[b*64+at]
				if c == '{' || c == '[' {
					if depth == 0 {
						commas += bits.OnesCount64(commaBits & bitRange(from, at))
					}
					if depth++; depth > room {
						return 0, 0, false
					}
					continue
				}
				if depth == 0 {
					// The list's closing bracket.
					return commas + bits.OnesCount64(commaBits&bitRange(from, at)) + 1, i + b*64 + at + 1, true
				}
				if depth--; depth == 0 {
					from = at + 1
				}
			}
			if depth == 0 {
				commas += bits.OnesCount64(commaBits & bitRange(from, 64))
			}
		}
		i += blocks * 64
	}
	return 0, 0, false
}

// bitRange is the bits [from, to) of a word, 0 ≤ from ≤ to ≤ 64.
func bitRange(from, to int) uint64 {
	return (1<<uint(to) - 1) &^ (1<<uint(from) - 1)
}

// prefixXOR sets bit k to the XOR of bits 0..k of x: with x the unescaped quotes, the
// bits from an opening quote up to (not including) its closing one.
func prefixXOR(x uint64) uint64 {
	x ^= x << 1
	x ^= x << 2
	x ^= x << 4
	x ^= x << 8
	x ^= x << 16
	x ^= x << 32
	return x
}

const (
	evenBits = 0x5555555555555555
	oddBits  = 0xAAAAAAAAAAAAAAAA
)

// escapedBits marks the bytes that follow an odd run of backslashes. carry is 1 when the
// previous block ended with such a run (its first byte is escaped); the carry returned says
// the same of this block.
//
// A run of backslashes from bit s to bit e-1 escapes the byte at e exactly when its length
// e-s is odd, that is when s and e differ in parity. Adding the run's first bit to the run
// carries through it and sets bit e, so runs are split by the parity of their start, each
// group is added to the backslash bits, and the ends of the wrong parity are kept.
func escapedBits(backslashes, carry uint64) (escaped, carryOut uint64) {
	b := backslashes &^ carry // an escaped backslash escapes nothing
	starts := b &^ (b << 1)
	evenEnds := (b + starts&evenBits) &^ b
	oddSum, out := bits.Add64(b, starts&oddBits, 0)
	oddEnds := oddSum &^ b
	return evenEnds&oddBits | oddEnds&evenBits | carry, out
}
