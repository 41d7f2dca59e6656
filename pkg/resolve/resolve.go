// Package resolve makes a manifest's resolved form, the JSON the Airbyte CDK's manifest server
// answers to resolve and full_resolve and the Connector Builder edits: every reference
// replaced by a copy of what it names, every component given its type and its inherited
// $parameters (copied into its fields too), optionally migrated and normalized, and for
// full_resolve the streams the dynamic_streams make appended.
//
// The typed model of pkg/manifest is what runs; this is the manifest as data, kept as
// ordered JSON because the Builder shows the keys in the order the CDK leaves them, and
// that order is the outcome of the CDK's passes (a key added lands last, a $parameters
// entry named after a field moves last). So each pass here does what the CDK's does, in
// the same order, on values that behave as Python's dicts and lists.
package resolve

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/template"
)

// The keys the Builder sets on the manifest it sends, asking for the optional passes.
const (
	shouldNormalize = "__should_normalize"
	shouldMigrate   = "__should_migrate"
)

// Options of a resolution.
type Options struct {
	// Now is the clock of the migration records (nil: time.Now).
	Now func() time.Time
	// maxSteps replaces the limit of the work (0: maxSteps), for the tests.
	maxSteps int
}

// Manifest returns the resolved form of a manifest (as Parse reads it; it is not changed):
//   - the Builder's __should_normalize and __should_migrate keys are taken out when true,
//     and ask for the passes below;
//   - a manifest without a type is a DeclarativeSource (the key added last);
//   - every reference is resolved (see refs), then types and $parameters propagated (see
//     propagator), from the top, whose fields are DeclarativeSource's;
//   - with __should_migrate, the deprecated requester fields are migrated (see migrate);
//   - with __should_normalize, repeated values move to definitions.linked (see normalize).
func Manifest(m *Object, opts Options) (*Object, error) {
	def := deepCopy(m).(*Object)
	norm, mig := BuilderKeys(def)
	if !def.Has("type") {
		def.Set("type", "DeclarativeSource")
	}
	b := newBudget(maxSteps)
	if opts.maxSteps > 0 {
		b = newBudget(opts.maxSteps)
	}
	v, err := (&refs{root: def, visited: map[string]bool{}, b: b}).eval(def, 0)
	if err != nil {
		return nil, err
	}
	resolved, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("the manifest's $ref names %s, not a mapping", typeName(v))
	}
	out, err := (&propagator{b: b}).component("", resolved, NewObject(), 0)
	if err != nil {
		return nil, err
	}
	if mig {
		now := time.Now
		if opts.Now != nil {
			now = opts.Now
		}
		out = migrate(out, now())
	}
	if norm {
		out = normalize(out)
	}
	return out, nil
}

// BuilderKeys takes the Builder's __should_normalize and __should_migrate out of m when they
// are true, as the CDK's manifest server does with every manifest it is sent, and says which
// were. A false one stays, and the manifest is invalid with it, as in the CDK.
func BuilderKeys(m *Object) (normalize, migrate bool) {
	if normalize = truthy(m.Value(shouldNormalize)); normalize {
		m.Pop(shouldNormalize)
	}
	if migrate = truthy(m.Value(shouldMigrate)); migrate {
		m.Pop(shouldMigrate)
	}
	return normalize, migrate
}

// Made are the streams of one dynamic stream definition, in the order of the definition's
// dynamic_streams: each is the list of edits its components_mapping makes to a copy of the
// stream template (pkg/dynamic computes them from the components).
type Made = [][]manifest.Edit

// DefaultStreamLimit is full_resolve's default stream_limit: the most streams kept of each
// dynamic stream definition.
const DefaultStreamLimit = 100

// Full completes a resolved manifest as full_resolve does: each stream of `streams` gets
// "dynamic_stream_name": null, and after them come the streams each dynamic stream
// definition makes, at most limit per definition name, each with the definition's name as
// its dynamic_stream_name. made holds the edits of each definition's streams, in order.
//
// As in the CDK, a requester of a components resolver's retriever gets "use_cache": true,
// and a name that two dynamic streams share is an error; the streams and the resolvers of
// resolved are changed in place, as the CDK changes its resolved manifest. redact masks the
// secrets of the config in the streams made (nil: none).
func Full(resolved *Object, made []Made, limit int, redact func(string) string) (*Object, error) {
	if limit <= 0 {
		limit = DefaultStreamLimit
	}
	out := resolved.shallow()
	streams := &List{Items: []any{}}
	if v, ok := out.Get("streams"); ok {
		l, ok := v.(*List)
		if !ok {
			return nil, fmt.Errorf("'streams' is a %s, not a list", typeName(v))
		}
		streams = l
	}
	for _, s := range streams.Items {
		o, ok := s.(*Object)
		if !ok {
			return nil, fmt.Errorf("'%s' object does not support item assignment", typeName(s))
		}
		o.Set("dynamic_stream_name", nil)
	}
	var defs []any
	if l, ok := out.Value("dynamic_streams").(*List); ok {
		defs = l.Items
	}
	seen := map[string]bool{}
	groups, order := map[string][]any{}, []string(nil)
	for i, d := range defs {
		dd, ok := d.(*Object)
		if !ok {
			return nil, fmt.Errorf("dynamic_streams[%d] is a %s, not a mapping", i, typeName(d))
		}
		if cr, ok := dd.Value("components_resolver").(*Object); ok {
			if r, ok := cr.Value("retriever").(*Object); ok {
				if req, ok := r.Value("requester").(*Object); ok {
					req.Set("use_cache", true)
				}
			}
		}
		if i >= len(made) {
			continue
		}
		tmpl, ok := dd.Value("stream_template").(*Object)
		if !ok {
			return nil, fmt.Errorf("dynamic_streams[%d].stream_template is not a mapping", i)
		}
		parentWins := true
		if v, ok := dd.Get("use_parent_parameters"); ok {
			parentWins = truthy(v)
		}
		var dynName any = fmt.Sprintf("dynamic_stream_%d", i)
		if v, ok := dd.Get("name"); ok {
			dynName = v
		}
		resolverType := ""
		if cr, ok := dd.Value("components_resolver").(*Object); ok {
			resolverType = pyStr(cr.Value("type"))
		}
		for _, edits := range made[i] {
			s, err := makeStream(tmpl, edits, parentWins)
			if err != nil {
				return nil, err
			}
			name := s.Value("name")
			s.Set("dynamic_stream_name", dynName)
			text, ok := name.(string)
			if !ok {
				return nil, cdkErrorf("Expected stream name %s to be a string, got <class '%s'>.", pyStr(name), typeName(name))
			}
			if seen[text] {
				why := "Please contact Airbyte Support."
				if resolverType == "ConfigComponentsResolver" {
					why = "Please check your configuration."
				}
				return nil, cdkErrorf("Dynamic streams list contains a duplicate name: %s. %s", text, why)
			}
			seen[text] = true
			if redact != nil {
				redactStrings(s, redact)
			}
			key := canonical(dynName)
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			if len(groups[key]) < limit {
				groups[key] = append(groups[key], s)
			}
		}
	}
	for _, k := range order {
		streams.Items = append(streams.Items, groups[k]...)
	}
	out.Set("streams", streams)
	return out, nil
}

// makeStream is one stream of a dynamic stream definition: a copy of its (resolved) template
// with the edits applied as dpath does, propagated again from the top.
func makeStream(tmpl *Object, edits []manifest.Edit, parentWins bool) (*Object, error) {
	s := deepCopy(tmpl).(*Object)
	for _, e := range edits {
		v := fromGo(e.Value)
		if dpathSet(s, e.Path, v) == 0 && e.Create && truthy(v) {
			if err := dpathNew(s, e.Path, v); err != nil {
				return nil, err
			}
		}
	}
	out, err := (&propagator{parentWins: parentWins, b: newBudget(maxSteps)}).component("", s, NewObject(), 0)
	if err != nil {
		return nil, err
	}
	if !out.Has("type") {
		out.Set("type", "DeclarativeStream")
	}
	return out, nil
}

// redactStrings masks secrets in every string of v, in place.
func redactStrings(v any, redact func(string) string) {
	switch x := v.(type) {
	case *Object:
		for _, k := range x.keys {
			if s, ok := x.vals[k].(string); ok {
				x.vals[k] = redact(s)
			} else {
				redactStrings(x.vals[k], redact)
			}
		}
	case *List:
		for i, item := range x.Items {
			if s, ok := item.(string); ok {
				x.Items[i] = redact(s)
			} else {
				redactStrings(item, redact)
			}
		}
	}
}

// fromGo makes a manifest value of a value a template gave. A Go map has no order: its keys
// are sorted.
func fromGo(v any) any {
	switch x := v.(type) {
	case nil, bool, string, Number, *Object, *List:
		return x
	case json.Number:
		return jsonNumber(string(x))
	case int:
		return Number{Text: strconv.Itoa(x)}
	case int64:
		return Number{Text: strconv.FormatInt(x, 10)}
	case float64:
		return floatNumber(x)
	case *big.Int:
		return intNumber(x)
	case []any:
		l := &List{Items: make([]any, len(x))}
		for i, e := range x {
			l.Items[i] = fromGo(e)
		}
		return l
	case map[string]any:
		o := NewObject()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o.Set(k, fromGo(x[k]))
		}
		return o
	case template.Mapping:
		o := NewObject()
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			o.Set(k, fromGo(e))
		}
		return o
	}
	if template.IsUndefined(v) {
		return nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return Number{Text: strconv.FormatInt(rv.Int(), 10)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Number{Text: strconv.FormatUint(rv.Uint(), 10)}
	case reflect.Float32:
		return floatNumber(rv.Float())
	case reflect.Slice:
		l := &List{Items: make([]any, rv.Len())}
		for i := range rv.Len() {
			l.Items[i] = fromGo(rv.Index(i).Interface())
		}
		return l
	}
	return template.ToString(v)
}

// dpathSet sets v at every place of n that path matches, as dpath.set does: each segment is
// a glob (fnmatch) over the keys of a mapping or the indexes of a list; a place must exist.
// It returns how many places were set.
func dpathSet(n any, path []string, v any) int {
	if len(path) == 0 {
		return 0
	}
	seg, rest := path[0], path[1:]
	count := 0
	at := func(set func(any), cur any) {
		if len(rest) == 0 {
			set(v)
			count++
			return
		}
		count += dpathSet(cur, rest, v)
	}
	switch x := n.(type) {
	case *Object:
		for _, k := range slices.Clone(x.keys) {
			if fnmatch(k, seg) {
				at(func(nv any) { x.vals[k] = nv }, x.vals[k])
			}
		}
	case *List:
		for i := range x.Items {
			if idx, err := strconv.Atoi(seg); err == nil {
				if idx != i {
					continue
				}
			} else if !fnmatch(strconv.Itoa(i), seg) {
				continue
			}
			at(func(nv any) { x.Items[i] = nv }, x.Items[i])
		}
	}
	return count
}

// dpathNew makes path in n and sets v at its end, as dpath.new does: a missing key becomes a
// list when the next segment is digits, else a mapping; a list is lengthened with nulls to
// reach an index. A path through a value that is neither fails, as it does in dpath.
func dpathNew(n any, path []string, v any) error {
	cur := n
	for i, seg := range path {
		last := i == len(path)-1
		switch x := cur.(type) {
		case *Object:
			if last {
				x.Set(seg, v)
				return nil
			}
			if !x.Has(seg) {
				x.Set(seg, newContainer(path[i+1]))
			}
			cur = x.Value(seg)
		case *List:
			if !isDigits(seg) {
				return fmt.Errorf("invalid literal for int() with base 10: '%s'", seg)
			}
			idx, err := strconv.Atoi(seg)
			if err != nil {
				return err
			}
			missing := idx >= len(x.Items)
			for len(x.Items) <= idx {
				x.Items = append(x.Items, nil)
			}
			if last {
				x.Items[idx] = v
				return nil
			}
			if missing {
				x.Items[idx] = newContainer(path[i+1])
			}
			cur = x.Items[idx]
		}
		switch cur.(type) {
		case *Object, *List:
		default:
			return cdkErrorf("Path: %s[%d]", pyList(path), i)
		}
	}
	return nil
}

func newContainer(next string) any {
	if isDigits(next) {
		return &List{Items: []any{}}
	}
	return NewObject()
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// pyList writes a list of strings as Python's repr does.
func pyList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = "'" + strings.ReplaceAll(x, "'", `\'`) + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// fnmatch is Python's fnmatch.fnmatchcase: * any text, ? one character, [seq] and [!seq].
func fnmatch(name, pattern string) bool {
	if !strings.ContainsAny(pattern, "*?[") {
		return name == pattern
	}
	re, err := regexp.Compile(translateGlob(pattern))
	return err == nil && re.MatchString(name)
}

func translateGlob(p string) string {
	var sb strings.Builder
	sb.WriteString(`(?s)^`)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			sb.WriteString(".*")
		case '?':
			sb.WriteString(".")
		case '[':
			j := i + 1
			if j < len(p) && p[j] == '!' {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				j++
			}
			if j >= len(p) {
				sb.WriteString(`\[`)
				continue
			}
			set := p[i+1 : j]
			if strings.HasPrefix(set, "!") {
				set = "^" + set[1:]
			} else if strings.HasPrefix(set, "^") {
				set = `\` + set
			}
			sb.WriteString("[" + strings.ReplaceAll(set, `\`, `\\`) + "]")
			i = j
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	sb.WriteString("$")
	return sb.String()
}
