package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PropertiesFromEndpoint checked against the Airbyte CDK 7.28.2: testdata/
// properties-from-endpoint/definition.yaml was run through the CDK (run-cdk read
// --concurrency 1) against logserver.py answering the routes below; the requests and
// records are what it sent and emitted. The property list is read once per stream, before
// the first request of the first slice (not again for the second partition), with its own
// pagination and record_filter; each record's value at property_field_path (templates with
// config and parameters) is written as Python's str() writes it: 5, 1.5, True, None, []
// for a missing value, {'a': 1, 'b': 'x'}, 1e+20, 12345678901234567890. The names are then
// chunked (always_include_properties first) as a static property_list. The requester's
// fetch_properties_from_endpoint is read by templates as extra_fields.query_properties.
var propertiesFromEndpointRoutes = []resetRoute{
	{path: "/properties/contacts", want: map[string]string{"archived": "false", "after": ""},
		body: `{"next":"P2","results":[{"meta":{"name":"email"}},{"meta":{"name":"secret"},"hidden":true},{"meta":{"name":5}},{"meta":{"name":1.5}},{"meta":{"name":true}}]}`},
	{path: "/properties/contacts", want: map[string]string{"archived": "false", "after": "P2"},
		body: `{"next":null,"results":[{"meta":{"name":null}},{"meta":{}},{"meta":{"name":{"a":1,"b":"x"}}},{"meta":{"name":["u","v"]}},{"meta":{"name":"last name"}}]}`},
	{path: "/contacts", body: `{"data":[{"id":"1","email":"e"}]}`},
	{path: "/properties/deals",
		body: `{"data":[{"name":"amount"},{"name":"stage"},{"name":"1e20"},{"name":1e20},{"name":0.0001},{"name":12345678901234567890}]}`},
	{path: "/deals", body: `{"data":[{"id":"d1","amount":3}]}`},
}

func TestPropertiesFromEndpointAsTheCDK(t *testing.T) {
	def, err := os.ReadFile(filepath.Join("testdata", "properties-from-endpoint", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	contacts := func(region string) []string {
		return []string{
			"/contacts?region=" + region + "&properties=id%2Cemail%2C5%2C1.5",
			"/contacts?region=" + region + "&properties=id%2CTrue%2CNone%2C%5B%5D",
			"/contacts?region=" + region + "&properties=id%2C%7B%27a%27%3A+1%2C+%27b%27%3A+%27x%27%7D%2C%5B%27u%27%2C+%27v%27%5D%2Clast+name",
		}
	}
	tests := []struct {
		name   string
		args   []string
		urls   []string
		stdout string
	}{{
		name: "QueryProperties property_list read once for two partitions",
		args: []string{"--stream", "contacts"},
		urls: append(append([]string{"/properties/contacts?archived=false", "/properties/contacts?archived=false&after=P2"},
			contacts("eu")...), contacts("us")...),
		stdout: `{"id":"1","email":"e"}` + "\n" + `{"id":"1","email":"e"}` + "\n",
	}, {
		name:   "fetch_properties_from_endpoint, numbers as Python writes them",
		args:   []string{"--stream", "deals"},
		urls:   []string{"/properties/deals", "/deals?props=amount%7Cstage%7C1e20%7C1e%2B20%7C0.0001%7C12345678901234567890"},
		stdout: `{"id":"d1","amount":3}` + "\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := resetAPI(t, propertiesFromEndpointRoutes)
			res := e2eRead(t, api, string(def), "name_field: name\n", tt.args...)
			var want []e2eRequest
			for _, u := range tt.urls {
				want = append(want, e2eRequest{Method: "GET", URL: u})
			}
			e2eCheckRequests(t, api, want...)
			e2eCheckResult(t, api, res, 0, tt.stdout, "")
		})
	}
}

func TestPropertiesFromEndpointTrace(t *testing.T) {
	def, err := os.ReadFile(filepath.Join("testdata", "properties-from-endpoint", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	api := resetAPI(t, propertiesFromEndpointRoutes)
	defPath := writeFile(t, "def.yaml", string(def))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nname_field: name\n")
	res := runCLI(t, "", "paginate-trace", defPath, "--testing-values", vals, "--stream", "deals")
	out := e2eScrub(res.Stderr+res.Stdout, api)
	for _, want := range []string{
		"  properties stream dynamic_properties, read for the property names of deals (PropertiesFromEndpoint; NoPagination)\n" +
			"  → GET http://API/properties/deals (data)\n",
		"  dynamic_properties (properties of deals): 1 page, 6 records read for property names\n" +
			"  → GET http://API/deals?props=amount%7Cstage%7C1e20%7C1e%2B20%7C0.0001%7C12345678901234567890 (data)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the trace lacks\n%s\nin\n%s", want, out)
		}
	}
}
