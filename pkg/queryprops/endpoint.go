package queryprops

import (
	"errors"
	"path"
	"strconv"

	"connector/pkg/normalize"
	"connector/pkg/record"
)

// errManyLeaves is dpath's error for a glob that matches more than one value.
var errManyLeaves = errors.New("property_field_path matches more than one value of the record (dpath: globs must match only one leaf)")

// Property is the property name a PropertiesFromEndpoint takes from one record: the value at
// fieldPath, found as the CDK's dpath.get finds it (a segment matches a key equal to it or
// matched by it as a glob, and indexes a list, from the end when negative), written as
// Python's str() writes it. A path that leads nowhere gives "[]", the str() of dpath's
// default; an empty path gives the whole record.
func Property(rec any, fieldPath []string) (string, error) {
	var found []any
	collect(rec, fieldPath, &found)
	switch len(found) {
	case 0:
		return "[]", nil
	case 1:
		return normalize.Str(found[0]), nil
	}
	return "", errManyLeaves
}

func collect(v any, segs []string, found *[]any) {
	if len(segs) == 0 {
		*found = append(*found, v)
		return
	}
	seg, rest := segs[0], segs[1:]
	switch x := v.(type) {
	case *record.Object:
		for _, k := range x.Keys() {
			if matches(seg, k) {
				e, _ := x.Get(k)
				collect(e, rest, found)
			}
		}
	case []any:
		if i, err := strconv.Atoi(seg); err == nil {
			if i < 0 {
				i += len(x)
			}
			if i >= 0 && i < len(x) {
				collect(x[i], rest, found)
			}
			return
		}
		for i, e := range x {
			if matches(seg, strconv.Itoa(i)) {
				collect(e, rest, found)
			}
		}
	}
}

func matches(glob, key string) bool {
	if glob == key {
		return true
	}
	ok, err := path.Match(glob, key)
	return ok && err == nil
}
