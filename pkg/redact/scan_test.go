package redact

import (
	"connector/internal/racetest"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// findRef is find as it was first written: every byte of s asked whether a pattern starts
// there. find must give the same stretches, named the same.
func (ix *index) findRef(s string, named bool) []span {
	var spans []span
	var scratch []uint64
	for i := 0; i < len(s); i++ {
		spans = ix.spanAt(s, i, named, &scratch, spans)
	}
	spans = append(spans, ix.base64RunsRef(s, named)...)
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

// base64RunsRef is base64Runs as it was first written: every run of base64 text decoded.
func (ix *index) base64RunsRef(s string, named bool) []span {
	var out []span
	var buf []byte
	for i := 0; i < len(s); {
		if !b64Byte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && b64Byte(s[j]) {
			j++
		}
		end := j
		for end < len(s) && end-j < 2 && s[end] == '=' {
			end++
		}
		if j-i >= 8 {
			if dec, ok := ix.decodesToSecret(s[i:j], &buf); ok {
				sp := span{start: i, end: end}
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

// sameFind checks that find and findRef agree on text for the secrets.
func sameFind(t *testing.T, secrets []string, text string) {
	t.Helper()
	names := make([]string, len(secrets))
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	ix := build(secrets, names, len(secrets))
	for _, named := range []bool{false, true} {
		got, want := ix.find(text, named), ix.findRef(text, named)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("secrets %q, text %q (named %v):\nfind    %v\nfindRef %v", secrets, text, named, got, want)
		}
	}
}

// scanTexts are the pieces the texts of the tests are made of: each secret in every form
// the redactor knows, around plain JSON.
func scanTexts(secrets []string) []string {
	pieces := []string{`{"id":1,"name":"Customer 1","city":"Springfield","tags":["alpha","beta"]},`, `\n`, `%2`, `&amp;`, `+`, ` `, `ab`}
	for _, s := range secrets {
		pieces = append(pieces, s, jsonPlain(s), url.QueryEscape(s), percentAll(s), pyJSONDumps(s),
			base64.StdEncoding.EncodeToString([]byte("user:"+s)), base64.RawURLEncoding.EncodeToString([]byte("x"+s+"yz")),
			base64.StdEncoding.EncodeToString([]byte(percentAll(s))), base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(s)))))
		if len(s) > 2 {
			pieces = append(pieces, s[:len(s)/2], s[1:])
		}
	}
	return pieces
}

func TestFindLikeEveryByte(t *testing.T) {
	racetest.Sequential(t)
	sets := [][]string{{"bench-token"}, tableSecrets, {"abc", "sp ace"}, {"aaaa"}, {"pw123", "user"}}
	for _, secrets := range sets {
		pieces := scanTexts(secrets)
		for seed := range 200 {
			var b strings.Builder
			x := uint32(seed*2654435761 + 1)
			for b.Len() < scanMin+600 {
				x = x*1103515245 + 12345
				b.WriteString(pieces[int(x>>8)%len(pieces)])
			}
			sameFind(t, secrets, b.String())
		}
	}
}

func FuzzFind(f *testing.F) {
	f.Add("bench-token", `{"a":"b"}`, "bench-token")
	f.Add(`pa"ss\word99`, `\u0026`, `pa\"ss\\word99`)
	f.Add("sp ace", "x", "sp+ace")
	f.Add("pw123", "Basic ", base64.StdEncoding.EncodeToString([]byte("u:pw123")))
	f.Fuzz(func(t *testing.T, secret, filler, planted string) {
		if len(secret) < minLen {
			return
		}
		text := strings.Repeat(filler+planted, scanMin/max(1, len(filler)+len(planted))+2)
		sameFind(t, []string{secret}, text)
		sameFind(t, []string{secret}, filler+planted)
	})
}
