package manifest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Selective is a SelectiveAuthenticator: the value at Path in the testing values names the
// alternative that applies, so one authenticator still serves the whole run.
type Selective struct {
	// Path is authenticator_selection_path.
	Path []string
	// Names are the keys of `authenticators`, in written order.
	Names []string
	// Alternatives by name; a nil value is NoAuth.
	Alternatives map[string]*Authenticator
	// Problems are, by name, the problems of an alternative that only matter when it is
	// selected (a template that does not compile, a missing field): validate reports them
	// as warnings, Select refuses the alternative.
	Problems map[string][]string
}

// selectiveAt is a SelectiveAuthenticator being read and the path of each alternative.
type selectiveAt struct {
	s     *Selective
	paths map[string]string
}

// keptErrors are the codes that stay errors in any alternative: the seed rules, and
// components this tool cannot run.
var keptErrors = map[string]bool{
	diag.CodeCredentialLiteral: true, diag.CodeGrantType: true, diag.CodeMixedAuthenticators: true,
	diag.CodeUnsupported: true, "python-component": true,
}

// softenAlternatives turns the other errors inside an alternative of a SelectiveAuthenticator
// into warnings, and keeps them for Select: the reference implementation fails on them only
// when the testing values select that alternative, so a definition whose unused alternative
// is broken upstream still runs with the others.
func (l *loader) softenAlternatives() {
	for _, sa := range l.selectives {
		for i := range l.diags {
			d := &l.diags[i]
			if d.Severity == diag.Warning || keptErrors[d.Code] {
				continue
			}
			for _, name := range sa.s.Names {
				p := sa.paths[name]
				if d.Path != p && !strings.HasPrefix(d.Path, p+".") && !strings.HasPrefix(d.Path, p+"[") {
					continue
				}
				if sa.s.Problems == nil {
					sa.s.Problems = map[string][]string{}
				}
				where := ""
				if d.Line > 0 {
					where = fmt.Sprintf("line %d:%d: ", d.Line, d.Column)
				}
				sa.s.Problems[name] = append(sa.s.Problems[name], where+d.Message)
				d.Severity = diag.Warning
				d.Message += fmt.Sprintf(" (in the SelectiveAuthenticator alternative `%s`: testing values that select it are refused)", name)
				break
			}
		}
	}
}

// LegacySession is a LegacySessionTokenAuthenticator. Each data request first checks the
// configured session token with a GET of APIURL+ValidateSessionURL; when it is empty or the
// check answers 401, the token comes from one POST of {"username", "password"} to
// APIURL+LoginURL (kept for the run) at SessionTokenResponseKey. The token goes in Header.
type LegacySession struct {
	Header, LoginURL, ValidateSessionURL, SessionTokenResponseKey *template.Template
	// SessionToken, Username, Password: nil when absent (empty).
	SessionToken, Username, Password *template.Template
	// APIURL is the requester's url (or url_base), joined to the paths by plain
	// concatenation as the reference implementation does.
	APIURL *template.Template

	apiURLSet bool
}

// Select returns the authenticator that applies with the testing values config: a itself,
// or for a SelectiveAuthenticator the alternative named by the value at its selection path
// (nil for NoAuth). A path that is absent, or a value that names no alternative, is an error
// naming the path, the value and the choices.
func (a *Authenticator) Select(config map[string]any) (*Authenticator, error) {
	if a == nil || a.Selective == nil {
		return a, nil
	}
	s := a.Selective
	path := strings.Join(s.Path, ".")
	choices := strings.Join(s.Names, ", ")
	v, ok := selectionValue(config, s.Path)
	if !ok {
		return nil, fmt.Errorf("the SelectiveAuthenticator reads the authenticator to use at %s in the testing values, and there is no value there; set it to one of: %s", path, choices)
	}
	key := template.ToString(v)
	alt, ok := s.Alternatives[key]
	if !ok {
		return nil, fmt.Errorf("the testing values set %s to %q, which names no authenticator of the SelectiveAuthenticator; choices: %s", path, key, choices)
	}
	if p := s.Problems[key]; len(p) > 0 {
		return nil, fmt.Errorf("the testing values set %s to %q, and that authenticator of the SelectiveAuthenticator cannot run: %s", path, key, strings.Join(p, "; "))
	}
	return alt, nil
}

// selectionValue follows path through config as dpath does: mapping keys, and list
// indexes written as integers.
func selectionValue(config map[string]any, path []string) (any, bool) {
	var v any = config
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, len(path) > 0
}

// selective reads a SelectiveAuthenticator: every alternative is read and checked as an
// authenticator of its own (credential rule, grant types, ...).
func (l *loader) selective(c *comp, uses *[]optionUse) *Selective {
	s := &Selective{Alternatives: map[string]*Authenticator{}}
	at := selectiveAt{s: s, paths: map[string]string{}}
	l.selectives = append(l.selectives, at)
	if c.require("authenticator_selection_path") != nil {
		s.Path, _ = l.stringList(c, "authenticator_selection_path")
		if s.Path != nil && len(s.Path) == 0 {
			l.at(c.get("authenticator_selection_path"), c.fieldPath("authenticator_selection_path"), diag.CodeType,
				"`authenticator_selection_path` is empty; it must name the testing value that selects the authenticator", "")
		}
	}
	m := c.require("authenticators")
	if m == nil {
		return s
	}
	if m.Kind != yaml.MappingNode {
		l.at(m, c.fieldPath("authenticators"), diag.CodeType, fmt.Sprintf("`authenticators` must be a mapping of names to authenticators, not %s", kindName(m)), "")
		return s
	}
	if len(m.Content) == 0 {
		l.at(m, c.fieldPath("authenticators"), diag.CodeMissingField, "`authenticators` is empty; list the authenticators to select from", "")
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		name, n := m.Content[i].Value, m.Content[i+1]
		p := join(c.fieldPath("authenticators"), name)
		if n.Kind == yaml.MappingNode {
			if t := mapGet(n, "type"); t != nil && t.Value == SelectiveAuth {
				l.at(n, p, diag.CodeType, "a SelectiveAuthenticator cannot select another SelectiveAuthenticator", "list the inner alternatives directly")
				continue
			}
		}
		s.Names = append(s.Names, name)
		at.paths[name] = p
		s.Alternatives[name] = l.authenticator(n, p, c.params, false, uses)
	}
	return s
}

// legacy reads a LegacySessionTokenAuthenticator.
func (l *loader) legacy(c *comp) *LegacySession {
	s := &LegacySession{}
	for _, f := range []struct {
		name string
		dst  **template.Template
	}{
		{"header", &s.Header}, {"login_url", &s.LoginURL}, {"validate_session_url", &s.ValidateSessionURL},
		{"session_token_response_key", &s.SessionTokenResponseKey},
	} {
		if c.require(f.name) != nil {
			l.stringTemplate(c, f.name, authVars, f.dst)
		}
	}
	l.credential(l.stringTemplate(c, "username", authVars, &s.Username), "the username", "username", true)
	l.credential(l.stringTemplate(c, "password", authVars, &s.Password), "the password", "password", true)
	l.credential(l.stringTemplate(c, "session_token", authVars, &s.SessionToken), "the session token (`session_token`)", "session_token", true)
	return s
}

// legacyAPIURL gives the legacy session authenticators of a (itself or its alternatives)
// the url (or url_base) of requester c, the first requester that uses them.
func (l *loader) legacyAPIURL(a *Authenticator, c *comp) {
	if a == nil {
		return
	}
	if a.Selective != nil {
		names := make([]string, 0, len(a.Selective.Alternatives))
		for n := range a.Selective.Alternatives {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			l.legacyAPIURL(a.Selective.Alternatives[n], c)
		}
		return
	}
	if a.Legacy == nil || a.Legacy.apiURLSet {
		return
	}
	a.Legacy.apiURLSet = true
	f := "url"
	if c.get(f) == nil {
		f = "url_base"
	}
	l.stringTemplate(c, f, requestVars, &a.Legacy.APIURL)
}
