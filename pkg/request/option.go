package request

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/template"
)

// Option is a RequestOption with its field name rendered: the one place in a request where
// an authenticator puts its key or a paginator its token or page size.
type Option struct {
	Place string   // one of the manifest.Inject* constants
	Name  string   // header, query parameter or form field name, or top-level JSON property
	Path  []string // nested JSON property (body_json with field_path)
}

// NewOption renders the field name or path of o with vars; a nil o gives a nil Option.
func NewOption(o *manifest.RequestOption, vars map[string]any) (*Option, error) {
	if o == nil {
		return nil, nil
	}
	out := &Option{Place: o.InjectInto}
	if o.FieldName != nil {
		s, err := o.FieldName.Render(vars)
		if err != nil {
			return nil, fmt.Errorf("field_name: %w", err)
		}
		out.Name = s
	}
	for _, seg := range o.FieldPath {
		s, err := seg.Render(vars)
		if err != nil {
			return nil, fmt.Errorf("field_path: %w", err)
		}
		out.Path = append(out.Path, s)
	}
	return out, nil
}

// Inject puts value into b at the option's place: as text in a header, a query parameter
// or a form field, as the value itself in a JSON body. source names the setter in conflict
// errors.
func (o *Option) Inject(b *Builder, value any, source string) error {
	switch o.Place {
	case manifest.InjectHeader:
		return b.SetHeader(o.Name, template.ToString(value), source)
	case manifest.InjectParameter:
		return b.SetParam(o.Name, []string{template.ToString(value)}, source)
	case manifest.InjectBodyData:
		return b.SetForm(o.Name, []string{template.ToString(value)}, source)
	case manifest.InjectBodyJSON:
		return b.SetJSON(o.jsonPath(), value, source)
	}
	return fmt.Errorf("%s cannot inject into %q", source, o.Place)
}

// SameTarget says whether o and other put their values in the same place: the same
// header (case aside), query parameter, form field or JSON body property.
func (o *Option) SameTarget(other *Option) bool {
	if o == nil || other == nil || o.Place != other.Place || o.Place == manifest.InjectPath {
		return false
	}
	if o.Place == manifest.InjectHeader {
		return strings.EqualFold(o.Name, other.Name)
	}
	return slices.Equal(o.jsonPath(), other.jsonPath())
}

// jsonPath is the option's name as a path of one element, or its nested path.
func (o *Option) jsonPath() []string {
	if len(o.Path) > 0 {
		return o.Path
	}
	return []string{o.Name}
}

// String says where the option puts its value, for traces: `query parameter "offset"`.
func (o *Option) String() string {
	switch o.Place {
	case manifest.InjectParameter:
		return "query parameter " + strconv.Quote(o.Name)
	case manifest.InjectHeader:
		return "header " + strconv.Quote(o.Name)
	case manifest.InjectBodyData:
		return "form field " + strconv.Quote(o.Name)
	case manifest.InjectBodyJSON:
		name := o.Name
		if len(o.Path) > 0 {
			name = strings.Join(o.Path, ".")
		}
		return "JSON body property " + strconv.Quote(name)
	case manifest.InjectPath:
		return "the whole URL (RequestPath)"
	}
	return o.Place + " " + strconv.Quote(o.Name)
}
