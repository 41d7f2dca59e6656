package redact

import (
	"encoding/base64"
	"net/url"
	"testing"
)

func TestRedactorForms(t *testing.T) {
	var r Redactor
	r.Add("s3cr3t/+&=value", "ab")
	r.AddBasic("alice", "pw")
	basic := base64.StdEncoding.EncodeToString([]byte("alice:pw"))
	tests := []struct{ in, want string }{
		{"token s3cr3t/+&=value here", "token **** here"},
		{"GET /x?key=" + url.QueryEscape("s3cr3t/+&=value") + "&b=1", "GET /x?key=****&b=1"},
		{"Authorization: Basic " + basic, "Authorization: Basic ****"},
		{"b64 " + base64.StdEncoding.EncodeToString([]byte("s3cr3t/+&=value")), "b64 ****"},
		{"short ab stays", "short ab stays"},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactorLongestFirst(t *testing.T) {
	var r Redactor
	r.Add("abc", "abcdef")
	if got := r.String("x abcdef y abc"); got != "x **** y ****" {
		t.Fatalf("got %q", got)
	}
	var nilR *Redactor
	if nilR.String("abc") != "abc" {
		t.Fatal("nil redactor must pass text through")
	}
}
