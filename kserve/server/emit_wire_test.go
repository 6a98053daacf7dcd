package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// captureConn is a connection that takes every write.
type captureConn struct {
	net.Conn
	writes int
}

func (c *captureConn) Write(p []byte) (int, error) { c.writes++; return len(p), nil }
func (c *captureConn) Close() error                { return nil }

// wireEnd says that the stream's byte at pos completes toks.
type wireEnd struct {
	pos  int
	toks []Emission
}

// writeSplits feeds stream to a fresh EmitConn (from newConn) in the writes
// split cuts, and checks that each token is recorded once, as the write
// holding the byte that completes it goes (after the earlier writes,
// before that one).
func writeSplits(t *testing.T, stream []byte, ends []wireEnd, cuts []int, newConn func(*captureConn, EmitFunc) *EmitConn) {
	t.Helper()
	type rec struct {
		e     Emission
		write int // writes done before it was recorded
	}
	var got []rec
	cc := &captureConn{}
	c := newConn(cc, func(e Emission) {
		if e.At.IsZero() {
			t.Errorf("token %s/%d recorded without a time", e.ID, e.Index)
		}
		got = append(got, rec{e, cc.writes})
	})
	var want []rec
	prev := 0
	for i, cut := range append(cuts, len(stream)) {
		if _, err := c.Write(stream[prev:cut]); err != nil {
			t.Fatal(err)
		}
		for _, end := range ends {
			if prev <= end.pos && end.pos < cut {
				for _, e := range end.toks {
					want = append(want, rec{e, i})
				}
			}
		}
		prev = cut
	}
	for i := range got {
		got[i].e.At = time.Time{} // checked set above; its value is no unit test's
	}
	if !slices.Equal(got, want) {
		t.Errorf("writes cut at %v: recorded (token, after write) %v, want %v", cuts, got, want)
	}
}

// everySplit runs writeSplits with two writes cut at every byte, and with
// a write per byte.
func everySplit(t *testing.T, stream []byte, ends []wireEnd, newConn func(*captureConn, EmitFunc) *EmitConn) {
	t.Helper()
	for cut := 0; cut <= len(stream); cut++ {
		writeSplits(t, stream, ends, []int{cut}, newConn)
		if t.Failed() {
			return
		}
	}
	var bytewise []int
	for i := 1; i < len(stream); i++ {
		bytewise = append(bytewise, i)
	}
	writeSplits(t, stream, ends, bytewise, newConn)
}

func tokenAt(id string, i int) Emission { return Emission{Model: "m", ID: id, Index: i} }

// chunked frames data as fasthttp's chunked body does, one chunk per
// part; pos maps the data's bytes to their offsets in the framed bytes.
func chunked(parts ...string) (framed string, pos []int) {
	var b strings.Builder
	for _, p := range parts {
		fmt.Fprintf(&b, "%x\r\n", len(p))
		for i := range len(p) {
			pos = append(pos, b.Len()+i)
		}
		fmt.Fprintf(&b, "%s\r\n", p)
	}
	return b.String() + "0\r\n\r\n", pos
}

const sseHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

// TestEmitConnSSE: the events queued are recorded at the write holding the
// blank line that ends each, through chunk framing that splits an event
// between two chunks (a "\n" ends one chunk, the next "\n" begins the
// next: the blank line is not contiguous on the wire) and through writes
// cut anywhere; the tail's events (usage, [DONE]) carry no token.
func TestEmitConnSSE(t *testing.T) {
	ev0, ev1 := "data: {\"t\":\"a\"}\n\n", "data: {\"t\":\"b\\n\"}\n\n"
	tail := "data: {\"usage\":{}}\n\ndata: [DONE]\n\n"
	// Chunks cut ev0 before its blank line (a chunk starts "\n\n": the
	// size line's LF and the data's first are not a blank line), ev1
	// between its two newlines (they are not contiguous on the wire),
	// and the tail inside.
	data := ev0 + ev1 + tail
	k0, k1 := len(ev0)-2, len(ev0)+len(ev1)-1
	body, pos := chunked(data[:k0], data[k0:k1], data[k1:k1+6], data[k1+6:])
	stream := []byte(sseHead + body)
	ends := []wireEnd{
		{len(sseHead) + pos[len(ev0)-1], []Emission{tokenAt("r", 0)}},
		{len(sseHead) + pos[len(ev0)+len(ev1)-1], []Emission{tokenAt("r", 1)}},
	}
	if !strings.Contains(body, "\n\r\n") || !strings.Contains(body, "\r\n\n\n") {
		t.Fatalf("the chunks do not split the events as meant: %q", body)
	}
	everySplit(t, stream, ends, func(cc *captureConn, emit EmitFunc) *EmitConn {
		c := &EmitConn{Conn: cc, emit: emit, sse: &sseWire{}}
		c.beginSSE()
		t0, t1 := tokenAt("r", 0), tokenAt("r", 1)
		c.queueSSE([]byte(ev0), &t0)
		c.queueSSE([]byte(ev1), &t1)
		c.queueSSE([]byte(tail), nil)
		return c
	})
}

// TestEmitConnSSEKeepAlive: a connection's next answer starts afresh (the
// first's leftovers are not carried over), and bytes outside a followed
// answer record nothing.
func TestEmitConnSSEKeepAlive(t *testing.T) {
	cc := &captureConn{}
	var got []Emission
	c := &EmitConn{Conn: cc, emit: func(e Emission) { got = append(got, e) }, sse: &sseWire{}}
	t0 := tokenAt("a", 0)
	c.beginSSE()
	c.queueSSE([]byte("data: x\n\n"), &t0)
	c.queueSSE([]byte("data: never written\n\n"), &Emission{ID: "a", Index: 1})
	_, _ = c.Write([]byte(sseHead + "9\r\ndata: x\n\n\r\n"))
	_, _ = c.Write([]byte("0\r\n\r\n"))
	_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\n\r\ndata: not followed\n\n")) // no beginSSE
	t1 := tokenAt("b", 0)
	c.beginSSE()
	c.queueSSE([]byte("data: y\n\n"), &t1)
	second, _ := chunked("data: y\n\n")
	_, _ = c.Write([]byte(sseHead + second))
	ids := []string{}
	for _, e := range got {
		ids = append(ids, fmt.Sprintf("%s/%d", e.ID, e.Index))
	}
	if want := []string{"a/0", "b/0"}; !slices.Equal(ids, want) {
		t.Errorf("recorded %v, want %v", ids, want)
	}
}

// TestEmitConnWholeBody: a body of known length records all its tokens at
// the write holding its last byte, wherever the writes are cut.
func TestEmitConnWholeBody(t *testing.T) {
	body := `{"text":"a\n\nb"}`
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(body))
	stream := []byte(head + body)
	toks := []Emission{tokenAt("w", 0), tokenAt("w", 1), tokenAt("w", 2)}
	everySplit(t, stream, []wireEnd{{len(stream) - 1, toks}}, func(cc *captureConn, emit EmitFunc) *EmitConn {
		c := &EmitConn{Conn: cc, emit: emit, sse: &sseWire{}}
		c.wholeBody(len(body), toks)
		return c
	})
}

// h2Frame is an HTTP/2 frame; padded adds a pad length byte and pad bytes.
func h2Frame(typ, flags byte, stream uint32, payload []byte, pad int) []byte {
	if pad > 0 {
		flags |= h2Padded
		payload = append(append([]byte{byte(pad)}, payload...), make([]byte, pad)...)
	}
	b := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), typ, flags}
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, payload...)
}

// grpcMsg is a response with id as a length-prefixed gRPC message.
func grpcMsg(t *testing.T, id string, ntok int) []byte {
	t.Helper()
	ids := make([]int32, ntok)
	b, err := proto.Marshal(genResponse("m", "1", id, []byte("text"), ids, false))
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(b))), b...)
}

// TestEmitConnGRPC: the tokens expected for an id are recorded at the
// write completing the next response with that id: messages split across
// DATA frames (one padded) and writes, two streams interleaved, frames of
// other types between, a response of a whole answer (three tokens at
// once), and a response with an id nothing is expected for (recorded
// nothing, took nothing from another id).
func TestEmitConnGRPC(t *testing.T) {
	a0, a1, b0 := grpcMsg(t, "a", 1), grpcMsg(t, "a", 1), grpcMsg(t, "b", 3)
	unknown := grpcMsg(t, "zz", 1)
	var s []byte
	var ends []wireEnd
	add := func(f []byte) { s = append(s, f...) }
	end := func(toks ...Emission) { ends = append(ends, wireEnd{len(s) - 1, toks}) }
	add(h2Frame(0x4, 0, 0, make([]byte, 6), 0))       // SETTINGS
	add(h2Frame(h2Headers, 0x4, 1, []byte("hdr"), 0)) // response headers
	add(h2Frame(h2Headers, 0x4, 3, []byte("hdr"), 0))
	add(h2Frame(h2Data, 0, 1, a0[:3], 0)) // a0 split inside its prefix
	add(h2Frame(h2Data, 0, 3, b0[:20], 2))
	add(h2Frame(h2Data, 0, 1, a0[3:], 0))
	end(tokenAt("a", 0))
	add(h2Frame(h2Data, 0, 3, append(b0[20:], unknown...), 0)) // b0 ends inside the frame
	ends = append(ends, wireEnd{len(s) - len(unknown) - 1, []Emission{tokenAt("b", 0), tokenAt("b", 1), tokenAt("b", 2)}})
	add(h2Frame(0x6, 0, 0, make([]byte, 8), 0)) // PING
	add(h2Frame(h2Data, 0, 1, a1, 3))
	ends = append(ends, wireEnd{len(s) - 3 - 1, []Emission{tokenAt("a", 1)}}) // before the padding
	add(h2Frame(h2Headers, 0x5, 1, []byte("trailers"), 0))
	everySplit(t, s, ends, func(cc *captureConn, emit EmitFunc) *EmitConn {
		c := &EmitConn{Conn: cc, emit: emit, h2: newH2Wire()}
		c.expect("a", tokenAt("a", 0))
		c.expect("b", tokenAt("b", 0), tokenAt("b", 1), tokenAt("b", 2))
		c.expect("a", tokenAt("a", 1))
		return c
	})
	c := &EmitConn{Conn: &captureConn{}, emit: func(Emission) {}, h2: newH2Wire()}
	_, _ = c.Write(s)
	if len(c.h2.streams) != 1 || c.h2.streams[3] == nil {
		t.Errorf("streams followed after stream 1's trailers: %v, want stream 3 only", c.h2.streams)
	}
}

// chanGen is a generative backend whose one answer's tokens a test hands
// over one by one (toks; closed: the answer ends); asked receives a value
// each time the front end asks for the next token.
type chanGen struct {
	Backend
	toks  chan GenToken
	asked chan struct{}
}

func (g *chanGen) GenerativeModels(context.Context) []string   { return []string{"m"} }
func (g *chanGen) Generative(_ context.Context, m string) bool { return m == "m" }
func (g *chanGen) Generate(context.Context, *GenRequest) (GenStream, error) {
	return g, nil
}
func (g *chanGen) Next(ctx context.Context) (GenToken, bool, error) {
	g.asked <- struct{}{}
	tok, ok := <-g.toks
	return tok, ok, nil
}
func (g *chanGen) InputTokens() int { return 1 }
func (g *chanGen) Fault() string    { return "" }
func (g *chanGen) Close()           {}

// gateListener's connections hold their first write until gate is
// closed, telling reached when it comes.
type gateListener struct {
	net.Listener
	reached, gate chan struct{}
}

func (l gateListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	return &gateConn{Conn: nc, l: l}, err
}

type gateConn struct {
	net.Conn
	l    gateListener
	once sync.Once
}

func (c *gateConn) Write(p []byte) (int, error) {
	c.once.Do(func() {
		close(c.l.reached)
		<-c.l.gate
	})
	return c.Conn.Write(p)
}

// TestEmitListenerHTTPStream: served on an EmitListener, a streamed
// answer's tokens are recorded when the connection writes them, not when
// the handler hands them over: while the connection's first write (the
// header and token 0) is held, tokens 1 and 2, already handed over, are
// not recorded; once it goes, all are, in order, under the request's id.
func TestEmitListenerHTTPStream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []int
	rec := func(e Emission) {
		mu.Lock()
		got = append(got, e.Index)
		mu.Unlock()
		if e.ID != "r1" || e.Model != "m" {
			t.Errorf("emission %+v: want model m, id r1", e)
		}
	}
	recorded := func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
	reached, gate := make(chan struct{}), make(chan struct{})
	g := &chanGen{toks: make(chan GenToken), asked: make(chan struct{})}
	srv := &fasthttp.Server{Handler: NewHTTPHandler(g, WithEmit(rec)).ServeFastHTTP}
	go func() { _ = srv.Serve(NewEmitListener(gateListener{ln, reached, gate}, rec, false)) }()
	t.Cleanup(func() { _ = srv.Shutdown() })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Request-Id: r1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	for i := range 3 {
		<-g.asked
		g.toks <- GenToken{Text: "t", Index: i}
		if i == 0 {
			<-reached // the connection writes token 0
		}
	}
	<-g.asked // tokens 1 and 2 handed over too
	if r := recorded(); !slices.Equal(r, []int{0}) {
		t.Errorf("with the first write held, recorded %v: want token 0 only (its write has begun)", r)
	}
	close(gate)
	close(g.toks)
	resp, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(resp), `"content":"t"`); n != 3 {
		t.Fatalf("answer %q: %d tokens, want 3", resp, n)
	}
	if r := recorded(); !slices.Equal(r, []int{0, 1, 2}) {
		t.Errorf("recorded %v, want tokens 0, 1, 2", r)
	}
}

// markListener's connections hold their first write holding mark until
// gate is closed, telling reached when it comes.
type markListener struct {
	net.Listener
	mark          []byte
	reached, gate chan struct{}
}

func (l *markListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	return &markConn{Conn: nc, l: l}, err
}

type markConn struct {
	net.Conn
	l *markListener
}

func (c *markConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.l.mark) {
		select {
		case <-c.l.reached:
		default:
			close(c.l.reached)
			<-c.l.gate
		}
	}
	return c.Conn.Write(p)
}

// TestEmitListenerGRPCStream: served with GRPCHooks.Wire, a streamed
// answer's tokens are recorded when the connection writes their
// responses, not when Send queues them: while the write of token 0's
// response is held, tokens 1 and 2, already sent, are not recorded; once
// it goes, all are.
func TestEmitListenerGRPCStream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []int
	rec := func(e Emission) {
		mu.Lock()
		got = append(got, e.Index)
		mu.Unlock()
	}
	recorded := func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
	ml := &markListener{Listener: ln, mark: []byte("tok-0"), reached: make(chan struct{}), gate: make(chan struct{})}
	wire := NewEmitListener(ml, rec, true)
	g := &chanGen{toks: make(chan GenToken), asked: make(chan struct{})}
	srv := NewHookedGRPCServer(g, GRPCHooks{Emit: rec, Wire: wire})
	go func() { _ = srv.Serve(wire) }()
	t.Cleanup(srv.Stop)

	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	st, err := inferencepb.NewGRPCInferenceServiceClient(cc).ModelStreamInfer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	text := binary.LittleEndian.AppendUint32(nil, 1)
	if err := st.Send(&inferencepb.ModelInferRequest{ModelName: "m", Id: "g1",
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
			{Name: "text_input", Datatype: "BYTES", Shape: []int64{1}},
			{Name: "stream", Datatype: "BOOL", Shape: []int64{1}},
		},
		RawInputContents: [][]byte{append(text, 'x'), {1}}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		<-g.asked
		g.toks <- GenToken{Text: fmt.Sprintf("tok-%d", i), Index: i, Last: i == 2}
		if i == 0 {
			<-ml.reached // the connection writes token 0's response
		}
	}
	<-g.asked // tokens 1 and 2 sent too
	if r := recorded(); !slices.Equal(r, []int{0}) {
		t.Errorf("with token 0's write held, recorded %v: want token 0 only (its write has begun)", r)
	}
	close(ml.gate)
	close(g.toks)
	for i := range 3 {
		m, err := st.Recv()
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if id := m.GetInferResponse().GetId(); id != "g1" {
			t.Fatalf("response %d: id %q", i, id)
		}
	}
	if r := recorded(); !slices.Equal(r, []int{0, 1, 2}) {
		t.Errorf("recorded %v, want tokens 0, 1, 2", r)
	}
}
