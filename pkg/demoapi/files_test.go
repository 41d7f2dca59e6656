package demoapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The export and the attachments, as their routes serve them.
func TestFiles(t *testing.T) {
	srv := httptest.NewServer(New(Options{Records: 2}))
	defer srv.Close()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	const csv = "id,name,country,active,rating,city,postcode,note\n" +
		"1,Bea Lindqvist,SE,true,4.1,Uppsala,10037,NA\n" +
		"2,Cyril Moreau,FR,true,5.2,Lyon,10074,\"said \"\"hi\"\", then left\"\n"
	if resp, body := get("/v1/public/exports/authors.csv"); body != csv || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Errorf("export: %s %q", resp.Header.Get("Content-Type"), body)
	}
	resp, body := get("/v1/public/exports/authors.csv?gzip=true")
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil || resp.Header.Get("Content-Type") != "application/gzip" || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("gzip export: %v %v", err, resp.Header)
	}
	if b, _ := io.ReadAll(zr); string(b) != csv {
		t.Errorf("gzip export inflates to %q", b)
	}
	if _, body := get("/v1/public/attachments"); !strings.HasPrefix(body, `{"data":[{"id":1,"book_id":10,"file_name":"cover.txt","content_type":"text/plain","size":52,"content_url":"`+srv.URL+`/v1/public/attachments/1/content"}`) {
		t.Errorf("attachments: %s", body)
	}
	if resp, body := get("/v1/public/attachments/2/content"); !bytes.Equal([]byte(body), AttachmentContent(2)) || len(body) != 26624 || resp.Header.Get("Content-Length") != "26624" {
		t.Errorf("attachment 2: %d bytes", len(body))
	}
	if resp, _ := get("/v1/public/attachments/4/content"); resp.StatusCode != 404 {
		t.Errorf("attachment 4: %d", resp.StatusCode)
	}
	if resp, _ := get("/v1/bearer/attachments"); resp.StatusCode != 401 {
		t.Errorf("bearer area without a token: %d", resp.StatusCode)
	}
}
