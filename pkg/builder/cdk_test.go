package builder

import (
	"bufio"
	"context"
	"encoding/json"
	"math/big"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"connector/internal/racetest"
	"connector/pkg/demoapi"
	"connector/pkg/jsondiff"
	"connector/pkg/redact"
	"connector/pkg/session"
	"connector/pkg/values"
)

// The test reads of testdata/cdk/cases.txt against a fresh demo API each, compared with
// what the Airbyte CDK 7.28.2's Connector Builder handler printed for the same definition,
// testing values, limits and a fresh demo API of its own (testdata/cdk/NAME.json; README
// there says how they were made). Both sides go through normalize first, which lists every
// difference accepted, and why; anything else that differs fails.
func TestAgainstCDK(t *testing.T) {
	racetest.Sequential(t)
	for _, c := range cdkCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join("testdata", "cdk", c.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(demoapi.New(demoapi.Options{}))
			defer srv.Close()
			red := &redact.Redactor{}
			s := openDemo(t, filepath.Join("..", "..", c.def), srv.URL, red)
			// The dynamic streams are made before the read, as the Builder's handler makes
			// them; their requests are no part of its StreamRead.
			if err := s.Resolve(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			sr, err := TestRead(context.Background(), s, c.stream, Options{Limits: c.limits})
			if err != nil {
				t.Fatal(err)
			}
			got, err := sr.JSON()
			if err != nil {
				t.Fatal(err)
			}
			n := normalizer{red: red}
			g := n.normalize(t, got, srv.URL, false)
			w := n.normalize(t, want, cdkBase.FindString(string(want)), true)
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			d, err := jsondiff.First(gj, wj, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d != nil {
				t.Errorf("the test read differs from the CDK's, normalized: %s", d.Format("the CDK's"))
			}
		})
	}
}

type cdkCase struct {
	name, def, stream string
	limits            Limits
}

// cdkCases reads testdata/cdk/cases.txt: a case a line, its name, definition, stream and
// limits (records, pages per slice, slices).
func cdkCases(t *testing.T) []cdkCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "cdk", "cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []cdkCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) != 6 {
			t.Fatalf("cases.txt: %q has %d fields, want 6", sc.Text(), len(fields))
		}
		var n [3]int
		for i := range n {
			if n[i], err = strconv.Atoi(fields[3+i]); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, cdkCase{name: fields[0], def: fields[1], stream: fields[2],
			limits: Limits{Records: n[0], PagesPerSlice: n[1], Slices: n[2]}})
	}
	if len(out) == 0 {
		t.Fatal("cases.txt has no case")
	}
	return out
}

// openDemo opens a session of a definition with the repository's testing values, at the
// demo API at base.
func openDemo(t *testing.T, defPath, base string, red *redact.Redactor) *session.Session {
	t.Helper()
	src, err := os.ReadFile(defPath)
	if err != nil {
		t.Fatal(err)
	}
	def, err := session.Load(context.Background(), defPath, src)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := values.Load(filepath.Join("..", "..", "testing-values.example.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := vals.Update(map[string]any{"base_url": base}); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(session.Inputs{DefName: defPath, Def: def, Values: vals}, session.Env{Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// normalizer lays a StreamRead out so that ours and the CDK's compare. red is the redactor
// of our read, which knows every secret and every token of it.
type normalizer struct{ red *redact.Redactor }

var (
	// cdkBase is the demo API's URL in a golden: the port make-goldens.sh found free.
	cdkBase = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	// aMask is a mask and what the CDK leaves of a secret's longer neighbour: its
	// filter_secrets masks "demo-client" inside "demo-client-secret" as "****-secret".
	aMask = regexp.MustCompile(`\*\*\*\*[\w-]*`)
	// firstToken is the page token of a slice's first request: the seed's rule sends the
	// offset 0 or the start page (0 or 1), the CDK sends nothing (its inject_on_first_request).
	firstToken = regexp.MustCompile(`([?&])(?:offset=0|page=[01])(&|$)`)
	// firstFormToken is the same page token in a form body.
	firstFormToken = regexp.MustCompile(`(^|&)(?:offset=0|page=[01])(&|$)`)
	// deprecation is the CDK's warning for a deprecated field of a component the read made;
	// connector reports such fields with validate, not in a test read.
	deprecation = regexp.MustCompile("^Component type: `\\w+`. Field '\\w+' is deprecated")
)

// normalize decodes a StreamRead and makes these differences, and only these, disappear:
//
//   - the API's URL (a port of each test server);
//   - the keys the handler's RECORD leaves out when they are null (its serializer drops the
//     data's own None members; the manifest server and TestRead write them null);
//   - the headers an HTTP client adds itself (Python's requests: User-Agent,
//     Accept-Encoding, Accept, Connection, Content-Length; Go's Transfer-Encoding is kept
//     out of its headers), and the server's Date;
//   - masking: our redactor masks the CDK's texts too (it does not mask the tokens it
//     obtains: a session token, a rotated refresh token), and a mask absorbs what the CDK
//     leaves of a longer secret around it;
//   - the spelling of header names: Go's client sends them canonical (X-Api-Key), Python's
//     as the definition writes them (X-API-Key); HTTP names are case-insensitive and each
//     test read shows the names it sent, so they compare in lower case;
//   - the first request of a slice (the seed's offset 0 or start page), in the query, a
//     header (X-Offset, X-Page) or the body (a form's or a JSON object's offset or page);
//   - the logins of a session token without expiration_duration: the CDK logs in twice for
//     each data request and sends the second token (the seed's rule is exactly one login
//     per data request), so a login whose token no request sent is left out;
//   - an OAuth token request's body, a form in the CDK, JSON here (the seed's rule; its
//     Content-Type with it), and JSON bodies' spacing: both compared as their values;
//   - numbers in records, which Python rewrites (9.10 becomes 9.1): compared as values;
//   - logs: the CDK's deprecation warnings (validate's business here), and the texts of a
//     failure (Python's exception texts and stack trace): a failure compares by its level;
//   - inferred_schema and inferred_datetime_formats, another package's (null here);
//   - the expiry of a rotated token, the expires_at of a token endpoint's answer, the end of a
//     quota window (X-RateLimit-Reset), and a per-partition state's lookback_window (the
//     duration of the read, in whole seconds): the time of each read.
func (n normalizer) normalize(t *testing.T, text []byte, base string, cdk bool) any {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(string(text)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"inferred_schema", "inferred_datetime_formats", "latest_config_update"} {
		if doc[k] == nil {
			delete(doc, k)
		}
	}
	delete(doc, "inferred_schema")
	delete(doc, "inferred_datetime_formats")
	var logs []any
	for _, l := range doc["logs"].([]any) {
		m := l.(map[string]any)
		msg := m["message"].(string)
		if deprecation.MatchString(msg) {
			continue
		}
		if m["level"] == "ERROR" {
			m["message"], m["internal_message"], m["stacktrace"] = "(a failure)", nil, nil
		}
		logs = append(logs, m)
	}
	doc["logs"] = logs
	if cfg, ok := doc["latest_config_update"].(map[string]any); ok {
		if cr, ok := cfg["credentials"].(map[string]any); ok && cr["token_expiry_date"] != nil {
			cr["token_expiry_date"] = "(the expiry)"
		}
	}
	if cdk {
		unusedLogins(doc)
	}
	exchange := func(req, resp map[string]any, title string) {
		req["url"] = firstToken.ReplaceAllString(strings.ReplaceAll(req["url"].(string), base, "BASE"), "$1")
		req["url"] = strings.TrimSuffix(strings.TrimSuffix(req["url"].(string), "&"), "?")
		h := lowerKeys(req["headers"].(map[string]any))
		req["headers"] = h
		for _, k := range []string{"user-agent", "accept-encoding", "accept", "connection", "content-length"} {
			delete(h, k)
		}
		for _, k := range []string{"x-offset", "x-page"} {
			if v, ok := h[k]; ok && (k == "x-offset" && v == "0" || k == "x-page" && (v == "0" || v == "1")) {
				delete(h, k)
			}
		}
		if title == "Refresh token" {
			delete(h, "content-type")
			if b, ok := req["body"].(string); ok {
				req["body"] = formOrJSON(b)
			}
		} else if b, ok := req["body"].(string); ok {
			req["body"] = jsonValue(b)
			if f, ok := req["body"].(string); ok {
				req["body"] = strings.TrimSuffix(firstFormToken.ReplaceAllString(f, "$1"), "&")
			}
			if o, ok := req["body"].(map[string]any); ok {
				if o["offset"] == "0" {
					delete(o, "offset")
				}
				if o["page"] == "0" || o["page"] == "1" {
					delete(o, "page")
				}
			}
		}
		rh := lowerKeys(resp["headers"].(map[string]any))
		resp["headers"] = rh
		delete(rh, "date")
		delete(rh, "transfer-encoding")
		if _, ok := rh["x-ratelimit-reset"]; ok {
			rh["x-ratelimit-reset"] = "(the time of the read)"
		}
		if b, ok := resp["body"].(string); ok {
			resp["body"] = jsonValue(b)
			if o, ok := resp["body"].(map[string]any); ok && title != "" && o["expires_at"] != nil {
				o["expires_at"] = "(the time of the read)"
			}
		}
	}
	for _, a := range doc["auxiliary_requests"].([]any) {
		m := a.(map[string]any)
		exchange(m["request"].(map[string]any), m["response"].(map[string]any), m["title"].(string))
	}
	for _, s := range doc["slices"].([]any) {
		sl := s.(map[string]any)
		for _, p := range sl["pages"].([]any) {
			pg := p.(map[string]any)
			if pg["request"] != nil {
				exchange(pg["request"].(map[string]any), pg["response"].(map[string]any), "")
			}
			for i, r := range pg["records"].([]any) {
				pg["records"].([]any)[i] = numbers(r)
			}
		}
		for _, st := range sl["state"].([]any) {
			ss := st.(map[string]any)["stream"].(map[string]any)["stream_state"].(map[string]any)
			if _, ok := ss["lookback_window"]; ok && ss["states"] != nil {
				ss["lookback_window"] = "(the duration of the read)"
			}
		}
		for _, a := range sl["auxiliary_requests"].([]any) {
			m := a.(map[string]any)
			exchange(m["request"].(map[string]any), m["response"].(map[string]any), m["title"].(string))
		}
	}
	return n.masked(doc, base)
}

// masked runs every string of v through our redactor, then lets a mask absorb what follows
// it; the API's URL becomes BASE.
func (n normalizer) masked(v any, base string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(aMask.ReplaceAllString(n.red.String(x), "****"), base, "BASE")
	case map[string]any:
		for k, e := range x {
			x[k] = n.masked(e, base)
		}
	case []any:
		for i, e := range x {
			x[i] = n.masked(e, base)
		}
	}
	return v
}

// lowerKeys is h with its names in lower case.
func lowerKeys(h map[string]any) map[string]any {
	out := make(map[string]any, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = v
	}
	return out
}

// sessionToken is a session token of the demo API as it answers a login.
var sessionToken = regexp.MustCompile(`demo-session-\d+`)

// unusedLogins leaves out of a StreamRead the logins whose token no request sent.
func unusedLogins(doc map[string]any) {
	var sent strings.Builder
	for _, s := range doc["slices"].([]any) {
		for _, p := range s.(map[string]any)["pages"].([]any) {
			if r := p.(map[string]any)["request"]; r != nil {
				b, _ := json.Marshal(r)
				sent.Write(b)
			}
		}
	}
	var kept []any
	for _, a := range doc["auxiliary_requests"].([]any) {
		m := a.(map[string]any)
		if m["title"] == "Login request" {
			body, _ := m["response"].(map[string]any)["body"].(string)
			tok := sessionToken.FindString(body)
			if tok != "" && !strings.Contains(sent.String(), tok) {
				continue
			}
		}
		kept = append(kept, a)
	}
	if kept == nil {
		kept = []any{}
	}
	doc["auxiliary_requests"] = kept
}

// jsonValue is a body's value when it is JSON (its numbers as numbers), else the text.
func jsonValue(body string) any {
	var v any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil || dec.More() {
		return body
	}
	return numbers(v)
}

// formOrJSON is a token request's body as its values: a form's fields (a repeated field a
// list), or a JSON object's.
func formOrJSON(body string) any {
	if v := jsonValue(body); v != any(body) {
		return v
	}
	q, err := url.ParseQuery(body)
	if err != nil {
		return body
	}
	out := map[string]any{}
	for k, vs := range q {
		if len(vs) == 1 && k != "scopes" {
			out[k] = vs[0]
			continue
		}
		list := make([]any, len(vs))
		for i, s := range vs {
			list[i] = s
		}
		out[k] = list
	}
	return out
}

// numbers replaces the numbers of a decoded value by their value, written one way: an
// integer in full, anything else as the shortest float.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, ok := new(big.Int).SetString(x.String(), 10); ok {
			return i.String()
		}
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return x.String()
		}
		if f == float64(int64(f)) {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

// The cases of cases.txt are the ones make-goldens.sh made goldens of.
func TestCDKCasesHaveGoldens(t *testing.T) {
	var names []string
	for _, c := range cdkCases(t) {
		names = append(names, c.name+".json")
		if _, err := os.Stat(filepath.Join("testdata", "cdk", c.name+".json")); err != nil {
			t.Errorf("case %s: %v", c.name, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "cdk", "*.json"))
	for _, f := range files {
		if !slices.Contains(names, filepath.Base(f)) {
			t.Errorf("%s is the golden of no case", f)
		}
	}
}

// unusedLogins leaves out only the logins whose token no data request sent.
func TestUnusedLogins(t *testing.T) {
	login := func(tok string) any {
		return map[string]any{"title": "Login request",
			"response": map[string]any{"body": `{"data":{"session":{"token":"` + tok + `"}}}`}}
	}
	page := func(tok string) any {
		return map[string]any{"request": map[string]any{"headers": map[string]any{"Authorization": "Bearer " + tok}}}
	}
	refresh := map[string]any{"title": "Refresh token", "response": map[string]any{"body": `{}`}}
	doc := map[string]any{
		"auxiliary_requests": []any{login("demo-session-000001"), login("demo-session-000002"), refresh,
			login("demo-session-000003"), login("demo-session-000004")},
		"slices": []any{map[string]any{"pages": []any{page("demo-session-000002"), page("demo-session-000004")}}},
	}
	unusedLogins(doc)
	got, _ := json.Marshal(doc["auxiliary_requests"])
	want, _ := json.Marshal([]any{login("demo-session-000002"), refresh, login("demo-session-000004")})
	if string(got) != string(want) {
		t.Errorf("kept %s\nwant %s", got, want)
	}
}
