package redact

import (
	"slices"
	"strconv"
	"strings"
)

// Placeholders are the masks of a recording (pkg/har): instead of ****, each secret becomes
// ****NAME****, NAME saying which secret stood there ("api_key", after the testing value;
// "access_token", a token the API issued). The same secret always gets the same placeholder,
// so that a recording can be compared with a later run that has placeholders in place of the
// secrets: a placeholder registered as a secret is named by itself, and so masks to itself.

// derivedName is the placeholder name of a value computed from secrets that spells none of
// them (a signature, a hash).
const derivedName = "derived"

// defaultName is the placeholder name of a secret registered without one.
const defaultName = "secret"

// Placeholder is the mask of a recording for the secret named name.
func Placeholder(name string) string { return Mask + cleanName(name) + Mask }

// PlaceholderName returns the name inside a placeholder, and whether s is one.
func PlaceholderName(s string) (string, bool) {
	if len(s) <= 2*len(Mask) || !strings.HasPrefix(s, Mask) || !strings.HasSuffix(s, Mask) {
		return "", false
	}
	name := s[len(Mask) : len(s)-len(Mask)]
	if name != cleanName(name) {
		return "", false
	}
	return name, true
}

// cleanName keeps letters, digits and . _ - + of name; anything else becomes _.
func cleanName(name string) string {
	if name == "" {
		return defaultName
	}
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '+') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Label proposes name as the placeholder name of value should it become a secret (the
// testing values are labelled with their key paths before the authenticator registers the
// ones it uses). A label never replaces a name already given.
func (r *Redactor) Label(value, name string) {
	if len(value) < minLen {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.labels == nil {
		r.labels = map[string]string{}
	}
	if _, ok := r.labels[value]; !ok {
		r.labels[value] = name
	}
}

// nameLocked gives the new secret v its placeholder name: the name inside v when v is a
// placeholder, else its label, else want; a name another secret took gets a number
// (access_token_2). r.mu is held.
func (r *Redactor) nameLocked(v, want string) {
	if r.names == nil {
		r.names, r.taken = map[string]string{}, map[string]bool{}
	}
	if name, ok := PlaceholderName(v); ok {
		r.names[v] = name
		r.taken[name] = true
		return
	}
	if label, ok := r.labels[v]; ok {
		want = label
	}
	base := cleanName(want)
	name := base
	for n := 2; r.taken[name]; n++ {
		name = base + "_" + strconv.Itoa(n)
	}
	r.names[v] = name
	r.taken[name] = true
}

// Placeholders returns s with every known secret replaced by its placeholder, ****NAME****.
// A stretch that spells several secrets (base64 of user:password) is named after all of
// them (****username+password****); a derived value that spells none is ****derived****.
func (r *Redactor) Placeholders(s string) string {
	ix := r.index()
	if ix == nil || len(s) < minLen {
		return s
	}
	spans := ix.find(s, true)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Mask)
		b.WriteString(ix.spanName(sp.who))
		b.WriteString(Mask)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// spanName names a masked stretch after the secrets it spells, derived values only when it
// spells nothing else.
func (ix *index) spanName(who []int32) string {
	var parts []string
	for _, w := range who {
		if w >= ix.derived {
			continue
		}
		// A stretch may hold several secrets whose names already join others (a
		// placeholder of a placeholder): each part once.
		for part := range strings.SplitSeq(ix.names[w], "+") {
			if !slices.Contains(parts, part) {
				parts = append(parts, part)
			}
		}
	}
	if len(parts) == 0 {
		return derivedName
	}
	return strings.Join(parts, "+")
}

// HeaderPlaceholders returns the value of a header as a recording keeps it: its secrets
// replaced by their placeholders. A credential header (Authorization, Proxy-Authorization,
// Cookie, Set-Cookie) keeps nothing else but its scheme: when anything besides the scheme
// and placeholders would remain, it is masked whole as Header masks it.
func (r *Redactor) HeaderPlaceholders(name, value string) string {
	out := r.Placeholders(value)
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization":
		scheme, rest, _ := strings.Cut(strings.TrimSpace(out), " ")
		if isToken(scheme) && onlyPlaceholders(rest) || onlyPlaceholders(out) {
			return out
		}
		return r.Header(name, value, false)
	case "cookie", "set-cookie":
		if onlyPlaceholders(out) {
			return out
		}
		return Mask
	}
	return out
}

// onlyPlaceholders reports whether s is one or more placeholders, with nothing between
// them but spaces and punctuation.
func onlyPlaceholders(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for s != "" {
		if !strings.HasPrefix(s, Mask) {
			c := s[0]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
				return false
			}
			s = s[1:]
			continue
		}
		end := strings.Index(s[len(Mask):], Mask)
		if end < 0 {
			return false
		}
		s = s[2*len(Mask)+end:]
	}
	return true
}
