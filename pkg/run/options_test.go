package run

import (
	"reflect"
	"testing"

	"connector/pkg/auth"
	"connector/pkg/paginate"
)

// Every field of Options is either inherited by a helper stream's read or deliberately
// reset: a new field fails this test until helper() decides for it.
func TestHelperOptions(t *testing.T) {
	inherited := map[string]bool{
		"Config": true, "Auth": true, "Client": true, "Observer": true, "FailFast": true,
		"Now": true, "TemplateNow": true, "ShowRecords": true, "strategy": true, "jobs": true, "AuthFor": true,
		"TestRead": true, "Cached": true,
	}
	reset := map[string]any{
		"Out": nil, "Warn": nil, "MaxSlices": 0, "MaxPages": 0, "MaxRecords": 0,
		"Prefetch": 1, "Overlap": false, "StateOf": nil, "Checkpoint": nil, "Files": nil,
	}
	var o Options
	v := reflect.ValueOf(&o).Elem()
	typ := v.Type()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		_, r := reset[name]
		if inherited[name] == r {
			t.Errorf("Options.%s: helper() must either inherit it or reset it (and this test must say which)", name)
		}
		// Every field non-zero, so that a reset and an inheritance can be told apart.
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int:
			f.SetInt(7)
		case reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Func:
			f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { panic("not called") }))
		case reflect.Interface:
			if !reflect.TypeFor[*everything]().Implements(f.Type()) {
				t.Fatalf("Options.%s: the test's everything type does not implement %s", name, f.Type())
			}
			f.Set(reflect.ValueOf(&everything{}))
		default:
			t.Fatalf("Options.%s: the test cannot fill a %s", name, f.Kind())
		}
	}
	h := reflect.ValueOf(o.helper()).Elem()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		got := h.Field(i)
		got = reflect.NewAt(got.Type(), got.Addr().UnsafePointer()).Elem()
		want := v.Field(i)
		want = reflect.NewAt(want.Type(), want.Addr().UnsafePointer()).Elem()
		if inherited[name] {
			if !same(got, want) {
				t.Errorf("Options.%s is not inherited by helper()", name)
			}
			continue
		}
		if w, ok := reset[name]; ok {
			if w == nil {
				if !got.IsNil() {
					t.Errorf("Options.%s is not reset by helper()", name)
				}
			} else if !reflect.DeepEqual(got.Interface(), w) {
				t.Errorf("Options.%s = %v after helper(), want %v", name, got.Interface(), w)
			}
		}
	}
}

// everything implements each interface of Options (its methods are never called).
type everything struct {
	auth.Authenticator
	Emitter
	Observer
	paginate.Strategy
}

// same compares two field values as identities where they are references.
func same(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Func:
		return a.Pointer() == b.Pointer()
	case reflect.Interface:
		return a.Interface() == b.Interface()
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}
