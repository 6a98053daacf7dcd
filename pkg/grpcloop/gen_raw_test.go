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
	// hold, when set, is received from between the first token's frames
	// and the rest of each answer; wrote then gets when the rest's write
	// returned.
	hold  chan struct{}
	wrote chan time.Time
	// ping: a PING goes before each answer; acks gets each ACK that came
	// back with its payload.
	ping bool
	acks chan struct{}
	wg   sync.WaitGroup
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
	var msg, firstToken []byte
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
			case h.typ == framePing && h.flags&flagAck != 0 && string(p) == "genping!":
				s.acks <- struct{}{}
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
					// The cut waits for the second request, so that both
					// are in flight on this connection when it comes (a
					// client that had not sent the second yet would send
					// it on the next connection); it carries the first
					// request's first token.
					if cut && answered == 1 {
						firstToken = append(firstToken[:0], answer[:firstEnd]...)
						continue
					}
					if cut && answered == 2 {
						s.cutAnswer(c, firstToken)
						return
					}
					if err := s.answer(c, answer, firstEnd); err != nil {
						return
					}
				}
			}
		}
		have = copy(buf, b)
	}
}

// answer writes one answer: a PING first when s.ping, the first token and
// the rest apart when s.hold.
func (s *genRawServer) answer(c net.Conn, answer []byte, firstEnd int) error {
	if s.ping {
		ping := appendFrameHeader(nil, 8, framePing, 0, 0)
		if _, err := c.Write(append(ping, "genping!"...)); err != nil {
			return err
		}
	}
	if s.hold == nil {
		_, err := c.Write(answer)
		return err
	}
	if _, err := c.Write(answer[:firstEnd]); err != nil {
		return err
	}
	<-s.hold
	_, err := c.Write(answer[firstEnd:])
	s.wrote <- time.Now()
	return err
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
	if _, err := c.Write(out); err != nil {
		return
	}
	if s.cut == "close" {
		// A FIN after the token, not a reset: closing with the client's
		// later requests unread would send RST, which may drop the token
		// from the client's receive queue before it reads it.
		_ = c.(*net.TCPConn).CloseWrite()
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

// A server's PING is acknowledged with its payload, while the stream goes
// on.
func TestGeneratorAcknowledgesPing(t *testing.T) {
	s := startGenRaw(t, 2, "")
	s.ping, s.acks = true, make(chan struct{}, 2)
	g := newGen(t, s.addr(), 1, genwire.Options{})
	for id := uint64(10000001); id <= 10000002; id++ {
		r := newRecorder()
		g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: id}, r)
		r.wait(t)
		if r.err != nil || len(r.tokens) != 2 {
			t.Fatalf("tokens %v err %v", r.tokens, r.err)
		}
	}
	for i := range 2 {
		select {
		case <-s.acks:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d PING ACKs with the payload, want 2", i)
		}
	}
}

// stampHandler records each token's time and when it was handed over,
// and holds the reader on the first token until released.
type stampHandler struct {
	got1     chan struct{}
	block    time.Duration
	at, seen []time.Time
	done     chan struct{}
}

func (h *stampHandler) Tokens(at time.Time, _ int) {
	h.at, h.seen = append(h.at, at), append(h.seen, time.Now())
	if len(h.at) == 1 {
		close(h.got1)
		time.Sleep(h.block) // the reader is late: what the stamp is for
	}
}
func (h *stampHandler) End(time.Time, genai.Usage, error) { close(h.done) }

// A token's time is when its bytes reached the host (the kernel's receive
// stamp), not when the reader got round to them: a token that arrived
// while the reader was busy keeps its arrival time.
func TestGeneratorStampsArrival(t *testing.T) {
	s := startGenRaw(t, 2, "")
	s.hold, s.wrote = make(chan struct{}), make(chan time.Time, 1)
	g := newGen(t, s.addr(), 1, genwire.Options{})
	if err := g.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	g.conns[0].mu.Lock()
	stamped := g.conns[0].s.rx != nil
	g.conns[0].mu.Unlock()
	if !stamped {
		t.Skip("no kernel receive timestamps here")
	}
	const block = 50 * time.Millisecond
	h := &stampHandler{got1: make(chan struct{}), block: block, done: make(chan struct{})}
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: 10000001}, h)
	<-h.got1
	sent := time.Now()
	close(s.hold) // the second token and the final go while the reader sleeps
	wrote := <-s.wrote
	<-h.done
	if len(h.at) != 2 {
		t.Fatalf("%d tokens, want 2", len(h.at))
	}
	if h.seen[1].Sub(wrote) < 5*time.Millisecond {
		t.Skipf("the server wrote %v before the token was read: the host was too slow to show a late read", h.seen[1].Sub(wrote))
	}
	// On loopback the bytes reach the client's socket within the
	// server's write: the stamp lies between its start and its return
	// (give or take the stamp conversion's microseconds), well before
	// the reader took them.
	if h.at[1].Before(sent.Add(-time.Millisecond)) || h.at[1].After(wrote.Add(time.Millisecond)) {
		t.Errorf("the second token's time is %v after the write began and %v before it returned; it was read %v after: want the arrival, not the read",
			h.at[1].Sub(sent), wrote.Sub(h.at[1]), h.seen[1].Sub(h.at[1]))
	}
}

// TestReadEndsWhereAFrameEnds: the reader asks the socket for no more than
// the rest of the frame in hand, so that a read never runs on into frames
// written later and takes their arrival stamp; before the next frame's
// header is in, for a frame as long as the last DATA one (token frames are
// alike); on a new connection, for all the buffer holds.
func TestReadEndsWhereAFrameEnds(t *testing.T) {
	r := &genReader{buf: make([]byte, genReadBuf)}
	if got := r.want(0); got != genReadBuf {
		t.Errorf("first read asks for %d, want the whole buffer %d", got, genReadBuf)
	}
	frame := appendFrameHeader(nil, 70, frameData, 0, genStreamID)
	copy(r.buf, frame)
	for _, c := range []struct {
		have, last, want int
	}{
		{have: frameHeaderLen, want: 70},         // the header in hand: its payload
		{have: frameHeaderLen + 30, want: 40},    // part of the payload: the rest
		{have: 4, last: 79, want: 75},            // part of a header: a frame like the last
		{have: 0, last: 79, want: 79},            // nothing: a whole frame like the last
		{have: 0, last: 3, want: frameHeaderLen}, // never less than a header
	} {
		r.lastData = c.last
		if got := r.want(c.have); got != c.want {
			t.Errorf("%d bytes in hand, last DATA frame %d: read asks for %d, want %d", c.have, c.last, got, c.want)
		}
	}
	// A header naming a frame over the size we accept: the read takes what
	// the buffer holds, and the frame parser ends the session.
	copy(r.buf, appendFrameHeader(nil, defaultMaxFrame+1, frameData, 0, genStreamID))
	if got := r.want(frameHeaderLen); got != genReadBuf-frameHeaderLen {
		t.Errorf("read asks for %d after an oversized frame's header, want %d", got, genReadBuf-frameHeaderLen)
	}
}
