package grpcloop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// genRawServer is a ModelStreamInfer server on bare HTTP/2 frames, for the
// cases a real server will not produce on demand (a close, GOAWAY or reset
// in the middle of an answer) and for allocation counts: it answers each
// request with tokens one-token responses and an empty final one from
// bytes encoded once, patched with the request's id, so that it allocates
// nothing per request and the process's count is the client's. Request
// ids must all have idWidth digits.
type genRawServer struct {
	ln     net.Listener
	tokens int
	// cut, when set, is what the server does after the first token of
	// the first answer on its first connection, instead of the rest:
	// "close", "goaway", "reset".
	cut   string
	conns atomic.Int64
	wg    sync.WaitGroup
}

const idWidth = 8

func startGenRaw(t testing.TB, tokens int, cut string) *genRawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &genRawServer{ln: ln, tokens: tokens, cut: cut}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *genRawServer) addr() string { return s.ln.Addr().String() }

// rawAnswerOf is the frames of one whole answer for id placeholder
// "ZZZZZZZZ", and where the id lies in them.
func rawAnswerOf(tokens int) (frames []byte, idAt []int, firstEnd int) {
	placeholder := strings.Repeat("Z", idWidth)
	msg := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			panic(err)
		}
		return b
	}
	tok, fin := msg(tokenResp(placeholder, 0, false)), msg(emptyFinal(placeholder))
	add := func(m []byte) {
		frames = appendFrameHeader(frames, 5+len(m), frameData, 0, genStreamID)
		frames = append(frames, 0)
		frames = binary.BigEndian.AppendUint32(frames, uint32(len(m)))
		idAt = append(idAt, len(frames)+bytes.Index(m, []byte(placeholder)))
		frames = append(frames, m...)
	}
	for i := range tokens {
		add(tok)
		if i == 0 {
			firstEnd = len(frames)
		}
	}
	add(fin)
	return frames, idAt, firstEnd
}

func (s *genRawServer) serve(c net.Conn) {
	defer c.Close()
	cut := s.conns.Add(1) == 1 && s.cut != ""
	answer, idAt, firstEnd := rawAnswerOf(s.tokens)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
	var start []byte
	start = appendFrameHeader(start, 6, frameSettings, 0, 0)
	start = appendSetting(start, settingInitialWindowSize, recvWindow)
	start = appendWindowUpdate(start, 0, recvWindow-defaultWindow)
	if _, err := c.Write(start); err != nil {
		return
	}
	buf := make([]byte, 256<<10)
	have, preface := 0, false
	var msg []byte
	answered := 0
	for {
		n, err := c.Read(buf[have:])
		if err != nil {
			return
		}
		have += n
		b := buf[:have]
		if !preface {
			if len(b) < len(clientPreface) {
				continue
			}
			b, preface = b[len(clientPreface):], true
		}
		for len(b) >= frameHeaderLen {
			h := parseFrameHeader(b)
			if len(b) < frameHeaderLen+h.length {
				break
			}
			p := b[frameHeaderLen : frameHeaderLen+h.length]
			b = b[frameHeaderLen+h.length:]
			switch {
			case h.typ == frameHeaders && h.stream == genStreamID:
				out := appendFrameHeader(nil, hb.Len(), frameHeaders, flagEndHeaders, genStreamID)
				if _, err := c.Write(append(out, hb.Bytes()...)); err != nil {
					return
				}
			case h.typ == frameData && h.stream == genStreamID:
				msg = append(msg, p...)
				for len(msg) >= 5 && len(msg) >= 5+int(binary.BigEndian.Uint32(msg[1:])) {
					size := 5 + int(binary.BigEndian.Uint32(msg[1:]))
					id := requestID(msg[5:size])
					msg = msg[:copy(msg, msg[size:])]
					for _, at := range idAt {
						copy(answer[at:at+idWidth], id)
					}
					answered++
					if answered == 1 && cut {
						s.cutAnswer(c, answer[:firstEnd])
						return
					}
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}
		}
		have = copy(buf, b)
	}
}

// cutAnswer sends the first token, then breaks the answer as s.cut says,
// and waits for the client to close.
func (s *genRawServer) cutAnswer(c net.Conn, first []byte) {
	out := append([]byte(nil), first...)
	switch s.cut {
	case "goaway":
		out = appendFrameHeader(out, 8, frameGoAway, 0, 0)
		out = binary.BigEndian.AppendUint32(out, genStreamID)
		out = binary.BigEndian.AppendUint32(out, errCodeNo)
	case "reset":
		out = appendRSTStream(out, genStreamID, 2) // INTERNAL_ERROR
	}
	if _, err := c.Write(out); err != nil || s.cut == "close" {
		return
	}
	_, _ = io.Copy(io.Discard, c)
}

// requestID is a ModelInferRequest's id field, read in place.
func requestID(m []byte) []byte {
	for len(m) > 0 {
		num, typ, n := protowire.ConsumeTag(m)
		if n < 0 {
			return nil
		}
		m = m[n:]
		k := protowire.ConsumeFieldValue(num, typ, m)
		if k < 0 {
			return nil
		}
		if num == 3 && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(m[:k])
			return v
		}
		m = m[k:]
	}
	return nil
}

// A server that closes the connection, sends GOAWAY or resets the stream
// in the middle of an answer fails the requests in flight on it as
// connection_closed, each ended once, without a hang; the next request
// dials again and is answered in full.
func TestGeneratorServerGoesMidAnswer(t *testing.T) {
	for _, cut := range []string{"close", "goaway", "reset"} {
		t.Run(cut, func(t *testing.T) {
			s := startGenRaw(t, 4, cut)
			g := newGen(t, s.addr(), 1, genwire.Options{})
			first, second := newRecorder(), newRecorder()
			g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 4), Stream: true, ID: 10000001}, first)
			g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 4), Stream: true, ID: 10000002}, second)
			for _, r := range []*recorder{first, second} {
				r.wait(t)
				if !errors.Is(r.err, kserve.ErrConnectionClosed) || r.ends != 1 || r.after {
					t.Errorf("err %v, End %d times, tokens after End %v: want connection closed, once", r.err, r.ends, r.after)
				}
			}
			if len(first.tokens) != 1 {
				t.Errorf("the first request heard %v tokens before the cut, want 1", first.tokens)
			}
			r := newRecorder()
			g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 4), Stream: true, ID: 10000003}, r)
			r.wait(t)
			if r.err != nil || len(r.tokens) != 4 || s.conns.Load() != 2 {
				t.Errorf("after the cut: tokens %v err %v on connection %d, want 4, no error, the second", r.tokens, r.err, s.conns.Load())
			}
		})
	}
}

// doneHandler counts tokens and signals End, allocating nothing.
type doneHandler struct {
	tokens int
	err    error
	done   chan struct{}
}

func (h *doneHandler) Tokens(_ time.Time, n int) { h.tokens += n }
func (h *doneHandler) End(_ time.Time, _ genai.Usage, err error) {
	h.err = err
	h.done <- struct{}{}
}
