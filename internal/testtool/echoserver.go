package testtool

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// EchoServer is a hostile KServe v2 HTTP/1.1 server on loopback that
// repeats the credentials it is sent: servers and proxies quote a request's
// Authorization or x-api-key in their error bodies. It is a raw
// net.Listener writing each answer byte for byte: the probe's requests get
// a model "m" (one FP32 input and output of shape [4]) from a server whose
// name repeats the first echoed header, unless FailAll;
// every inference (and, with FailAll, every request) gets Status with
// EchoBody of the request's headers; GET /v1/models, an OpenAI model
// list, lists the echoed credentials as its models.
type EchoServer struct {
	Addr string
	// Status is the inference's answer (500, 401, ...); FailAll answers
	// every request with it, the probe's too.
	Status  int
	FailAll bool
	// Echoed are the header names whose values the bodies repeat.
	Echoed []string

	mu    sync.Mutex
	conns []net.Conn
}

// StartEchoServer listens on a free loopback port until the test ends.
func StartEchoServer(t testing.TB, status int, failAll bool, echoed ...string) *EchoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &EchoServer{Addr: ln.Addr().String(), Status: status, FailAll: failAll, Echoed: echoed}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	})
	return s
}

func (s *EchoServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		if _, err := io.WriteString(c, s.answer(req)); err != nil {
			return
		}
	}
}

const (
	echoModelMeta = `{"name":"m","versions":["1"],"platform":"echo","inputs":[{"name":"IN","datatype":"FP32","shape":[4]}],"outputs":[{"name":"OUT","datatype":"FP32","shape":[4]}]}`
)

// answer is the raw response to req.
func (s *EchoServer) answer(req *http.Request) string {
	p := req.URL.Path
	switch {
	case p == "/v1/models":
		var ids []string
		for _, name := range s.Echoed {
			ids = append(ids, fmt.Sprintf(`{"id":%q}`, req.Header.Get(name)))
		}
		return rawAnswer(200, "application/json", `{"object":"list","data":[`+strings.Join(ids, ",")+`]}`)
	case s.FailAll || strings.HasSuffix(p, "/infer"):
		return rawAnswer(s.Status, "application/json", EchoBody(req.Header, s.Echoed))
	case p == "/v2/health/live" || p == "/v2/health/ready" || p == "/v2/models/m/ready":
		return rawAnswer(200, "text/plain", "")
	case p == "/v2":
		// A server's name may quote what it was sent too.
		name := "echo"
		if len(s.Echoed) > 0 {
			name += " " + req.Header.Get(s.Echoed[0])
		}
		return rawAnswer(200, "application/json", fmt.Sprintf(`{"name":%q,"version":"1","extensions":[]}`, name))
	case p == "/v2/models/m":
		return rawAnswer(200, "application/json", echoModelMeta)
	}
	return rawAnswer(404, "application/json", `{"error":"not found"}`)
}

func rawAnswer(status int, ctype, body string) string {
	return fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", status, http.StatusText(status), ctype, len(body), body)
}

// EchoBody is an error body, not of KServe's {"error": "..."} shape (so a
// client quotes it whole), that repeats the named headers' values: as
// sent, in standard base64, the credential of a "Scheme credential" value
// in URL-safe base64 without padding, and JSON-escaped as servers escape
// (/ as \/, every other non-alphanumeric as \u00XX).
func EchoBody(h http.Header, names []string) string {
	var raw, b64, esc []string
	for _, name := range names {
		v := h.Get(name)
		raw = append(raw, v)
		b64 = append(b64, base64.StdEncoding.EncodeToString([]byte(v)))
		if _, cred, ok := strings.Cut(v, " "); ok {
			b64 = append(b64, base64.RawURLEncoding.EncodeToString([]byte(cred)))
		}
		esc = append(esc, fmt.Sprintf(`"%s":"%s"`, name, JSONEscapeAll(v)))
	}
	return fmt.Sprintf(`{"detail":"credentials rejected: %s","b64":"%s","headers":{%s}}`,
		strings.Join(raw, " | "), strings.Join(b64, " "), strings.Join(esc, ","))
}

// JSONEscapeAll escapes s as a JSON string's contents the way some
// encoders do: / as \/, every other byte that is not a letter or digit as
// \u00XX.
func JSONEscapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '/':
			b.WriteString(`\/`)
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\u%04X`, c)
		}
	}
	return b.String()
}

// SecretForms are the forms of a secret header value v that must not be
// kept anywhere: v, the credential of a "Scheme credential" value, each in
// the four base64 alphabets and paddings, and JSON-escaped as Go's encoder
// writes it (a file or an API answer that quotes it) and as JSONEscapeAll.
func SecretForms(v string) []string {
	vals := []string{v}
	if _, cred, ok := strings.Cut(v, " "); ok {
		vals = append(vals, cred)
	}
	var out []string
	for _, x := range vals {
		out = append(out, x, JSONEscapeAll(x))
		if j, err := json.Marshal(x); err == nil {
			out = append(out, strings.Trim(string(j), `"`))
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString([]byte(x)))
		}
	}
	return out
}
