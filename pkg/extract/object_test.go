package extract

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"connector/pkg/template"
)

// decoded is body decoded by encoding/json, numbers kept as json.Number.
func decoded(t testing.TB, body string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// materialize turns an *Object into the map it stands for, through Keys and Get.
func materialize(o *Object) map[string]any {
	m := map[string]any{}
	for _, k := range o.Keys() {
		v, ok := o.Get(k)
		if !ok {
			panic("Keys lists " + k + " but Get does not find it")
		}
		m[k] = v
	}
	return m
}

func TestLazyBody(t *testing.T) {
	bodies := []string{
		`{}`,
		` { } `,
		`{"data":[{"id":1},{"id":2}],"next":"c2","meta":{"total":2,"pages":[1,2]}}`,
		"{\n  \"next\" : null ,\n  \"data\" : [ ] ,\n  \"n\" : -1.5e3\n}",
		`{"a":1,"a":2,"b":true}`,
		`{"k\u00e9y":"v","esc\"aped":"x\ny","z":false,"y":"` + strings.Repeat("[", 0) + `"}`,
		`{"deep":` + strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100) + `,"after":1}`,
	}
	for _, body := range bodies {
		p, err := Parse([]byte(body), []string{"data"}, Want{Body: true, LazyBody: true})
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		o, ok := p.Body.(*Object)
		if !ok {
			t.Fatalf("%s: body is %T, want *Object", body, p.Body)
		}
		if got, want := materialize(o), decoded(t, body); !reflect.DeepEqual(any(got), want) {
			t.Errorf("%s: lazy body %#v, want %#v", body, got, want)
		}
	}
}

func TestLazyBodyKeysSortedAndValuesKept(t *testing.T) {
	p, err := Parse([]byte(`{"b":{"x":1},"c":[1],"a":"s"}`), nil, Want{Body: true, LazyBody: true})
	if err != nil {
		t.Fatal(err)
	}
	o := p.Body.(*Object)
	if got := o.Keys(); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("keys %q, want a b c", got)
	}
	if _, ok := o.Get("nope"); ok {
		t.Error("Get found a missing key")
	}
	v, _ := o.Get("b")
	v.(map[string]any)["x"] = "changed"
	again, _ := o.Get("b")
	if again.(map[string]any)["x"] != "changed" {
		t.Error("a value changed through Get is decoded afresh on the next Get")
	}
}

// A body that is not an object is decoded whole, as without LazyBody.
func TestLazyBodyOnlyForObjects(t *testing.T) {
	p, err := Parse([]byte(`[{"id":1}]`), nil, Want{Body: true, LazyBody: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := decoded(t, `[{"id":1}]`); !reflect.DeepEqual(p.Body, want) {
		t.Errorf("body %#v, want %#v", p.Body, want)
	}
}

// A template can copy the lazily decoded body like a plain decoded one.
func TestLazyBodyCopyInTemplates(t *testing.T) {
	page, err := Parse([]byte(`{"b":{"x":1},"a":[1,2]}`), []string{"a"}, Want{Body: true, LazyBody: true})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Compile(`{{ response.copy() | tojson }}`, []string{"response"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render(map[string]any{"response": page.Body})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a": [1, 2], "b": {"x": 1}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// A record nested deeper than skip follows is scanned by the parser; its inner objects are
// not members of the body's object.
func TestLazyBodyWithADeepRecord(t *testing.T) {
	body := `{"data":[` + strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100) + `],"next":"c2"}`
	p, err := Parse([]byte(body), []string{"data"}, Want{Body: true, LazyBody: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Body.(*Object).Keys(); !reflect.DeepEqual(got, []string{"data", "next"}) {
		t.Errorf("keys %q, want data next", got)
	}
	if got, want := materialize(p.Body.(*Object)), decoded(t, body); !reflect.DeepEqual(any(got), want) {
		t.Error("the lazy body differs from the decoded one")
	}
}
