//go:build linux

package sut

// Both HTTP tensor clients, the pool (Network over httpclient) and the
// event loop (Loop over httploop), against the same hostile server: a raw
// listener on loopback that writes exactly the bytes a case gives, so that
// each defect is shown on both and the two always agree on the outcome.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/outcome"
)

// rawServer answers every request it reads with answer, byte for byte,
// then, when endless is set, writes endless over and over until the
// client stops reading or closes, and otherwise closes the connection
// when close is set. It counts the bytes it managed to write.
type rawServer struct {
	addr    string
	answer  []byte
	endless []byte
	close   bool
	written atomic.Int64
	// stalled counts endless writes that ended on their deadline: a
	// client that kept the connection open without reading, rather than
	// closing it.
	stalled atomic.Int64
	conns   sync.WaitGroup
	// ended receives a value as each answer's writes end.
	ended    chan struct{}
	accepted atomic.Int64
	// gather, when set, holds every answer until that many requests have
	// arrived, so that the answers are read at once.
	gather   int
	arrived  atomic.Int64
	gathered chan struct{}
}

func startRaw(t *testing.T, s *rawServer) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.gathered = make(chan struct{})
	s.ended = make(chan struct{}, 256)
	var open sync.Map
	accepting := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-accepting // no connection is stored after this
		open.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
		s.conns.Wait()
	})
	go func() {
		defer close(accepting)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			open.Store(c, nil)
			s.accepted.Add(1)
			s.conns.Add(1)
			go s.serve(c)
		}
	}()
	return s
}

func (s *rawServer) serve(c net.Conn) {
	defer s.conns.Done()
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		if err := readRequest(br); err != nil {
			return
		}
		// A small send buffer, so that a client that stops reading stops
		// the server's writes soon: the count then shows what it read.
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetWriteBuffer(4 << 10)
		}
		s.waitGathered()
		ok := s.answerOn(c)
		select {
		case s.ended <- struct{}{}:
		default:
		}
		if !ok {
			return
		}
		if s.close {
			return
		}
	}
}

// waitGathered holds an answer until gather requests have arrived
// (bounded: a client that never sends them all gets its answers anyway).
func (s *rawServer) waitGathered() {
	if s.gather == 0 {
		return
	}
	if s.arrived.Add(1) == int64(s.gather) {
		close(s.gathered)
	}
	select {
	case <-s.gathered:
	case <-time.After(10 * time.Second):
	}
}

// answerOn writes the answer, and the endless part until the client stops
// it; false when the connection is done.
func (s *rawServer) answerOn(c net.Conn) bool {
	if !s.write(c, s.answer) {
		return false
	}
	for len(s.endless) > 0 {
		// A client that read no further leaves the write blocked: the
		// deadline ends it without a sleep in the test.
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Write(s.endless); err != nil {
			s.written.Add(int64(n))
			if errors.Is(err, os.ErrDeadlineExceeded) {
				s.stalled.Add(1)
			}
			return false
		}
		s.written.Add(int64(len(s.endless)))
	}
	return true
}

func (s *rawServer) write(c net.Conn, b []byte) bool {
	n, err := c.Write(b)
	s.written.Add(int64(n))
	return err == nil
}

// readRequest reads one HTTP/1.1 request with a Content-Length body.
func readRequest(br *bufio.Reader) error {
	length := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(value))
		}
	}
	_, err := io.CopyN(io.Discard, br, int64(length))
	return err
}

// hostileExpect is the model the hostile answers claim to be: one FP32
// output OUT of shape [batch, 4].
func hostileExpect() *kserve.Expect {
	return kserve.NewExpect("m", []kserve.TensorMetadata{{Name: "OUT", Datatype: kserve.FP32, Shape: []int64{-1, 4}}}, true)
}

// clientOptions are the options of the clients under test.
type clientOptions struct {
	maxResponse int // Options.MaxResponseBytes; 0: the default
}

// sendOnce sends one sample through the named client ("pool" or "loop")
// to s and returns the completion's error.
func sendOnce(t *testing.T, client string, s *rawServer, co clientOptions) error {
	t.Helper()
	return sendSeq(t, client, s, co, 1)[0]
}

// sendSeq sends n samples through one client of the named kind, each once
// the one before has completed, and returns their completions' errors.
func sendSeq(t *testing.T, client string, s *rawServer, co clientOptions, n int) []error {
	t.Helper()
	o := Options{Model: "m", MaxBatch: 8, WholeQueries: true, Expect: hostileExpect(), Timeout: 5 * time.Second}
	hc, err := httpclient.New("http://"+s.addr, httpclient.MaxResponseBytes(co.maxResponse))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close() })
	var issue func(q loadgen.Query, c *collector)
	switch client {
	case HTTPClientPool:
		p, err := New(HTTP(hc), library(t, true), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		issue = func(q loadgen.Query, c *collector) {
			p.IssueQuery(t.Context(), q, c.done)
			select {
			case <-c.all:
			case <-time.After(10 * time.Second):
				t.Fatal("the pool gave no completion in 10 s")
			}
		}
	case HTTPClientLoop:
		l, err := NewLoop(hc, library(t, true), o, LoopOptions{Addr: s.addr, MaxConns: 1, MaxResponseBytes: co.maxResponse})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		issue = func(q loadgen.Query, c *collector) {
			l.IssueQuery(t.Context(), q, c.done)
			pollAll(t, l, c)
		}
	}
	errs := make([]error, n)
	for i := range errs {
		c := newCollector(1)
		issue(loadgen.Query{ID: i, Samples: []int{1}}, c)
		errs[i] = c.got[0].Err
	}
	return errs
}

var bothClients = []string{HTTPClientPool, HTTPClientLoop}

// binaryAnswer is a 200 with the binary extension: the JSON header hdr,
// then bin, framed by Content-Length.
func binaryAnswer(hdr, bin string) []byte {
	return fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n%s: %d\r\nContent-Length: %d\r\n\r\n%s%s",
		kserve.HeaderInferenceContentLength, len(hdr), len(hdr)+len(bin), hdr, bin)
}

func outHeader(size string) string {
	return `{"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":` + size + `}}]}`
}

// Item 6: an answer whose binary_data_size does not match the bytes after
// its JSON header is malformed on both clients, in a performance run (no
// tensor decoded), with the output and the sizes named.
func TestTruncatedBinaryAnswersAreMalformed(t *testing.T) {
	bin16 := strings.Repeat("\x00", 16)
	cases := []struct {
		name, hdr, bin, want string
	}{
		{"larger than the body", outHeader("1099511627776"), bin16, `"OUT" binary_data_size 1099511627776`},
		{"negative", outHeader("-16"), bin16, `"OUT" binary_data_size -16`},
		{"sum short of the body", outHeader("8"), bin16, "add up to 8"},
		{"body short of the sum", outHeader("16"), bin16[:8], `"OUT" binary_data_size 16`},
		{"not an integer", outHeader(`"16"`), bin16, `"OUT" binary_data_size`},
	}
	for _, tc := range cases {
		for _, client := range bothClients {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				s := startRaw(t, &rawServer{answer: binaryAnswer(tc.hdr, tc.bin)})
				err := sendOnce(t, client, s, clientOptions{})
				if o, _ := outcome.Classify(err); o != outcome.Malformed || !strings.Contains(fmt.Sprint(err), tc.want) {
					t.Fatalf("%s: error %v (outcome %v), want malformed naming %s", client, err, o, tc.want)
				}
			})
		}
	}
	// The well-formed answer passes on both, twice (the second from the
	// answer check's memory of a header that passed).
	for _, client := range bothClients {
		s := startRaw(t, &rawServer{answer: binaryAnswer(outHeader("16"), bin16)})
		for range 2 {
			if err := sendOnce(t, client, s, clientOptions{}); err != nil {
				t.Fatalf("%s: a well-formed answer failed: %v", client, err)
			}
		}
	}
}

// Item 12: the same broken chunk framing is one outcome on both clients,
// malformed (the peer sent bytes that are not HTTP), and the connection's
// end inside a chunk is the transport's on both.
func TestBrokenChunkFramingIsOneOutcome(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
	body := `{"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}`
	cases := []struct {
		name, bytes string
		close       bool
		want        outcome.Outcome
	}{
		{"bad hex size", head + "zz\r\n" + body + "\r\n0\r\n\r\n", false, outcome.Malformed},
		{"no CRLF after the chunk data", head + fmt.Sprintf("%x\r\n", len(body)) + body + "XX0\r\n\r\n", false, outcome.Malformed},
		{"chunk size line over the limit", head + strings.Repeat("0", 70<<10) + "1\r\nx\r\n0\r\n\r\n", false, outcome.Malformed},
		{"chunk size too large", head + "fffffffffffffffffff\r\n", false, outcome.Malformed},
		{"end of stream inside a chunk", head + fmt.Sprintf("%x\r\n", len(body)) + body[:10], true, outcome.ConnectionClosed},
	}
	for _, tc := range cases {
		got := map[string]outcome.Outcome{}
		for _, client := range bothClients {
			s := startRaw(t, &rawServer{answer: []byte(tc.bytes), close: tc.close})
			err := sendOnce(t, client, s, clientOptions{})
			got[client], _ = outcome.Classify(err)
			t.Logf("%s/%s: %v", tc.name, client, err)
		}
		if got[HTTPClientPool] != tc.want || got[HTTPClientLoop] != tc.want {
			t.Errorf("%s: pool %v, loop %v; want %v on both", tc.name, got[HTTPClientPool], got[HTTPClientLoop], tc.want)
		}
	}
}

// endlessChunks is a chunked body that never ends: 32 KiB chunks of JSON
// whitespace after an opening brace.
var endlessChunks = []byte(fmt.Sprintf("8000\r\n%s\r\n", strings.Repeat(" ", 32<<10)))

const chunkedHead = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n"

// kernelSlack is what the sockets between the server and a client that
// stopped reading may hold: the client's receive queue as loopback's
// autotuning grows it while a MiB is read, and the server's send buffer.
const kernelSlack = 4 << 20

// Item 9: an answer past --max-response-bytes fails as too_large on both
// clients and is read no further: an endless chunked answer once the limit
// is passed, a Content-Length of 300 MB on its header (the server writes
// endlessly after it; a client that read on would take it all). The
// connection is closed, not drained: the server's endless write fails
// rather than stalls.
func TestOversizedAnswersAreTooLarge(t *testing.T) {
	const limit = 1 << 20
	cases := []struct {
		name  string
		head  string
		limit int
	}{
		{"endless chunked", chunkedHead, limit},
		{"Content-Length 300 MB", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 300000000\r\n\r\n{", limit},
		{"Content-Length 300 MB, default limit", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 300000000\r\n\r\n{", 0},
	}
	for _, tc := range cases {
		for _, client := range bothClients {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				s := startRaw(t, &rawServer{answer: []byte(tc.head), endless: endlessChunks})
				err := sendOnce(t, client, s, clientOptions{maxResponse: tc.limit})
				if o, _ := outcome.Classify(err); o != outcome.TooLarge || !errors.Is(err, kserve.ErrTooLarge) {
					t.Fatalf("error %v (outcome %v), want too_large", err, o)
				}
				// The server's writer ends when the client closes (or, if it
				// does not, on the write's deadline: stalled).
				select {
				case <-s.ended:
				case <-time.After(10 * time.Second):
					t.Fatal("the server's answer did not end in 10 s")
				}
				w := s.written.Load()
				t.Logf("%s: the server wrote %d bytes on %d connections: %v", client, w, s.accepted.Load(), err)
				limit := tc.limit
				if limit == 0 {
					limit = httpclient.DefaultMaxResponseBytes
				}
				if w > int64(limit+kernelSlack) {
					t.Errorf("the server wrote %d bytes, over the limit %d and the kernel's slack %d", w, limit, kernelSlack)
				}
				if s.stalled.Load() != 0 {
					t.Errorf("the client left the connection open, unread, instead of closing it")
				}
			})
		}
	}
}

// Item 9, the sum: 32 connections whose answers are endless JSON, all
// read at once, with a per-answer limit of 1 MiB and a client budget of
// 4 MiB: every answer fails too_large, those the budget stopped say so,
// and the client's buffer accounting never passed the budget (32 answers
// at the limit would be 32 MiB), and holds nothing once they are done.
func TestEndlessAnswersStayWithinTheBudget(t *testing.T) {
	const conns, limit, budget = 32, 1 << 20, 4 << 20
	for _, client := range bothClients {
		t.Run(client, func(t *testing.T) {
			s := startRaw(t, &rawServer{answer: []byte(chunkedHead), endless: endlessChunks, gather: conns})
			hc, err := httpclient.New("http://"+s.addr, httpclient.MaxResponseBytes(limit), httpclient.MaxResponseBytesTotal(budget))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { hc.Close() })
			o := Options{Model: "m", MaxBatch: 8, BatchSize: 1, MaxInflight: conns, Expect: hostileExpect(), Timeout: 5 * time.Second}
			samples := make([]int, conns)
			for i := range samples {
				samples[i] = i
			}
			c := newCollector(conns)
			var b *httpclient.Budget
			switch client {
			case HTTPClientPool:
				n, err := New(HTTP(hc), library(t, true), o)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { n.Close() })
				b = hc.ResponseBudget()
				n.IssueQuery(t.Context(), loadgen.Query{Samples: samples}, c.done)
				select {
				case <-c.all:
				case <-time.After(20 * time.Second):
					t.Fatal("the pool gave no completion in 20 s")
				}
			case HTTPClientLoop:
				l, err := NewLoop(hc, library(t, true), o, LoopOptions{Addr: s.addr, MaxConns: conns})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				b = l.loop.ResponseBudget()
				if err := l.Preconnect(t.Context(), conns); err != nil {
					t.Fatal(err)
				}
				l.IssueQuery(t.Context(), loadgen.Query{Samples: samples}, c.done)
				pollAll(t, l, c)
			}
			byBudget := 0
			for _, g := range c.got {
				if o, _ := outcome.Classify(g.Err); o != outcome.TooLarge {
					t.Fatalf("error %v (outcome %v), want too_large", g.Err, o)
				}
				if strings.Contains(g.Err.Error(), "budget") {
					byBudget += g.Count
				}
			}
			t.Logf("%s: budget %d, peak %d, held after %d; %d of %d answers stopped by the budget", client, b.Limit(), b.Peak(), b.Held(), byBudget, conns)
			if b.Limit() != budget || b.Peak() > budget || b.Peak() == 0 {
				t.Errorf("budget %d, peak %d: want a peak within %d", b.Limit(), b.Peak(), budget)
			}
			if byBudget == 0 {
				t.Errorf("no answer was stopped by the budget: the sum was not bounded")
			}
			if b.Held() != 0 {
				t.Errorf("%d bytes still held once every answer is done", b.Held())
			}
		})
	}
}

// Interim answers (1xx but 101) before the real one are skipped by both
// clients; a 101 nobody asked for is the answer, a failed one; a server
// that sends interim answers without end fails the sample as malformed
// rather than holding it to its timeout.
func TestInterimAnswersAreOneOutcome(t *testing.T) {
	body := `{"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}`
	ok := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	cases := []struct {
		name, bytes string
		ok          bool
		want        outcome.Outcome
		says        string
	}{
		{"100 and 103 before the answer", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n" + ok, true, 0, ""},
		{"101 is the answer", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n" + ok, false, outcome.Error, "101"},
		{"interim answers without end", strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 101) + ok, false, outcome.Malformed, "1xx"},
	}
	for _, tc := range cases {
		for _, client := range bothClients {
			s := startRaw(t, &rawServer{answer: []byte(tc.bytes)})
			errs := sendSeq(t, client, s, clientOptions{}, 2)
			err := errs[0]
			t.Logf("%s/%s: %v", tc.name, client, err)
			if tc.says == "101" && (errs[1] == nil || s.accepted.Load() < 2) {
				// The connection that switched is not used again: the
				// bytes after the 101 are not the next request's answer.
				t.Errorf("%s/%s: the next request reused the switched connection (%d accepted, %v)", tc.name, client, s.accepted.Load(), errs[1])
			}
			if tc.ok {
				if err != nil {
					t.Errorf("%s/%s: %v, want the answer after the interim ones", tc.name, client, err)
				}
				continue
			}
			if got, _ := outcome.Classify(err); got != tc.want || !strings.Contains(fmt.Sprint(err), tc.says) {
				t.Errorf("%s/%s: %v (%v); want %v saying %q", tc.name, client, got, err, tc.want, tc.says)
			}
		}
	}
}
