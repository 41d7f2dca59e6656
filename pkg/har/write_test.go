package har

import (
	"connector/internal/racetest"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// appendString writes JSON that decodes to the string given (invalid UTF-8 as U+FFFD).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text of some length", `"quoted" \back\slash`, "tab\tnew\nline\r\x00\x1f",
		"é ü 🔑 \u2028", "bad \xff\xfe utf-8", "ascii words first, then é and \xff", "0123456\x7f\x80\"\\\x01\u2029abc\xed\xa0\x80 defgh", strings.Repeat("abcdefg\"", 9), "<html>&amp;</html>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, out, err)
		}
		// strings.Map turns each byte of invalid UTF-8 into U+FFFD, as appendString does.
		if want := strings.Map(func(r rune) rune { return r }, s); back != want {
			t.Fatalf("appendString(%q) decodes to %q", s, back)
		}
		if ref := appendStringRef(nil, s); string(out) != string(ref) {
			t.Fatalf("appendString(%q) = %s, byte by byte %s", s, out, ref)
		}
		if strings.Contains(string(out), `\u003c`) {
			t.Fatalf("HTML escaped: %s", out)
		}
	})
}

// appendStringRef is appendString byte by byte, as it was first written: what the word-wise
// version must give, byte for byte.
func appendStringRef(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// TestAppendStringEveryByte runs every byte value at every lane of a word, alone and next to
// others, through appendString and the byte-by-byte reference.
func TestAppendStringEveryByte(t *testing.T) {
	racetest.Sequential(t)
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 17; pos++ {
			for _, fill := range []string{"a", "\"", "\xc3", "\xe2\x80\xa8", "\x00", "\xff"} {
				s := []byte(strings.Repeat(fill, 20))[:20]
				s[pos] = byte(c)
				if got, want := appendString(nil, string(s)), appendStringRef(nil, string(s)); string(got) != string(want) {
					t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
				}
			}
		}
	}
}

func BenchmarkAppendString(b *testing.B) {
	s := strings.Repeat(`{"id":1,"name":"Customer 1","email":"customer1@example.com","tags":["alpha","beta"]},`, 1000)
	b.SetBytes(int64(len(s)))
	var buf []byte
	for b.Loop() {
		buf = appendString(buf[:0], s)
	}
}

func BenchmarkAppendStringRef(b *testing.B) {
	s := strings.Repeat(`{"id":1,"name":"Customer 1","email":"customer1@example.com","tags":["alpha","beta"]},`, 1000)
	b.SetBytes(int64(len(s)))
	var buf []byte
	for b.Loop() {
		buf = appendStringRef(buf[:0], s)
	}
}
