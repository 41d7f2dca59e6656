package httpx

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
)

// countingSigner signs each attempt with its number and notes every response it hears.
type countingSigner struct {
	attempts int
	heard    []string
	rotates  bool
}

func (s *countingSigner) Sign(_ context.Context, req *Request) error {
	s.attempts++
	req.Header.Set("X-Attempt", fmt.Sprint(s.attempts))
	return nil
}

func (s *countingSigner) Update(req *Request, status int, _ http.Header) {
	s.heard = append(s.heard, fmt.Sprintf("%s %d", req.Header.Get("X-Attempt"), status))
}

func (s *countingSigner) Rotates(*Request) bool { return s.rotates }

// A request with a Signer is signed before every attempt, the signer hears every response,
// and a 429 it can rotate away from is retried after RotationWait instead of Retry-After.
func TestSignerSignsEveryAttempt(t *testing.T) {
	for _, rotates := range []bool{true, false} {
		var got []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = append(got, r.Header.Get("X-Attempt"))
			if len(got) == 1 {
				w.Header().Set("Retry-After", "30")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			fmt.Fprint(w, `{}`)
		}))
		var slept []time.Duration
		c := &Client{HTTP: srv.Client(), Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
		s := &countingSigner{rotates: rotates}
		if _, err := c.Do(context.Background(), &Request{Kind: "data", Method: "GET", URL: srv.URL, Header: http.Header{}, Signer: s}); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		wait := 30 * time.Second
		if rotates {
			wait = RotationWait
		}
		if !reflect.DeepEqual(got, []string{"1", "2"}) || !reflect.DeepEqual(s.heard, []string{"1 429", "2 200"}) || !reflect.DeepEqual(slept, []time.Duration{wait}) {
			t.Errorf("rotates %v: attempts %q, heard %q, slept %v (want a wait of %s)", rotates, got, s.heard, slept, wait)
		}
	}
}
