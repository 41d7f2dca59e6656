// Package redact replaces secret values with **** in any text that leaves the process.
//
// One Redactor knows every secret of a run: the testing values marked secret, the values that
// feed credential fields, the tokens obtained at run time, and the values templates compute
// from any of those (see Derive). A secret is masked wherever the text spells it, raw or
// through one level of the escaping the tool or a server can produce — JSON (`\"`, `\\`,
// `\/`, `\u0026`), Python and Go string literals (`\'`, `\x26`, `\U0001F600`), URL encoding
// (`%26`, `+` for a space, either case of hex), HTML entities (`&amp;`, `&#39;`) — in any mix,
// and through two levels for JSON and URL encoding (a JSON body quoted inside a JSON error).
// Base64, standard or URL alphabet, padded or not, is caught in two ways: a run of base64
// text that decodes to something holding a secret (`Basic base64(user:secret)`, whatever the
// user) is masked whole, and the stretch of base64 that only a secret's bytes determine is
// masked wherever it stands, at each of the three alignments.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Mask replaces every secret.
const Mask = "****"

// minLen is the shortest value treated as a secret: masking one- or two-character values
// would garble every message without protecting anything.
const minLen = 3

// maxDerived is how many values computed from secrets are remembered (see Derive). A
// template that signs each request with the time derives a new value per request; the oldest
// are forgotten, as the requests that carried them have been reported already.
const maxDerived = 256

// Redactor knows the secrets of one run. The zero value knows none; it is safe for concurrent
// use.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // raw values, in the order added
	known   map[string]bool
	derived []string // values computed from secrets, oldest first
	idx     *index   // built on first use after a change
	// names are the placeholder names of the secrets (see Placeholders), taken the names
	// given, and labels the names proposed for values before they are secrets (Label).
	names  map[string]string
	taken  map[string]bool
	labels map[string]string
}

// Add registers secret values. Values shorter than three bytes are ignored.
func (r *Redactor) Add(values ...string) {
	r.AddAs("", values...)
}

// AddAs registers secret values under a placeholder name (see Placeholders): "access_token"
// for a token an API issued, say. A value already known keeps its first name; a value that
// Label named, or that is a placeholder itself, takes that name instead; an empty name is
// "secret". Values shorter than three bytes are ignored.
func (r *Redactor) AddAs(name string, values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if len(v) < minLen || r.known[v] {
			continue
		}
		if r.known == nil {
			r.known = map[string]bool{}
		}
		r.known[v] = true
		r.secrets = append(r.secrets, v)
		r.nameLocked(v, name)
		r.idx = nil
	}
}

// Derive registers the part of real that depends on a secret, given shadow: the same
// computation (a template) run with every secret replaced by a different value (see Shadow).
// Where the two agree, real does not depend on a secret; the stretch where they differ,
// widened to the whole word of letters, digits and base64 punctuation around it, is a secret
// from now on. Identical strings register nothing.
func (r *Redactor) Derive(real, shadow string) {
	if real == shadow || real == "" {
		return
	}
	p := 0
	for p < len(real) && p < len(shadow) && real[p] == shadow[p] {
		p++
	}
	q := 0
	for q < len(real)-p && q < len(shadow)-p && real[len(real)-1-q] == shadow[len(shadow)-1-q] {
		q++
	}
	start, end := p, len(real)-q
	// '+' and '/' belong to the word when the difference has them (base64), not when they
	// only separate it from the rest (a path, a query).
	b64 := strings.ContainsAny(real[start:end], "+/")
	for start > 0 && wordByte(real[start-1], b64) {
		start--
	}
	for end < len(real) && wordByte(real[end], b64) {
		end++
	}
	v := real[start:end]
	if len(v) < minLen {
		v = real
	}
	if len(v) < minLen {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known[v] || slices.Contains(r.derived, v) {
		return
	}
	if len(r.derived) == maxDerived {
		r.derived = append(r.derived[:0], r.derived[1:]...)
	}
	r.derived = append(r.derived, v)
	r.idx = nil
}

// wordByte is a byte that belongs to the same token as its neighbours in a credential:
// letters, digits, '=', '-' and '_', and with b64 also '+' and '/'.
func wordByte(c byte, b64 bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '=' || c == '-' || c == '_' || b64 && (c == '+' || c == '/')
}

// Len is the number of secrets known, derived ones included.
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.secrets) + len(r.derived)
}

// String returns s with every known secret masked.
func (r *Redactor) String(s string) string {
	ix := r.index()
	if ix == nil || len(s) < minLen {
		return s
	}
	spans := ix.find(s, false)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Mask)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// Bytes is String for a byte slice.
func (r *Redactor) Bytes(b []byte) []byte {
	return []byte(r.String(string(b)))
}

// Contains reports whether s spells a known secret in any form String masks.
func (r *Redactor) Contains(s string) bool {
	ix := r.index()
	return ix != nil && len(ix.find(s, false)) > 0
}

// Header returns the value of a header as it may be printed. The credential headers
// (Authorization, Proxy-Authorization, Cookie, Set-Cookie) are masked whatever fills them,
// keeping only an Authorization scheme ("Bearer ****"); so is a header that sensitive says an
// authenticator filled, and one whose value holds a secret.
func (r *Redactor) Header(name, value string, sensitive bool) string {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization":
		if scheme, rest, ok := strings.Cut(strings.TrimSpace(value), " "); ok && rest != "" && isToken(scheme) {
			return scheme + " " + Mask
		}
		return Mask
	case "cookie", "set-cookie":
		return Mask
	}
	if sensitive && value != "" || r.Contains(value) {
		return Mask
	}
	return value
}

// isToken reports an HTTP authentication scheme name (Basic, Bearer, Token, Digest, …).
func isToken(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Shadow returns a copy of v (the testing values, or any value built from them) in which
// every string that is a known secret is replaced by a different string of the same shape:
// letters rotated by 13, digits by 5, anything else turned into 'x'. Running a template with
// Shadow's copy and comparing with the real result tells what the result owes to secrets
// (see Derive). Values that hold no secret are shared, not copied; changed reports whether
// anything was replaced.
func (r *Redactor) Shadow(v any) (out any, changed bool) {
	if r == nil {
		return v, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.known) == 0 {
		return v, false
	}
	return shadow(v, r.known)
}

func shadow(v any, known map[string]bool) (any, bool) {
	switch x := v.(type) {
	case string:
		if known[x] {
			return perturb(x), true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if s, ok := shadow(e, known); ok {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = s
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if s, ok := shadow(e, known); ok {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = s
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// Perturb is the stand-in Shadow puts in place of a secret.
func Perturb(s string) string { return perturb(s) }

func perturb(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+5)%10
		default:
			b[i] = 'x'
		}
	}
	return string(b)
}

// index is what String searches for, built once per change of the secrets.
type index struct {
	// patterns are spelled with at most one more level of escaping in the text (see match):
	// each secret raw, JSON-escaped and URL-encoded, and the base64 stretches its bytes alone
	// determine.
	patterns []string
	// owner is, for each pattern, the secret it spells: an index into names.
	owner []int32
	// names are the placeholder names of the secrets, derived ones last; derived is where
	// those begin.
	names   []string
	derived int32
	// first lists, for each byte, the patterns a match can start with at that byte; starts
	// says whether there is one.
	first  [256][]int32
	starts [256]bool
	// escapes are the bytes that start an escape sequence which can stand for a byte of a
	// pattern ('+' only when a pattern has a space), and maxLen the longest pattern.
	escapes []byte
	maxLen  int
	// pairs marks, by b0<<8|b1, the two bytes a spelling can start with: an escape byte and
	// anything, a pattern's first byte and its second or an escape byte (see matchAt).
	pairs [256 * 256 / 64]uint64
}

func (r *Redactor) index() *index {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	ix, n := r.idx, len(r.secrets)+len(r.derived)
	r.mu.RUnlock()
	if ix != nil || n == 0 {
		return ix
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.idx == nil {
		names := make([]string, 0, len(r.secrets)+len(r.derived))
		for _, s := range r.secrets {
			names = append(names, r.names[s])
		}
		for range r.derived {
			names = append(names, derivedName)
		}
		r.idx = build(append(slices.Clone(r.secrets), r.derived...), names, len(r.secrets))
	}
	return r.idx
}

// build indexes secrets, whose placeholder names are names; those from nDerived on are
// derived values.
func build(secrets, names []string, nDerived int) *index {
	ix := &index{names: names, derived: int32(nDerived)}
	seen := map[string]bool{}
	var who int32
	add := func(p string) {
		if len(p) >= minLen && !seen[p] {
			seen[p] = true
			ix.patterns = append(ix.patterns, p)
			ix.owner = append(ix.owner, who)
		}
	}
	for i, s := range secrets {
		who = int32(i)
		add(s)
		add(jsonEscape(s))
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		for _, core := range base64Cores(s) {
			add(core)
		}
	}
	// A pattern can start where the text has its first byte, or an escape of it (see
	// candidates).
	for i, p := range ix.patterns {
		ix.first[p[0]] = append(ix.first[p[0]], int32(i))
	}
	for c, list := range ix.first {
		ix.starts[c] = len(list) > 0 || escapeStart[c]
	}
	for b0 := range 256 {
		switch {
		case escapeStart[b0]:
			row := ix.pairs[b0<<8>>6:][:4]
			for w := range row {
				row[w] = ^uint64(0)
			}
		case len(ix.first[b0]) > 0:
			for b1, esc := range escapeStart {
				if esc {
					ix.pairs[(b0<<8|b1)>>6] |= 1 << (b1 & 63)
				}
			}
		}
	}
	for _, p := range ix.patterns {
		k := int(p[0])<<8 | int(p[1])
		ix.pairs[k>>6] |= 1 << (k & 63)
	}
	ix.escapes = []byte{'\\', '%', '&'}
	for _, p := range ix.patterns {
		ix.maxLen = max(ix.maxLen, len(p))
		if strings.IndexByte(p, ' ') >= 0 && !slices.Contains(ix.escapes, '+') {
			ix.escapes = append(ix.escapes, '+')
		}
	}
	return ix
}

// candidates are the patterns a spelling can start with at text[i]: those whose first byte
// is text[i], and where an escape sequence starts, those whose first byte is what it stands
// for (\u0041 for A).
func (ix *index) candidates(text string, i int) (c [3][]int32) {
	c[0] = ix.first[text[i]]
	if escapeStart[text[i]] {
		var buf [2]decoded
		for k, d := range unescape(text, i, buf[:0]) {
			if d.b[0] != text[i] {
				c[1+k] = ix.first[d.b[0]]
			}
		}
	}
	return c
}

// jsonEscape is the inside of s as a JSON string, without HTML escaping.
func jsonEscape(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return s
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// base64Cores are the stretches of base64 text that depend on the bytes of s alone, for each
// of the three positions s can start at relative to a base64 group, in both alphabets. Any
// base64 of a text that contains s contains one of them.
func base64Cores(s string) []string {
	if len(s) < 4 {
		return nil
	}
	var out []string
	for off := range 3 {
		plain := make([]byte, off+len(s))
		copy(plain[off:], s)
		from := (8*off + 5) / 6      // first character whose bits all come from s
		to := 8 * (off + len(s)) / 6 // one past the last such character
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			text := enc.EncodeToString(plain)
			if to-from >= 4 && to <= len(text) {
				out = append(out, text[from:to])
			}
		}
	}
	return out
}

// span is a stretch of text to mask. who lists the secrets it spells (indexes into
// index.names), when the caller asked for them.
type span struct {
	start, end int
	who        []int32
}

// find returns the stretches of s that spell a secret, sorted and merged; with named, each
// says which secrets it spells.
func (ix *index) find(s string, named bool) []span {
	spans := ix.plainSpans(s, named, nil)
	spans = append(spans, ix.base64Runs(s, named)...)
	if len(spans) == 0 {
		return nil
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.start <= last.end {
			last.end = max(last.end, sp.end)
			last.who = appendNew(last.who, sp.who...)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// spanAt appends the longest spelling of a pattern that starts at s[i], if there is one.
func (ix *index) spanAt(s string, i int, named bool, scratch *[]uint64, spans []span) []span {
	if !ix.starts[s[i]] {
		return spans
	}
	best, bestP := -1, int32(-1)
	for _, list := range ix.candidates(s, i) {
		for _, pi := range list {
			if e := matchAt(s, i, ix.patterns[pi], scratch); e > best {
				best, bestP = e, pi
			}
		}
	}
	if best > i {
		sp := span{start: i, end: best}
		if named {
			sp.who = []int32{ix.owner[bestP]}
		}
		spans = append(spans, sp)
	}
	return spans
}

// scanMin is the length from which plainSpans looks only where a spelling can start rather
// than at every byte.
const scanMin = 512

// plainSpans appends the spellings of patterns in s (base64 runs aside), in the order of
// their starts, as spanAt finds them at every byte of s. It only asks spanAt where the
// answer can be yes: where a pattern stands literally, and up to a pattern's length before
// a byte that starts an escape sequence (matchAt reads s as it is up to such a byte). Both
// are found with strings.IndexByte: the escape bytes, and for each pattern its byte that is
// rarest in the first stretch of s.
func (ix *index) plainSpans(s string, named bool, spans []span) []span {
	var scratch []uint64
	if len(s) < scanMin {
		for i := range len(s) {
			spans = ix.spanAt(s, i, named, &scratch, spans)
		}
		return spans
	}
	var freq [256]int32
	for _, c := range []byte(s[:min(len(s), 4096)]) {
		freq[c]++
	}
	// where are the stretches of s that spanAt reads, [lo, hi] each.
	type stretch struct{ lo, hi int }
	var where []stretch
	// Patterns by the byte they are looked for at, with its offset in them.
	var anchors [256][]anchor
	var bytesUsed []byte
	for pi, p := range ix.patterns {
		o := 0
		for k := 1; k < len(p); k++ {
			if freq[p[k]] < freq[p[o]] {
				o = k
			}
		}
		if anchors[p[o]] == nil {
			bytesUsed = append(bytesUsed, p[o])
		}
		anchors[p[o]] = append(anchors[p[o]], anchor{int32(pi), int32(o)})
	}
	for _, c := range bytesUsed {
		for j := 0; ; j++ {
			k := strings.IndexByte(s[j:], c)
			if k < 0 {
				break
			}
			j += k
			for _, a := range anchors[c] {
				p := ix.patterns[a.pattern]
				if i := j - int(a.offset); i >= 0 && strings.HasPrefix(s[i:], p) {
					where = append(where, stretch{i, i})
				}
			}
		}
	}
	for _, c := range ix.escapes {
		for j := 0; ; j++ {
			k := strings.IndexByte(s[j:], c)
			if k < 0 {
				break
			}
			j += k
			where = append(where, stretch{max(0, j-ix.maxLen+1), j})
		}
	}
	slices.SortFunc(where, func(a, b stretch) int { return a.lo - b.lo })
	next := 0 // the first byte not read yet
	for _, w := range where {
		for i := max(w.lo, next); i <= w.hi; i++ {
			spans = ix.spanAt(s, i, named, &scratch, spans)
		}
		next = max(next, w.hi+1)
	}
	return spans
}

// anchor is a pattern looked for at one of its bytes, offset bytes into it.
type anchor struct{ pattern, offset int32 }

// appendNew appends the elements of add that list lacks.
func appendNew(list []int32, add ...int32) []int32 {
	for _, w := range add {
		if !slices.Contains(list, w) {
			list = append(list, w)
		}
	}
	return list
}

// base64Runs finds runs of base64 text (at least 8 characters) that decode, in either
// alphabet, to bytes spelling a secret. As only runs of 8 or more count, it looks at every
// 8th byte first: where that is no base64 character, no run of 8 stands before it.
func (ix *index) base64Runs(s string, named bool) []span {
	var out []span
	var buf []byte
	// No run of 8 or more begins before i and goes past it.
	for i := 0; i+8 <= len(s); {
		if !b64Byte(s[i+7]) {
			i += 8
			continue
		}
		start := i + 7
		for start > i && b64Byte(s[start-1]) {
			start--
		}
		j := i + 8
		for j < len(s) && b64Byte(s[j]) {
			j++
		}
		if j-start < 8 {
			i = j + 1
			continue
		}
		end := j
		for end < len(s) && end-j < 2 && s[end] == '=' {
			end++
		}
		if ix.startsIn(s[start:j]) {
			if dec, ok := ix.decodesToSecret(s[start:j], &buf); ok {
				sp := span{start: start, end: end}
				if named {
					sp.who = ix.spelledBy(dec)
				}
				out = append(out, sp)
			}
		}
		i = end
	}
	return out
}

func b64Byte(c byte) bool { return b64Values[c] >= 0 }

// startsIn reports whether run decodes to bytes of which two in a row can start a spelling
// (see index.pairs), or whose last can (index.starts): only then can the text spell a
// secret. It decodes as decodeBase64 does, without keeping the bytes, so that the runs of a
// page that hold nothing (nearly all) are each read once.
func (ix *index) startsIn(run string) bool {
	n := len(run) - len(run)%4
	prev := -1 // the byte before, if any
	for i := 0; i < n; i += 4 {
		q := run[i : i+4]
		v := uint32(b64Values[q[0]])<<18 | uint32(b64Values[q[1]])<<12 | uint32(b64Values[q[2]])<<6 | uint32(b64Values[q[3]])
		b0, b1, b2 := int(v>>16&0xff), int(v>>8&0xff), int(v&0xff)
		// Most bytes start no spelling at all: the pairs are looked at when one does.
		if (prev >= 0 && ix.starts[prev] || ix.starts[b0] || ix.starts[b1]) &&
			(prev >= 0 && ix.pairAt(prev, b0) || ix.pairAt(b0, b1) || ix.pairAt(b1, b2)) {
			return true
		}
		prev = b2
	}
	var buf [3]byte
	for _, c := range decodeBase64(run[n:], buf[:0]) {
		if prev >= 0 && ix.pairAt(prev, int(c)) {
			return true
		}
		prev = int(c)
	}
	return prev >= 0 && ix.starts[prev]
}

// pairAt reports whether a spelling can start with the bytes b0, b1.
func (ix *index) pairAt(b0, b1 int) bool {
	k := b0<<8 | b1
	return ix.pairs[k>>6]>>(k&63)&1 != 0
}

// decodesToSecret reports whether run decodes to text that spells a secret, and returns
// that text. buf is memory it may reuse.
func (ix *index) decodesToSecret(run string, buf *[]byte) (string, bool) {
	dec := decodeBase64(run, (*buf)[:0])
	*buf = dec
	if len(dec) == 0 {
		return "", false
	}
	// The bytes are only read while buf is not written: a view of them spares a copy per
	// run of base64 text, which is most words of a page.
	if ix.spells(unsafe.String(unsafe.SliceData(dec), len(dec))) {
		return string(dec), true
	}
	return "", false
}

// b64Values are the 6-bit values of the base64 characters of both alphabets ('+' and '-'
// are 62, '/' and '_' 63); -1 for anything else.
var b64Values = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for i := 0; i < len(std); i++ {
		t[std[i]] = int8(i)
	}
	t['+'], t['-'], t['/'], t['_'] = 62, 62, 63, 63
	return t
}()

// decodeBase64 decodes a run of base64 characters (either alphabet, no padding) into dst;
// trailing bits that do not make a byte are dropped, as decoders do.
func decodeBase64(run string, dst []byte) []byte {
	n := len(run) - len(run)%4
	i := 0
	for ; i < n; i += 4 {
		v := uint32(b64Values[run[i]])<<18 | uint32(b64Values[run[i+1]])<<12 | uint32(b64Values[run[i+2]])<<6 | uint32(b64Values[run[i+3]])
		dst = append(dst, byte(v>>16), byte(v>>8), byte(v))
	}
	switch len(run) - i {
	case 2:
		v := uint32(b64Values[run[i]])<<18 | uint32(b64Values[run[i+1]])<<12
		dst = append(dst, byte(v>>16))
	case 3:
		v := uint32(b64Values[run[i]])<<18 | uint32(b64Values[run[i+1]])<<12 | uint32(b64Values[run[i+2]])<<6
		dst = append(dst, byte(v>>16), byte(v>>8))
	}
	return dst
}

// spelledBy lists the secrets text spells (base64 aside), in the order they appear.
func (ix *index) spelledBy(text string) []int32 {
	var who []int32
	var scratch []uint64
	for i := 0; i < len(text); i++ {
		if !ix.starts[text[i]] {
			continue
		}
		best, bestP := -1, int32(-1)
		for _, list := range ix.candidates(text, i) {
			for _, pi := range list {
				if e := matchAt(text, i, ix.patterns[pi], &scratch); e > best {
					best, bestP = e, pi
				}
			}
		}
		if best > i {
			who = appendNew(who, ix.owner[bestP])
			i = best - 1
		}
	}
	return who
}

// spells reports whether text spells a secret anywhere (base64 aside).
func (ix *index) spells(text string) bool {
	var scratch []uint64
	for i := 0; i < len(text); i++ {
		if !ix.starts[text[i]] {
			continue
		}
		for _, list := range ix.candidates(text, i) {
			for _, pi := range list {
				if matchAt(text, i, ix.patterns[pi], &scratch) > i {
					return true
				}
			}
		}
	}
	return false
}

// escapeStart marks the bytes an escape sequence starts with.
var escapeStart = [256]bool{'\\': true, '%': true, '&': true, '+': true}

// matchAt is match, first reading the text as it is: up to the first byte that could start
// an escape sequence, p can only be spelled byte for byte, so a text that differs from p
// before any such byte does not spell it (the common case, settled without the search).
func matchAt(text string, i int, p string, scratch *[]uint64) int {
	for k := 0; k < len(p); k++ {
		if i+k >= len(text) {
			return -1
		}
		c := text[i+k]
		if escapeStart[c] {
			return match(text, i, p, scratch)
		}
		if c != p[k] {
			return -1
		}
	}
	return i + len(p)
}

// match returns the end of the longest stretch of text from i that spells p, reading each
// piece of the text either as itself or as one escape sequence of p's next bytes; -1 if none.
// Both readings apply only where p has a byte that also starts an escape (\\ % & +); the
// search then remembers the states it has been in, so that it stays polynomial on hostile
// text.
// scratch, when not nil, is memory the search may reuse.
func match(text string, i int, p string, scratch *[]uint64) int {
	if strings.HasPrefix(text[i:], p) {
		return i + len(p)
	}
	m := matcher{text: text, p: p, start: i, scratch: scratch}
	return m.from(i, 0)
}

type matcher struct {
	text, p string
	start   int
	// seen marks the states (text offset from start, position in p) already searched; nil
	// until the search first branches. It is taken from scratch.
	seen    []uint64
	scratch *[]uint64
}

// maxEscape is the longest escape sequence unescape reads (\uD83D\uDE00).
const maxEscape = 12

func (m *matcher) from(ti, pj int) int {
	for {
		if pj == len(m.p) {
			return ti
		}
		if ti >= len(m.text) {
			return -1
		}
		lit := m.text[ti] == m.p[pj]
		var buf [2]decoded
		var alts []decoded
		for _, d := range unescape(m.text, ti, buf[:0]) {
			if d.prefixOf(m.p[pj:]) {
				alts = append(alts, d)
			}
		}
		switch {
		case !lit && len(alts) == 0:
			return -1
		case lit && len(alts) == 0:
			ti, pj = ti+1, pj+1
			continue
		case !lit && len(alts) == 1:
			ti, pj = ti+alts[0].width, pj+alts[0].n
			continue
		}
		// Several readings: search each, once per state.
		if m.visited(ti, pj) {
			return -1
		}
		best := -1
		if lit {
			best = m.from(ti+1, pj+1)
		}
		for _, d := range alts {
			best = max(best, m.from(ti+d.width, pj+d.n))
		}
		return best
	}
}

// visited marks the state (ti, pj) and reports whether it was marked before.
func (m *matcher) visited(ti, pj int) bool {
	if m.seen == nil {
		window := min(len(m.text)-m.start, maxEscape*len(m.p)) + 1
		n := (window*(len(m.p)+1) + 63) / 64
		var buf []uint64
		if m.scratch != nil {
			buf = *m.scratch
		}
		if cap(buf) < n {
			buf = make([]uint64, n)
			if m.scratch != nil {
				*m.scratch = buf
			}
		}
		m.seen = buf[:n]
		clear(m.seen)
	}
	k := (ti-m.start)*(len(m.p)+1) + pj
	w, bit := k/64, uint64(1)<<(k%64)
	if w >= len(m.seen) {
		return true
	}
	if m.seen[w]&bit != 0 {
		return true
	}
	m.seen[w] |= bit
	return false
}

// decoded is what an escape sequence in the text stands for (n bytes of b), and how long the
// sequence is.
type decoded struct {
	b     [utf8.UTFMax]byte
	n     int
	width int
}

func decByte(c byte, width int) decoded { return decoded{b: [utf8.UTFMax]byte{c}, n: 1, width: width} }

func decRune(r rune, width int) decoded {
	d := decoded{width: width}
	d.n = utf8.EncodeRune(d.b[:], r)
	return d
}

// prefixOf reports whether d's bytes start p.
func (d *decoded) prefixOf(p string) bool {
	return len(p) >= d.n && p[:d.n] == string(d.b[:d.n])
}

// unescape reads the escape sequence at text[i], if there is one, and appends its readings
// (a \xNN may be a byte or a code point).
func unescape(text string, i int, out []decoded) []decoded {
	rest := text[i:]
	switch rest[0] {
	case '+':
		return append(out, decByte(' ', 1))
	case '%':
		if len(rest) >= 3 {
			if b, ok := hexByte(rest[1:3]); ok {
				return append(out, decByte(b, 3))
			}
		}
	case '&':
		return entity(rest, out)
	case '\\':
		if len(rest) < 2 {
			return out
		}
		switch c := rest[1]; c {
		case '"', '\\', '/', '\'', '`', '?':
			return append(out, decByte(c, 2))
		case 'n':
			return append(out, decByte('\n', 2))
		case 't':
			return append(out, decByte('\t', 2))
		case 'r':
			return append(out, decByte('\r', 2))
		case 'b':
			return append(out, decByte('\b', 2))
		case 'f':
			return append(out, decByte('\f', 2))
		case 'a':
			return append(out, decByte('\a', 2))
		case 'v':
			return append(out, decByte('\v', 2))
		case '0':
			return append(out, decByte(0, 2))
		case 'x':
			if len(rest) >= 4 {
				if b, ok := hexByte(rest[2:4]); ok {
					out = append(out, decByte(b, 4))
					if b >= 0x80 {
						out = append(out, decRune(rune(b), 4))
					}
				}
			}
		case 'u':
			if r, n, ok := unicodeEscape(rest); ok {
				return append(out, decRune(r, n))
			}
		case 'U':
			if len(rest) >= 10 {
				if r, ok := hexRune(rest[2:10]); ok {
					return append(out, decRune(r, 10))
				}
			}
		}
	}
	return out
}

// unicodeEscape reads \uXXXX, and a surrogate pair \uD83D\uDE00 as one code point.
func unicodeEscape(s string) (rune, int, bool) {
	if len(s) < 6 {
		return 0, 0, false
	}
	r, ok := hexRune(s[2:6])
	if !ok {
		return 0, 0, false
	}
	if r >= 0xD800 && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if lo, ok := hexRune(s[8:12]); ok && lo >= 0xDC00 && lo < 0xE000 {
			return (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000, 12, true
		}
	}
	return r, 6, true
}

func hexRune(s string) (rune, bool) {
	var r rune
	for i := 0; i < len(s); i++ {
		v, ok := hexVal(s[i])
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, r <= 0x10FFFF
}

func hexByte(s string) (byte, bool) {
	hi, ok1 := hexVal(s[0])
	lo, ok2 := hexVal(s[1])
	return hi<<4 | lo, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

var entities = map[string]byte{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\''}

// entity reads an HTML character reference: &amp; &#39; &#x27;.
func entity(s string, out []decoded) []decoded {
	// The longest reference read is &#x10FFFF; (10 bytes to its ';'): looking further would
	// scan the rest of the text at every '&' of it.
	end := strings.IndexByte(s[:min(len(s), 11)], ';')
	if end < 2 || end > 10 {
		return out
	}
	name := s[1:end]
	if v, ok := entities[name]; ok {
		return append(out, decByte(v, end+1))
	}
	if name[0] != '#' || len(name) < 2 {
		return out
	}
	var r rune
	if name[1] == 'x' || name[1] == 'X' {
		v, ok := hexRune(name[2:])
		if !ok || len(name) == 2 {
			return out
		}
		r = v
	} else {
		for _, c := range name[1:] {
			if c < '0' || c > '9' {
				return out
			}
			r = r*10 + (c - '0')
		}
	}
	if r > 0x10FFFF {
		return out
	}
	return append(out, decRune(r, end+1))
}
