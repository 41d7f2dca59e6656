// Package redact replaces secret values with **** in any text that leaves the process.
//
// One Redactor knows every secret of a run: the testing values marked secret, the values that
// feed credential fields, and the tokens obtained at run time. It also knows their encoded
// forms (URL query encoding, path encoding, the base64 of Basic credentials), so a secret is
// caught wherever it travels.
package redact

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Mask replaces every secret.
const Mask = "****"

// minLen is the shortest value treated as a secret: masking one- or two-character values
// would garble every message without protecting anything.
const minLen = 3

// Redactor knows the secrets of one run. The zero value knows none; it is safe for concurrent
// use.
type Redactor struct {
	mu       sync.RWMutex
	secrets  map[string]bool
	replacer *strings.Replacer
}

// Add registers secret values and their encoded forms.
func (r *Redactor) Add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secrets == nil {
		r.secrets = map[string]bool{}
	}
	changed := false
	for _, v := range values {
		for _, form := range forms(v) {
			if len(form) >= minLen && !r.secrets[form] {
				r.secrets[form] = true
				changed = true
			}
		}
	}
	if changed {
		r.replacer = nil
	}
}

// AddBasic registers the base64 form of Basic credentials.
func (r *Redactor) AddBasic(username, password string) {
	r.Add(base64.StdEncoding.EncodeToString([]byte(username + ":" + password)))
}

func forms(v string) []string {
	return []string{
		v,
		url.QueryEscape(v),
		url.PathEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)),
	}
}

// String returns s with every known secret replaced by Mask. Longer secrets are replaced
// first, so a secret that contains another is masked whole.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	rep := r.replacer
	n := len(r.secrets)
	r.mu.RUnlock()
	if n == 0 {
		return s
	}
	if rep == nil {
		r.mu.Lock()
		if r.replacer == nil {
			keys := make([]string, 0, len(r.secrets))
			for k := range r.secrets {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				if len(keys[i]) != len(keys[j]) {
					return len(keys[i]) > len(keys[j])
				}
				return keys[i] < keys[j]
			})
			pairs := make([]string, 0, 2*len(keys))
			for _, k := range keys {
				pairs = append(pairs, k, Mask)
			}
			r.replacer = strings.NewReplacer(pairs...)
		}
		rep = r.replacer
		r.mu.Unlock()
	}
	return rep.Replace(s)
}

// Bytes is String for a byte slice.
func (r *Redactor) Bytes(b []byte) []byte {
	return []byte(r.String(string(b)))
}

// Len is the number of distinct secret forms known.
func (r *Redactor) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.secrets)
}
