package resolve

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
)

// A migration rewrites the deprecated fields of one kind of component, as the CDK's manifest
// migrations do when the Builder asks for them (__should_migrate): applies says whether a
// component needs it, migrate changes the component in place (an error abandons every
// migration), and valid says whether the result is right, which decides whether the
// migration is recorded.
type migration struct {
	name    string
	applies func(c *Object) bool
	migrate func(c *Object) error
	valid   func(c *Object) bool
}

// migrations run in this order, each over the whole manifest.
var migrations = []migration{
	{
		name:    "HttpRequesterUrlBaseToUrl",
		applies: func(c *Object) bool { return c.Value("type") == "HttpRequester" && c.Has("url_base") },
		migrate: func(c *Object) error {
			c.Set("url", c.Value("url_base"))
			c.Pop("url_base")
			return nil
		},
		valid: func(c *Object) bool { return c.Has("url") && !c.Has("url_base") && c.Value("url") != nil },
	},
	{
		name:    "HttpRequesterPathToUrl",
		applies: func(c *Object) bool { return c.Value("type") == "HttpRequester" && c.Has("path") },
		migrate: migratePath,
		valid:   func(c *Object) bool { return c.Has("url") && !c.Has("path") && c.Value("url") != nil },
	},
	{
		name:    "HttpRequesterRequestBodyJsonDataToRequestBody",
		applies: bodyNeedsMigration,
		migrate: migrateBody,
		valid: func(c *Object) bool {
			_, jsonText := c.Value("request_body_json").(string)
			unmigrated := c.Has("request_body_data") || c.Has("request_body_json") && !jsonText
			if c.Has("request_body_json") && jsonText {
				return !unmigrated
			}
			return c.Has("request_body") && !unmigrated
		},
	},
}

// errMigration abandons the migrations: the manifest is kept as it was resolved.
var errMigration = errors.New("migration failed")

// migratePath joins url and path into url, as urllib's urljoin does with a url ending in "/"
// and the path without its leading slashes.
func migratePath(c *Object) error {
	p, ok := c.Value("path").(string)
	if !ok {
		return errMigration // str methods on something else
	}
	path := strings.TrimLeft(p, "/")
	url, present := c.Get("url")
	if !present {
		return errMigration
	}
	if path == "" {
		c.Set("url", url)
		c.Pop("path")
		return nil
	}
	base, ok := url.(string)
	if !ok {
		return errMigration
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	joined, err := urljoin(base, path)
	if err != nil {
		return err
	}
	c.Set("url", joined)
	c.Pop("path")
	return nil
}

func bodyNeedsMigration(c *Object) bool {
	if c.Value("type") != "HttpRequester" {
		return false
	}
	if v, ok := c.Get("request_body_json"); ok {
		if _, text := v.(string); !text {
			return true
		}
	}
	return c.Has("request_body_data")
}

// migrateBody moves request_body_json (a mapping: RequestBodyGraphQL when its query is text,
// else RequestBodyJsonObject; text stays where it is) and request_body_data
// (RequestBodyUrlEncodedForm) into request_body.
func migrateBody(c *Object) error {
	if v, ok := c.Get("request_body_json"); ok {
		if o, ok := v.(*Object); ok {
			typ := "RequestBodyJsonObject"
			if _, query := o.Value("query").(string); query {
				typ = "RequestBodyGraphQL"
			}
			moveBody(c, "request_body_json", typ)
		}
	}
	if c.Has("request_body_data") {
		moveBody(c, "request_body_data", "RequestBodyUrlEncodedForm")
	}
	return nil
}

func moveBody(c *Object, key, typ string) {
	body := NewObject()
	body.Set("type", typ)
	body.Set("value", c.Value(key))
	c.Set("request_body", body)
	c.Pop(key)
}

// migrate applies every migration to a copy of m and returns it, or m itself when one fails.
// Each migration that changed a component is recorded in metadata.applied_migrations with
// the manifest's version and the time now.
func migrate(m *Object, now time.Time) *Object {
	out := deepCopy(m).(*Object)
	version := "0.0.0"
	if v, ok := out.Get("version"); ok {
		version = pyStr(v)
	}
	for _, mig := range migrations {
		st := &migrationRun{mig: mig}
		if err := st.walk(out); err != nil {
			return m
		}
		if !st.migrated {
			continue
		}
		if err := recordMigration(out, mig.name, version, now); err != nil {
			return m
		}
	}
	return out
}

// migrationRun is one migration over the manifest; migrated is the validity of the last
// component it changed, as the CDK keeps it.
type migrationRun struct {
	mig      migration
	migrated bool
}

func (r *migrationRun) walk(v any) error {
	switch x := v.(type) {
	case *Object:
		if t, ok := x.Get("type"); ok {
			if t == "DynamicDeclarativeStream" {
				return nil // the CDK never migrates a dynamic stream, its template included
			}
			if r.mig.applies(x) {
				if err := r.mig.migrate(x); err != nil {
					return err
				}
				r.migrated = r.mig.valid(x)
			}
		}
		vals := make([]any, 0, x.Len())
		for _, k := range x.keys {
			vals = append(vals, x.vals[k])
		}
		for _, e := range vals {
			if err := r.walk(e); err != nil {
				return err
			}
		}
	case *List:
		for _, e := range x.Items {
			if err := r.walk(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func recordMigration(m *Object, name, version string, now time.Time) error {
	if !m.Has("metadata") {
		m.Set("metadata", NewObject())
	}
	meta, ok := m.Value("metadata").(*Object)
	if !ok {
		return errMigration
	}
	if !meta.Has("applied_migrations") {
		meta.Set("applied_migrations", &List{Items: []any{}})
	}
	applied, ok := meta.Value("applied_migrations").(*List)
	if !ok {
		return errMigration
	}
	// The CDK skips the record when the list holds its version pattern, "*".
	if slices.ContainsFunc(applied.Items, func(v any) bool { return v == "*" }) {
		return nil
	}
	trace := NewObject()
	trace.Set("from_version", version)
	trace.Set("to_version", "*")
	trace.Set("migration", name)
	trace.Set("migrated_at", isoformat(now.UTC()))
	applied.Items = append(applied.Items, trace)
	return nil
}

// isoformat writes a UTC time as Python's datetime.isoformat: microseconds only when there
// are any.
func isoformat(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// The schemes urllib treats specially.
var (
	usesRelative = []string{"", "ftp", "http", "gopher", "nntp", "imap", "wais", "file", "https", "shttp", "mms",
		"prospero", "rtsp", "rtsps", "rtspu", "sftp", "svn", "svn+ssh", "ws", "wss"}
	usesNetloc = []string{"", "ftp", "http", "gopher", "nntp", "telnet", "imap", "wais", "file", "mms", "https", "shttp",
		"snews", "prospero", "rtsp", "rtsps", "rtspu", "rsync", "svn", "svn+ssh", "sftp", "nfs", "git", "git+ssh", "ws", "wss"}
	usesParams = []string{"", "ftp", "hdl", "prospero", "http", "imap", "https", "shttp", "rtsp", "rtsps", "rtspu", "sip",
		"sips", "mms", "sftp", "tel"}
)

// urlParts is a URL split as urllib.parse.urlparse splits it.
type urlParts struct{ scheme, netloc, path, params, query, fragment string }

var schemeChars = regexp.MustCompile(`^[A-Za-z0-9+\-.]+$`)

// urlparse splits a URL as Python 3.11's urllib.parse.urlparse does, text only: a template
// such as {{ config['host'] }} is just characters. Its errors are urllib's ValueErrors.
func urlparse(u, defScheme string) (urlParts, error) {
	u = strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	u = strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(u)
	p := urlParts{scheme: defScheme}
	if i := strings.IndexByte(u, ':'); i > 0 && (u[0] >= 'a' && u[0] <= 'z' || u[0] >= 'A' && u[0] <= 'Z') && schemeChars.MatchString(u[:i]) {
		p.scheme, u = strings.ToLower(u[:i]), u[i+1:]
	}
	if strings.HasPrefix(u, "//") {
		end := len(u)
		for _, c := range "/?#" {
			if j := strings.IndexRune(u[2:], c); j >= 0 {
				end = min(end, j+2)
			}
		}
		p.netloc, u = u[2:end], u[end:]
		open, shut := strings.Contains(p.netloc, "["), strings.Contains(p.netloc, "]")
		if open != shut {
			return p, cdkErrorf("Invalid IPv6 URL")
		}
		if open {
			_, after, _ := strings.Cut(p.netloc, "[")
			host, _, _ := strings.Cut(after, "]")
			if err := checkBracketedHost(host); err != nil {
				return p, err
			}
		}
	}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u, p.fragment = u[:i], u[i+1:]
	}
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u, p.query = u[:i], u[i+1:]
	}
	if slices.Contains(usesParams, p.scheme) && strings.Contains(u, ";") {
		i := strings.IndexByte(u, ';')
		if j := strings.LastIndexByte(u, '/'); j >= 0 {
			i = strings.IndexByte(u[j:], ';')
			if i >= 0 {
				i += j
			}
		}
		if i >= 0 {
			u, p.params = u[:i], u[i+1:]
		}
	}
	p.path = u
	return p, nil
}

var ipvFuture = regexp.MustCompile(`^v[a-fA-F0-9]+\..+$`)

// checkBracketedHost is urllib's check of a host in brackets: an IPv6 address or an
// IPvFuture one. A template in the host ({{ config['x'] }}) fails it.
func checkBracketedHost(h string) error {
	if strings.HasPrefix(h, "v") {
		if !ipvFuture.MatchString(h) {
			return cdkErrorf("IPvFuture address is invalid")
		}
		return nil
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return fmt.Errorf("%q does not appear to be an IPv4 or IPv6 address", h)
	}
	if a.Is4() {
		return cdkErrorf("An IPv4 address cannot be in brackets")
	}
	return nil
}

func (p urlParts) String() string {
	u := p.path
	if p.params != "" {
		u += ";" + p.params
	}
	if p.netloc != "" || p.scheme != "" && slices.Contains(usesNetloc, p.scheme) && !strings.HasPrefix(u, "//") {
		if u != "" && !strings.HasPrefix(u, "/") {
			u = "/" + u
		}
		u = "//" + p.netloc + u
	}
	if p.scheme != "" {
		u = p.scheme + ":" + u
	}
	if p.query != "" {
		u += "?" + p.query
	}
	if p.fragment != "" {
		u += "#" + p.fragment
	}
	return u
}

// urljoin is Python 3.11's urllib.parse.urljoin.
func urljoin(base, ref string) (string, error) {
	if base == "" {
		return ref, nil
	}
	if ref == "" {
		return base, nil
	}
	b, err := urlparse(base, "")
	if err != nil {
		return "", err
	}
	r, err := urlparse(ref, b.scheme)
	if err != nil {
		return "", err
	}
	if r.scheme != b.scheme || !slices.Contains(usesRelative, r.scheme) {
		return ref, nil
	}
	if slices.Contains(usesNetloc, r.scheme) {
		if r.netloc != "" {
			return r.String(), nil
		}
		r.netloc = b.netloc
	}
	if r.path == "" && r.params == "" {
		r.path, r.params = b.path, b.params
		if r.query == "" {
			r.query = b.query
		}
		return r.String(), nil
	}
	baseParts := strings.Split(b.path, "/")
	if baseParts[len(baseParts)-1] != "" {
		baseParts = baseParts[:len(baseParts)-1]
	}
	var segments []string
	if strings.HasPrefix(r.path, "/") {
		segments = strings.Split(r.path, "/")
	} else {
		segments = append(baseParts, strings.Split(r.path, "/")...)
		if len(segments) > 2 {
			kept := []string{segments[0]}
			for _, s := range segments[1 : len(segments)-1] {
				if s != "" {
					kept = append(kept, s)
				}
			}
			segments = append(kept, segments[len(segments)-1])
		}
	}
	var resolved []string
	for _, s := range segments {
		switch s {
		case "..":
			if len(resolved) > 0 {
				resolved = resolved[:len(resolved)-1]
			}
		case ".":
		default:
			resolved = append(resolved, s)
		}
	}
	if last := segments[len(segments)-1]; last == "." || last == ".." {
		resolved = append(resolved, "")
	}
	r.path = strings.Join(resolved, "/")
	if r.path == "" {
		r.path = "/"
	}
	return r.String(), nil
}
