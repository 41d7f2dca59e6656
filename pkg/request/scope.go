package request

import (
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/template"
)

// Scope is the template variables of one request, and the redactor that must learn every
// value the request's templates compute from a secret. A template that reads a variable
// holding a secret (the testing values, a session token) is evaluated a second time with
// every secret replaced by a stand-in (redact.Redactor.Shadow); where the two results differ,
// the result owes something to a secret — `Basic {{ base64encode(config.user ~ ':' ~
// config.password) }}` — and that part is registered as a secret before anything can print it.
type Scope struct {
	Vars map[string]any
	// Secrets is the run's redactor; nil evaluates without taint tracking.
	Secrets *redact.Redactor

	shadow map[string]any // Vars with the secrets replaced, built on first need
	// differ are the variables whose shadow differs from the real value.
	differ []string
	built  bool
}

// NewScope returns the scope of vars; secrets may be nil.
func NewScope(vars map[string]any, secrets *redact.Redactor) *Scope {
	return &Scope{Vars: vars, Secrets: secrets}
}

// Eval evaluates t with the scope's variables, registering what the result owes to secrets.
func (s *Scope) Eval(t *template.Template) (any, error) {
	v, err := t.Eval(s.Vars)
	if template.Class(err) == template.ClassType {
		// The CDK keeps the template's own text when it raises a TypeError (see
		// template.Interpolate); the text is the definition's, it owes nothing to a secret.
		return t.Source(), nil
	}
	if err != nil || s.Secrets == nil || t.IsLiteral() || !s.tainted(t) {
		return v, err
	}
	sv, serr := t.Eval(s.shadow)
	if serr != nil {
		// The stand-in broke the template (a secret parsed as a number, say): the whole
		// result depends on the secret.
		derive(s.Secrets, v, nil, false)
		return v, nil
	}
	derive(s.Secrets, v, sv, true)
	return v, nil
}

// Render is Eval rendered as text.
func (s *Scope) Render(t *template.Template) (string, error) {
	v, err := s.Eval(t)
	if err != nil {
		return "", err
	}
	return template.ToString(v), nil
}

// tainted reports whether t reads a variable that holds a secret.
func (s *Scope) tainted(t *template.Template) bool {
	if !s.built {
		s.built = true
		s.shadow = make(map[string]any, len(s.Vars))
		for k, v := range s.Vars {
			sv, changed := s.Secrets.Shadow(v)
			s.shadow[k] = sv
			if changed {
				s.differ = append(s.differ, k)
			}
		}
	}
	for _, name := range s.differ {
		if t.Reads(name) {
			return true
		}
	}
	return false
}

// derive registers the leaves of real that differ from those of shadow; without a shadow
// (hasShadow false: the template failed on the stand-ins, or the shadow has no such key or
// element), every leaf of real. A leaf that is None or a boolean is never registered: it
// cannot spell a secret, and masking the word "None" or "True" would garble every message
// that holds it (a partition value that is missing, an API status).
func derive(r *redact.Redactor, real, shadow any, hasShadow bool) {
	switch x := real.(type) {
	case nil, bool:
		return
	case *record.Object:
		y, _ := shadow.(*record.Object)
		for _, k := range x.Keys() {
			v, _ := x.Get(k)
			var sv any
			ok := false
			if y != nil {
				sv, ok = y.Get(k)
			}
			derive(r, v, sv, ok)
		}
		return
	case map[string]any:
		y, _ := shadow.(map[string]any)
		for k, v := range x {
			sv, ok := y[k]
			derive(r, v, sv, ok)
		}
		return
	case []any:
		y, _ := shadow.([]any)
		for i, v := range x {
			if i < len(y) {
				derive(r, v, y[i], true)
			} else {
				derive(r, v, nil, false)
			}
		}
		return
	}
	rs := template.ToString(real)
	ss := ""
	if hasShadow {
		ss = template.ToString(shadow)
		if ss == rs {
			return
		}
	}
	r.Derive(rs, ss)
}
