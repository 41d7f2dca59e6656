package request

import (
	"net/http"
	"os"
	"reflect"
	"testing"
)

// TestRequestOptionsOnMissingValuesAreTheCDKs: in request parameters and a JSON body, an
// undefined value used as a number gives None, and the entry is dropped; text plus a number
// (a TypeError) gives the template's own text. The parameters and body are those of the
// CDK's InterpolatedRequestOptionsProvider for the same mapping and config
// (testdata/cdk-undefined/request_params.out; "3" is a number in our query, spelled alike).
func TestRequestOptionsOnMissingValuesAreTheCDKs(t *testing.T) {
	cdk, err := os.ReadFile("testdata/cdk-undefined/request_params.out")
	if err != nil {
		t.Fatal(err)
	}
	const wantCDK = `{"request_parameters": {"text_plus_one": "{{ config['s'] + 1 }}", "n_plus_one": "3", "plain": "ok"}, "request_body_json": {"text_plus_one": "{{ config['s'] + 1 }}", "n_plus_one": 3, "plain": "ok"}}` + "\n"
	if string(cdk) != wantCDK {
		t.Fatalf("the CDK's output changed: %s", cdk)
	}
	mapping := `
          missing_plus_one: "{{ config['missing'] + 1 }}"
          text_plus_one: "{{ config['s'] + 1 }}"
          n_plus_one: "{{ config['n'] + 1 }}"
          plain: ok`
	r := requester(t, `        url_base: https://api.test
        path: /items
        http_method: POST
        request_parameters:`+mapping+`
        request_body_json:`+mapping)
	vars := map[string]any{"config": map[string]any{"s": "t", "n": int64(2)}}
	b, err := FromRequester("data", r, NewScope(vars, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := built{Method: "POST",
		URL:    "https://api.test/items?text_plus_one=%7B%7B+config%5B%27s%27%5D+%2B+1+%7D%7D&n_plus_one=3&plain=ok",
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   `{"text_plus_one":"{{ config['s'] + 1 }}","n_plus_one":3,"plain":"ok"}`}
	if got := build(t, b); !reflect.DeepEqual(got, want) {
		t.Errorf("built\n%+v\nwant\n%+v", got, want)
	}
}
