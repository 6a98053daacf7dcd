package httploop

import (
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
)

const okBody = `{"model_name":"null"}` + "\x00\x01\x02\x03"

func okResponse(extra string) string {
	return "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nInference-Header-Content-Length: 21\r\n" + extra +
		"Content-Length: 25\r\n\r\n" + okBody
}

// parseAll feeds s to a fresh parser in pieces of size step (0: whole) and
// returns the parser, whether it completed, the bytes left over and the
// check's error.
func parseAll(t *testing.T, s string, step int, eof bool) (*response, bool, int, error) {
	t.Helper()
	r := response{limit: 1 << 30, budget: httpclient.NewBudget(1 << 40)}
	r.reset()
	b := []byte(s)
	if step <= 0 {
		step = len(b)
	}
	for len(b) > 0 {
		n := min(step, len(b))
		used, done, err := r.feed(b[:n])
		if err != nil {
			return &r, false, 0, err
		}
		b = b[used:]
		if done {
			return &r, true, len(b), r.check(nil, 0)
		}
	}
	if eof {
		done, err := r.eof()
		if err != nil {
			return &r, false, 0, err
		}
		return &r, done, 0, r.check(nil, 0)
	}
	return &r, false, 0, nil
}

func TestResponseFramings(t *testing.T) {
	chunked := "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: 21\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5;ext=1\r\n{\"mod\r\n14\r\nel_name\":\"null\"}\x00\x01\x02\x03\r\n0\r\nX-Trailer: 1\r\n\r\n"
	cases := []struct {
		name      string
		in        string
		eof       bool
		closeConn bool
		bodyLen   int64
		leftover  int
	}{
		{"content-length", okResponse(""), false, false, 25, 0},
		{"connection close", okResponse("Connection: close\r\n"), false, true, 25, 0},
		{"bytes after the answer", okResponse("") + "HTTP", false, false, 25, 4},
		{"chunked", chunked, false, false, 25, 0},
		{"until close", "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: 21\r\n\r\n" + okBody, true, true, 25, 0},
		{"interim 100 first", "HTTP/1.1 100 Continue\r\n\r\n" + okResponse(""), false, false, 25, 0},
		{"HTTP/1.0 closes", "HTTP/1.0 200 OK\r\nInference-Header-Content-Length: 21\r\nContent-Length: 25\r\n\r\n" + okBody, false, true, 25, 0},
		{"bare LF lines", "HTTP/1.1 200 OK\nInference-Header-Content-Length: 21\nContent-Length: 25\n\n" + okBody, false, false, 25, 0},
	}
	for _, tc := range cases {
		for _, step := range []int{0, 1, 7} {
			r, done, left, err := parseAll(t, tc.in, step, tc.eof)
			if err != nil || !done {
				t.Fatalf("%s (step %d): done %v, err %v", tc.name, step, done, err)
			}
			if r.bodyLen != tc.bodyLen || r.closeConn != tc.closeConn || left != tc.leftover {
				t.Errorf("%s (step %d): body %d close %v leftover %d; want %d %v %d", tc.name, step,
					r.bodyLen, r.closeConn, left, tc.bodyLen, tc.closeConn, tc.leftover)
			}
		}
	}
}

// TestResponseKeepsTheJSONForTheCheck: a 2xx answer's JSON, the header of a
// binary-extension body or a whole JSON body, reaches the answer check
// whatever its framing and however it arrived, and the check's error is the
// request's.
func TestResponseKeepsTheJSONForTheCheck(t *testing.T) {
	const jsonBody = `{"model_name":"null","outputs":[]}`
	cases := []struct {
		name, in, want string
		eof            bool
	}{
		{"binary, content-length", okResponse(""), `{"model_name":"null"}`, false},
		{"binary, chunked", "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: 21\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5\r\n{\"mod\r\n14\r\nel_name\":\"null\"}\x00\x01\x02\x03\r\n0\r\n\r\n", `{"model_name":"null"}`, false},
		{"binary, until close", "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: 21\r\n\r\n" + okBody, `{"model_name":"null"}`, true},
		{"JSON body", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 34\r\n\r\n" + jsonBody, jsonBody, false},
		{"JSON body, chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n" + jsonBody[:16] + "\r\n12\r\n" + jsonBody[16:] + "\r\n0\r\n\r\n", jsonBody, false},
	}
	errBad := errors.New("bad")
	for _, tc := range cases {
		for _, step := range []int{0, 1, 7} {
			r, done, _, err := parseAll(t, tc.in, step, tc.eof)
			if err != nil || !done {
				t.Fatalf("%s (step %d): done %v, err %v", tc.name, step, done, err)
			}
			var got string
			err = r.check(func(tag uint64, json []byte, _ int64) error {
				if tag != 7 {
					t.Errorf("tag %d, want 7", tag)
				}
				got = string(json)
				return errBad
			}, 7)
			if got != tc.want || err != errBad {
				t.Errorf("%s (step %d): the check saw %q and the answer failed with %v; want %q and its error", tc.name, step, got, err, tc.want)
			}
		}
	}
	// An answer that failed before the check is not checked.
	r, _, _, _ := parseAll(t, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy", 0, false)
	if err := r.check(func(uint64, []byte, int64) error { t.Error("a 503 was checked"); return nil }, 1); !errors.Is(err, kserve.ErrUnavailable) {
		t.Errorf("503: %v", err)
	}
}

func TestResponseErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		eof  bool
		want error
	}{
		{"404 with a JSON error", "HTTP/1.1 404 Not Found\r\nContent-Length: 25\r\n\r\n{\"error\":\"no such model\"}", false, kserve.ErrNotFound},
		{"503", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy", false, kserve.ErrUnavailable},
		{"empty body", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false, kserve.ErrMalformed},
		{"not JSON", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnope", false, kserve.ErrMalformed},
		{"JSON length past the body", "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: 99\r\nContent-Length: 2\r\n\r\n{}", false, kserve.ErrMalformed},
		{"JSON length zero", "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: 0\r\nContent-Length: 2\r\n\r\n{}", false, kserve.ErrMalformed},
		{"bad JSON length", "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: x\r\nContent-Length: 2\r\n\r\n{}", false, kserve.ErrMalformed},
		{"bad status line", "HTTP/2 200\r\n\r\n", false, kserve.ErrMalformed},
		{"bad content length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, kserve.ErrMalformed},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, kserve.ErrMalformed},
		{"unsupported coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, kserve.ErrMalformed},
		{"cut short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", true, kserve.ErrTransport},
		{"nothing at all", "", true, errNoResponse},
	}
	for _, tc := range cases {
		_, _, _, err := parseAll(t, tc.in, 3, tc.eof)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestResponseErrorMessage(t *testing.T) {
	_, _, _, err := parseAll(t, "HTTP/1.1 400 Bad Request\r\nContent-Length: 17\r\n\r\n{\"error\":\"shape\"}", 0, false)
	var ke *kserve.Error
	if !errors.As(err, &ke) || ke.HTTPStatus != 400 || ke.Message != "shape" {
		t.Fatalf("error %#v, want HTTP 400 with message \"shape\"", err)
	}
}

func TestResponseHeaderTooLarge(t *testing.T) {
	var r response
	r.reset()
	chunk := make([]byte, 4096)
	for i := range chunk {
		chunk[i] = 'a'
	}
	_, _, _ = r.feed([]byte("HTTP/1.1 200 OK\r\nX: "))
	var err error
	for i := 0; i < 20 && err == nil; i++ {
		_, _, err = r.feed(chunk)
	}
	if !errors.Is(err, kserve.ErrMalformed) {
		t.Fatalf("error %v after a 80 KiB header, want ErrMalformed", err)
	}
}
