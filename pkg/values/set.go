package values

// --set and --set-json, and the defaults of the connection specification: the values a run
// gets from somewhere other than the testing values file.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// TypeError is a --set value that does not convert to the type spec.connection_specification
// gives its key: a well-formed assignment whose value does not fit the definition, reported
// like a wrong value in the testing values file.
type TypeError struct {
	Key   string
	Raw   string
	Types []string
	// Secret keeps Raw out of the message: the key is marked airbyte_secret.
	Secret bool
}

func (e *TypeError) Error() string {
	kinds := make([]string, len(e.Types))
	for i, t := range e.Types {
		kinds[i] = typeArticle(t)
	}
	given, value := fmt.Sprintf("--set %s=%s", e.Key, e.Raw), fmt.Sprintf("%q", e.Raw)
	if e.Secret {
		given, value = "--set "+e.Key, "the value given"
	}
	msg := fmt.Sprintf("%s: %s is %s in spec.connection_specification, and %s is not one",
		given, e.Key, strings.Join(kinds, " or "), value)
	switch {
	case slices.Contains(e.Types, "array"):
		msg += fmt.Sprintf(" (write it as JSON, e.g. --set '%s=[\"a\",\"b\"]')", e.Key)
	case slices.Contains(e.Types, "object"):
		msg += fmt.Sprintf(" (write it as JSON, e.g. --set '%s={\"key\":\"value\"}')", e.Key)
	case slices.Contains(e.Types, "boolean"):
		msg += " (write true or false)"
	}
	return msg
}

func typeArticle(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

// Set overrides (or adds) the value at a dotted key path. The value is text, taken as it
// is, unless spec (spec.connection_specification, may be nil) types the key as an integer,
// a number, a boolean, an array or an object and not as a string: then it is converted
// (numbers keep their spelling as a json.Number; arrays and objects are read as JSON), and a
// value that does not convert is a *TypeError. Any other error is a malformed assignment.
func (v *Values) Set(assignment string, spec map[string]any) error {
	key, path, raw, err := splitAssignment("--set", assignment)
	if err != nil {
		return err
	}
	types, secret := specTypes(spec, path)
	val, ok := convert(raw, types)
	if !ok {
		return &TypeError{Key: key, Raw: raw, Types: types, Secret: secret}
	}
	return v.assign("--set", key, path, val)
}

// SetJSON overrides (or adds) the value at a dotted key path with a JSON value (numbers
// kept as json.Number). Invalid JSON is an error giving the byte offset in the value.
func (v *Values) SetJSON(assignment string) error {
	key, path, raw, err := splitAssignment("--set-json", assignment)
	if err != nil {
		return err
	}
	val, off, err := decodeJSON(raw)
	if err != nil {
		return fmt.Errorf("--set-json %s: invalid JSON at byte %d of the value: %v", key, off, err)
	}
	return v.assign("--set-json", key, path, val)
}

func splitAssignment(flag, assignment string) (key string, path []string, raw string, err error) {
	key, raw, ok := strings.Cut(assignment, "=")
	if !ok || key == "" {
		return "", nil, "", fmt.Errorf("%s %q: write key.path=value", flag, assignment)
	}
	path = strings.Split(key, ".")
	if slices.Contains(path, "") {
		return "", nil, "", fmt.Errorf("%s %s: the key path has an empty part; write key.path=value", flag, key)
	}
	return key, path, raw, nil
}

func (v *Values) assign(flag, key string, path []string, val any) error {
	if err := setPath(v.Map, path, val); err != nil {
		return fmt.Errorf("%s %s: %w", flag, key, err)
	}
	v.overridden[key] = true
	return nil
}

// convert turns the text of a --set into a value of one of types; no types, or "string"
// among them, keeps the text.
func convert(raw string, types []string) (any, bool) {
	if len(types) == 0 || slices.Contains(types, "string") {
		return raw, true
	}
	if slices.Contains(types, "integer") || slices.Contains(types, "number") {
		// json.Valid refuses what JSON refuses and decimalRat lets by: 08, 1.
		if r := decimalRat(raw); r != nil && json.Valid([]byte(raw)) && (r.IsInt() || slices.Contains(types, "number")) {
			return json.Number(raw), true
		}
	}
	if slices.Contains(types, "boolean") && (raw == "true" || raw == "false") {
		return raw == "true", true
	}
	if slices.Contains(types, "null") && raw == "null" {
		return nil, true
	}
	if slices.Contains(types, "array") || slices.Contains(types, "object") {
		if val, _, err := decodeJSON(raw); err == nil {
			_, isList := val.([]any)
			_, isMap := val.(map[string]any)
			if isList && slices.Contains(types, "array") || isMap && slices.Contains(types, "object") {
				return val, true
			}
		}
	}
	return nil, false
}

// decodeJSON reads one JSON value, numbers as json.Number; on an error it returns the byte
// offset where the value went wrong.
func decodeJSON(raw string) (any, int64, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var val any
	if err := dec.Decode(&val); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, se.Offset, errors.New(se.Error())
		case errors.Is(err, io.EOF):
			return nil, 0, errors.New("the value is empty")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, int64(len(raw)), errors.New("the value ends before it is complete")
		}
		return nil, dec.InputOffset(), err
	}
	rest := raw[dec.InputOffset():]
	if trimmed := strings.TrimLeft(rest, " \t\r\n"); trimmed != "" {
		return nil, int64(len(raw) - len(trimmed)), errors.New("more data after the JSON value")
	}
	return val, 0, nil
}

// lookupBudget bounds the schemas visited to find the type of one key, so that a
// specification whose branches nest deeply cannot make --set slow.
const lookupBudget = 10_000

// specTypes returns the JSON types spec.connection_specification gives the value at path
// (following properties, $ref, allOf, anyOf and oneOf), and whether it is secret. No types
// means the key is untyped, unknown, or typed differently by different branches in a way
// that includes no type at all: the value then stays text.
func specTypes(spec map[string]any, path []string) (types []string, secret bool) {
	if spec == nil {
		return nil, false
	}
	root, err := compileSchema(spec)
	if err != nil {
		return nil, false // Validate reports the broken schema
	}
	budget := lookupBudget
	current := []*schema{root}
	for _, seg := range path {
		var next []*schema
		for _, s := range current {
			next = append(next, propertySchemas(s, seg, &budget)...)
		}
		current = next
	}
	seen := map[string]bool{}
	for _, s := range current {
		s = deref(s)
		if s == nil {
			continue
		}
		secret = secret || s.secret
		if s.types == nil {
			return nil, secret
		}
		for _, t := range s.types {
			if !seen[t] {
				seen[t] = true
				types = append(types, t)
			}
		}
	}
	return types, secret
}

// propertySchemas returns the schemas s gives the property name, directly or through
// $ref, allOf, anyOf and oneOf.
func propertySchemas(s *schema, name string, budget *int) []*schema {
	var out []*schema
	var walk func(s *schema)
	walk = func(s *schema) {
		*budget--
		if s == nil || *budget < 0 {
			return
		}
		if s.ref != nil {
			walk(s.ref)
			return
		}
		if p, ok := s.properties[name]; ok {
			out = append(out, p)
		}
		for _, list := range [][]*schema{s.allOf, s.anyOf, s.oneOf} {
			for _, b := range list {
				walk(b)
			}
		}
	}
	walk(s)
	return out
}

// deref follows $ref to the schema that holds the keywords (nil for a loop of references,
// which the compiler refuses anyway).
func deref(s *schema) *schema {
	for range 64 {
		if s == nil || s.ref == nil {
			return s
		}
		s = s.ref
	}
	return nil
}

// Default is an absent testing value filled with the `default` of its property in
// spec.connection_specification.
type Default struct {
	Path   string // dotted
	Value  any
	Secret bool // the property is airbyte_secret: never print Value
}

// defaultsBudget bounds the properties visited when filling defaults (a recursive
// specification would otherwise create objects without end).
const defaultsBudget = 10_000

// ApplyDefaults fills every absent value whose property in spec (through properties and
// $ref, nested objects included) has a `default`; a given value is never replaced. An absent
// object is created only when defaults fill something in it and every key it requires. It
// returns what was filled, in path order. A specification that is not a valid schema fills
// nothing (Validate reports it).
func (v *Values) ApplyDefaults(spec map[string]any) []Default {
	if spec == nil {
		return nil
	}
	root, err := compileSchema(spec)
	if err != nil {
		return nil
	}
	f := &filler{budget: defaultsBudget, creating: map[*schema]bool{}}
	f.fill(root, v.Map, nil)
	return f.out
}

// filler fills defaults. creating holds the schemas of the absent objects being built, so
// that a recursive schema ($ref to itself) builds each object once, not without end.
type filler struct {
	out      []Default
	budget   int
	creating map[*schema]bool
}

func (f *filler) fill(s *schema, m map[string]any, path []string) {
	s = deref(s)
	if s == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(s.properties)) {
		f.budget--
		if f.budget < 0 || len(path) > maxPlainDepth {
			return
		}
		p := deref(s.properties[name])
		if p == nil {
			continue
		}
		at := child(path, name)
		val, present := m[name]
		switch {
		case present:
			if sub, ok := val.(map[string]any); ok {
				f.fill(p, sub, at)
			}
		case p.hasDefault:
			m[name] = plainCopy(p.def)
			f.out = append(f.out, Default{Path: strings.Join(at, "."), Value: m[name], Secret: p.secret})
		case len(p.properties) > 0 && !f.creating[p]:
			sub := map[string]any{}
			outer := f.out
			f.out = nil
			f.creating[p] = true
			f.fill(p, sub, at)
			delete(f.creating, p)
			filled := f.out
			f.out = outer
			complete := true
			for _, r := range p.required {
				if _, ok := sub[r]; !ok {
					complete = false
				}
			}
			if len(filled) > 0 && complete {
				m[name] = sub
				f.out = append(f.out, filled...)
			}
		}
	}
}

// plainCopy copies a default out of the specification, so that changing the testing values
// never changes the definition, with whole numbers as int64 like the values read from a file.
func plainCopy(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plainCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = plainCopy(e)
		}
		return l
	}
	return v
}

// FormatDefaults writes the defaults applied as `path=value` pairs, values as JSON and
// secrets as ****, e.g. `page_size=100, region="eu"`.
func FormatDefaults(ds []Default) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		val := "****"
		if !d.Secret {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(jsonable(d.Value)); err != nil {
				val = fmt.Sprint(d.Value)
			} else {
				val = strings.TrimSuffix(b.String(), "\n")
			}
		}
		parts[i] = d.Path + "=" + val
	}
	return strings.Join(parts, ", ")
}
