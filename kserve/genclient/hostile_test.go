package genclient

// Hostile servers of issue 26: answers with no token, interim heads before
// the stream, a compressed stream. Each server writes the bytes the issue
// describes, as they are.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/outcome"
)

const emptyDelta = "data: {\"choices\":[{\"delta\":{}}]}\n\n"

// TestNoOutputTokensFailsTheSample: an answer that carries no
// token-bearing response (a 200 event stream that closes at once, empty
// deltas then [DONE], an empty text) fails its sample as malformed, "no
// output tokens", on every HTTP API, streamed or not.
func TestNoOutputTokensFailsTheSample(t *testing.T) {
	const sseClose = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
	cases := []struct {
		name, answer string
		api          genai.API
	}{
		{"head then close (generate-stream)", sseClose, genai.APIGenerateStream},
		{"head then close (openai-chat)", sseClose, genai.APIOpenAIChat},
		{"empty deltas then [DONE]", sseHead + chunk(emptyDelta+emptyDelta+emptyDelta) + chunk("data: [DONE]\n\n") + "0\r\n\r\n", genai.APIOpenAIChat},
		{"empty texts then [DONE]", sseHead + chunk("data: {\"choices\":[{\"text\":\"\"}]}\n\n") + chunk("data: [DONE]\n\n") + "0\r\n\r\n", genai.APIOpenAICompletions},
		{"usage only then [DONE]", sseHead + chunk("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}\n\n") + chunk("data: [DONE]\n\n") + "0\r\n\r\n", genai.APIOpenAIChat},
		{"empty text_output events", sseHead + chunk("data: {\"text_output\":\"\"}\n\n") + "0\r\n\r\n", genai.APIGenerateStream},
		{"one empty answer", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 18\r\n\r\n{\"text_output\":\"\"}", genai.APIGenerate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, rawServer(t, tc.answer, true), tc.api, Options{})
			r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true})
			if o, _ := outcome.Classify(r.err); o != outcome.Malformed {
				t.Fatalf("End error %v: outcome %s, want malformed", r.err, o)
			}
			if !errors.Is(r.err, genai.ErrNoOutputTokens) || !strings.Contains(r.err.Error(), "no output tokens") {
				t.Errorf("End error %v: want genai.ErrNoOutputTokens saying \"no output tokens\"", r.err)
			}
			if r.tokens() != 0 {
				t.Errorf("%d tokens heard", r.tokens())
			}
		})
	}
}

// TestInterimHeadsBeforeTheStream: 103 Early Hints (with a header) and 100
// Continue before the answer are skipped, as the tensor clients skip them:
// the sample is answered with its tokens. 101 is no interim head (the
// protocol switches): the sample fails.
func TestInterimHeadsBeforeTheStream(t *testing.T) {
	const interim = "HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
	stream := sseHead + chunk(tok) + chunk(tok) + chunk(tok) + chunk("data: [DONE]\n\n") + "0\r\n\r\n"
	// The bound keeps a client that reads the interim head's "body" to a
	// close that never comes from hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := newClient(t, rawServer(t, interim+stream, false), genai.APIOpenAIChat, Options{})
	for i := range 2 { // the connection is kept for the next request
		r := generate(t, c, ctx, &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true})
		if r.err != nil || r.tokens() != 3 {
			t.Fatalf("request %d: End error %v, %d tokens: want the 3 streamed", i, r.err, r.tokens())
		}
	}

	sw := newClient(t, rawServer(t, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"+stream, false),
		genai.APIOpenAIChat, Options{})
	r := generate(t, sw, ctx, &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true})
	if r.err == nil || !strings.Contains(r.err.Error(), "101") {
		t.Errorf("after 101: End error %v, %d tokens: want a failure naming 101", r.err, r.tokens())
	}
}

// TestCompressedStreamNamed: a server that gzips its event stream,
// although asked for identity, fails the sample with a message saying so;
// every generative request asks for identity.
func TestCompressedStreamNamed(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	io.WriteString(zw, tok+tok+"data: [DONE]\n\n")
	zw.Close()
	answer := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
		chunk(zipped.String()) + "0\r\n\r\n"

	var mu sync.Mutex
	var accept []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				mu.Lock()
				accept = append(accept, req.Header.Values("Accept-Encoding")...)
				mu.Unlock()
				io.WriteString(conn, answer)
			}()
		}
	}()
	for _, api := range []genai.API{genai.APIOpenAIChat, genai.APIGenerateStream} {
		c := newClient(t, "http://"+ln.Addr().String(), api, Options{})
		r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true})
		if o, _ := outcome.Classify(r.err); o != outcome.Malformed ||
			!strings.Contains(r.err.Error(), "Content-Encoding: gzip") || !strings.Contains(r.err.Error(), "identity") {
			t.Errorf("%s: End error %v (outcome %s): want malformed naming Content-Encoding: gzip and identity", api, r.err, o)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(accept) != 2 || accept[0] != "identity" || accept[1] != "identity" {
		t.Errorf("requests' Accept-Encoding %q: want identity on each", accept)
	}
}
