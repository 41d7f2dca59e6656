package manifest

import (
	"strings"
	"testing"
)

// ResponseToFileExtractor becomes the stream's decoder (the retriever's own decoder serves
// the paginator alone), in a SimpleRetriever and as an AsyncRetriever's download_extractor.
func TestResponseToFileExtractor(t *testing.T) {
	src := `version: 6.5.0
streams:
  - name: s
    retriever:
      requester: {url_base: "https://x.test", path: /export.csv}
      record_selector: {extractor: {type: ResponseToFileExtractor, preserve_na_values: true}}
  - name: j
    retriever:
      type: AsyncRetriever
      creation_requester: {url_base: "https://x.test", path: /jobs, http_method: POST}
      polling_requester: {url_base: "https://x.test", path: "/jobs/{{ creation_response.id }}"}
      download_requester: {url_base: "https://x.test", path: "/files"}
      status_extractor: {type: DpathExtractor, field_path: [status]}
      status_mapping: {running: [a], completed: [b], failed: [], timeout: []}
      download_decoder: {type: JsonlDecoder}
      download_extractor: {type: ResponseToFileExtractor, preseve_na_values: true}
      record_selector: {extractor: {field_path: []}}
`
	def, diags := Parse("d.yaml", []byte(src))
	var got []string
	for _, d := range diags {
		got = append(got, string(d.Severity)+" "+d.Code+": "+d.Message)
	}
	if want := "warning unknown-field: unknown field `preseve_na_values` in ResponseToFileExtractor; it is ignored"; strings.Join(got, "\n") != want {
		t.Fatalf("diagnostics %q, want %q", got, want)
	}
	s := def.Stream("s")
	if s.Decoder == nil || s.Decoder.Type != ResponseToFile || !s.Decoder.PreserveNA || len(s.Selector.FieldPath) != 0 {
		t.Errorf("stream s: decoder %+v", s.Decoder)
	}
	j := def.Stream("j").DownloadView()
	if j.Decoder == nil || j.Decoder.Type != ResponseToFile || j.Decoder.PreserveNA {
		t.Errorf("stream j: download decoder %+v", j.Decoder)
	}
}

// A file_uploader is read with its requester (download_target a variable), its target path
// and its file name; what the CDK requires is required, its file_extractor is a warning
// (never read), and Python in it is refused.
func TestFileUploader(t *testing.T) {
	stream := func(uploader string) string {
		return `version: 6.5.0
streams:
  - name: s
    retriever:
      requester: {url_base: "https://x.test", path: /files}
      record_selector: {extractor: {field_path: [data]}}
    file_uploader: ` + uploader + "\n"
	}
	for _, tt := range []struct{ src, want string }{
		{stream(`{type: FileUploader, requester: {url_base: "{{ download_target }}"}, download_target_extractor: {field_path: [url]}, filename_extractor: "{{ record.id }}/{{ config.x }}"}`), ""},
		{stream(`{type: FileUploader, requester: {url_base: "{{ download_target }}"}, download_target_extractor: {field_path: [url]}, file_extractor: {type: DpathExtractor, field_path: [x]}}`),
			"warning unsupported-component: `file_extractor` is not applied: the file is the whole response body, as in the Airbyte CDK, whose factory ignores it"},
		{stream(`{type: FileUploader, requester: {url_base: "{{ download_target }}"}}`),
			"error missing-field: FileUploader is missing the required field `download_target_extractor`"},
		{stream(`{type: FileUploader, requester: {url_base: "https://x.test"}, download_target_extractor: {field_path: [url]}, filename_extractor: "{{ stream_slice.x }}"}`),
			"error template: in `filename_extractor`: unknown variable `stream_slice`"},
		{stream(`{type: FileUploader, requester: {url_base: "https://x.test"}, download_target_extractor: {type: CustomRecordExtractor, class_name: a.B}}`),
			"error python-component: CustomRecordExtractor runs Python code (download_target_extractor)"},
	} {
		def, diags := Parse("d.yaml", []byte(tt.src))
		var got []string
		for _, d := range diags {
			got = append(got, string(d.Severity)+" "+d.Code+": "+d.Message)
		}
		if strings.Join(got, "\n") != tt.want {
			t.Errorf("%s\ngot  %q\nwant %q", tt.src, got, tt.want)
		}
		if tt.want == "" {
			f := def.Stream("s").Files
			if f == nil || f.Requester == nil || len(f.TargetPath) != 1 || f.Filename == nil {
				t.Errorf("file uploader %+v", f)
			}
		}
	}
}
