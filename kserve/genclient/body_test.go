package genclient

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
)

// readBody reads a body of the given framing through reads of step bytes.
func readBody(in string, n, step int) (string, error) {
	var b bodyReader
	b.init(bufio.NewReaderSize(strings.NewReader(in), 32), n)
	var out []byte
	buf := make([]byte, step)
	for {
		k, err := b.read(buf)
		out = append(out, buf[:k]...)
		if err == io.EOF {
			return string(out), nil
		}
		if err != nil {
			return string(out), err
		}
	}
}

func TestBodyFramings(t *testing.T) {
	cases := []struct {
		name, in string
		n        int
		want     string
		err      error
	}{
		{"length", "hello world", 5, "hello", nil},
		{"empty", "", 0, "", nil},
		{"until close", "all of it", -2, "all of it", nil},
		{"chunked", "5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\nTrailer: x\r\n\r\n", -1, "hello!", nil},
		{"chunked, bare LF", "3\nabc\n0\n\n", -1, "abc", nil},
		{"chunked, upper hex", "A\r\n0123456789\r\n0\r\n\r\n", -1, "0123456789", nil},
		{"length cut short", "hel", 5, "hel", io.ErrUnexpectedEOF},
		{"chunk cut short", "5\r\nhel", -1, "hel", io.ErrUnexpectedEOF},
		{"no last chunk", "3\r\nabc\r\n", -1, "abc", io.ErrUnexpectedEOF},
		{"bad size", "x\r\n", -1, "", kserve.ErrMalformed},
		{"size too large", "1000000000000000\r\n", -1, "", kserve.ErrMalformed},
		{"data past its size", "2\r\nabc\r\n", -1, "ab", kserve.ErrMalformed},
		{"a chunk line over the buffer", strings.Repeat("1", 40) + "\r\n", -1, "", kserve.ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, step := range []int{1, 3, 64} {
				got, err := readBody(c.in, c.n, step)
				if got != c.want || !errors.Is(err, c.err) && (err != nil || c.err != nil) {
					t.Fatalf("reads of %d: %q, %v; want %q, %v", step, got, err, c.want, c.err)
				}
			}
		})
	}
}

// FuzzChunkedSSE: any bytes as a chunked SSE body, read and parsed as the
// client does, end in events or a clean error (malformed, or the body cut
// short), never a panic or a loop.
func FuzzChunkedSSE(f *testing.F) {
	f.Add([]byte("5\r\ndata:\r\n2\r\n x\r\n2\r\n\n\n\r\n0\r\n\r\n"))
	f.Add([]byte("1;a\r\n:\r\n0\r\n\r\n"))
	f.Add([]byte("fffffff\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var b bodyReader
		b.init(bufio.NewReaderSize(strings.NewReader(string(in)), 32), -1)
		var p sseParser
		p.reset(256)
		for range len(in) + 2 {
			space, err := p.space()
			if err != nil {
				return
			}
			n, rerr := b.read(space)
			p.wrote(n)
			for {
				ev, ok, err := p.next()
				if err != nil {
					return
				}
				if !ok {
					break
				}
				var info answerInfo
				scanAnswer(ev.Data, &info)
			}
			if rerr != nil {
				if rerr != io.EOF && rerr != io.ErrUnexpectedEOF && !errors.Is(rerr, kserve.ErrMalformed) {
					t.Fatalf("error %v", rerr)
				}
				return
			}
		}
		t.Fatal("more reads than input bytes: a read that makes no progress")
	})
}
