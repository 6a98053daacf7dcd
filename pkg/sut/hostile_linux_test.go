//go:build linux

package sut

// Both HTTP tensor clients, the pool (Network over httpclient) and the
// event loop (Loop over httploop), against the same hostile server: a raw
// listener on loopback that writes exactly the bytes a case gives, so that
// each defect is shown on both and the two always agree on the outcome.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
	conns   sync.WaitGroup
}

func startRaw(t *testing.T, s *rawServer) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	var open sync.Map
	t.Cleanup(func() {
		ln.Close()
		open.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
		s.conns.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			open.Store(c, nil)
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
		if !s.write(c, s.answer) {
			return
		}
		for len(s.endless) > 0 {
			// A client that read no further leaves the write blocked: the
			// deadline ends it without a sleep in the test.
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if !s.write(c, s.endless) {
				return
			}
		}
		if s.close {
			return
		}
	}
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
	o := Options{Model: "m", MaxBatch: 8, WholeQueries: true, Expect: hostileExpect(), Timeout: 10 * time.Second}
	hc, err := httpclient.New("http://"+s.addr, httpclient.MaxResponseBytes(co.maxResponse))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close() })
	c := newCollector(1)
	q := loadgen.Query{Samples: []int{1}}
	switch client {
	case HTTPClientPool:
		n, err := New(HTTP(hc), library(t, true), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		n.IssueQuery(t.Context(), q, c.done)
		select {
		case <-c.all:
		case <-time.After(10 * time.Second):
			t.Fatal("the pool gave no completion in 10 s")
		}
	case HTTPClientLoop:
		l, err := NewLoop(hc, library(t, true), o, LoopOptions{Addr: s.addr, MaxConns: 1, MaxResponseBytes: co.maxResponse})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		l.IssueQuery(t.Context(), q, c.done)
		pollAll(t, l, c)
	}
	return c.got[0].Err
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

var _ = errors.Is
var _ = context.Background
