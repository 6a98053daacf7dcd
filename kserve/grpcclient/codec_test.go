package grpcclient_test

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// rawCodec hands a test server the message bytes as they came off the wire.
type rawCodec struct{}

type rawMsg struct{ b []byte }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(*rawMsg).b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	v.(*rawMsg).b = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "raw" }

type rawSeen struct {
	body        []byte
	contentType []string
}

// rawListener remembers its connections, so that a test can break them.
type rawListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *rawListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

// drop closes every connection accepted so far, below gRPC.
func (l *rawListener) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
}

// rawServer serves every call with answer, given the request's bytes as they
// came off the wire, and reports what each request carried.
func rawServer(t *testing.T, answer func(st grpc.ServerStream, body []byte) error) (string, <-chan rawSeen) {
	addr, seen, _ := rawServerListener(t, answer)
	return addr, seen
}

func rawServerListener(t *testing.T, answer func(st grpc.ServerStream, body []byte) error) (string, <-chan rawSeen, *rawListener) {
	t.Helper()
	seen := make(chan rawSeen, 16)
	s := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		var m rawMsg
		if err := st.RecvMsg(&m); err != nil {
			return err
		}
		md, _ := metadata.FromIncomingContext(st.Context())
		seen <- rawSeen{body: m.b, contentType: md.Get("content-type")}
		return answer(st, m.b)
	}))
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &rawListener{Listener: nl}
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String(), seen, l
}

// rawReply answers every call with reply's bytes, whatever they are.
func rawReply(reply []byte) func(grpc.ServerStream, []byte) error {
	return func(st grpc.ServerStream, _ []byte) error { return st.SendMsg(&rawMsg{b: reply}) }
}

func TestGRPCPreparedWire(t *testing.T) {
	okResp, err := proto.Marshal(&inferencepb.ModelInferResponse{ModelName: "m", Id: "r",
		Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: "Y", Datatype: "FP32", Shape: []int64{1, 2}}},
		RawOutputContents: [][]byte{{0, 0, 128, 63, 0, 0, 0, 64}}})
	if err != nil {
		t.Fatal(err)
	}
	garbage := []byte{0xff, 0xff, 0xff} // not a protobuf message
	req := &kserve.InferRequest{Model: "m", ID: "r", Inputs: []kserve.Tensor{
		{Name: "X", Datatype: kserve.FP32, Shape: []int64{1, 2}, Data: []byte{0, 0, 128, 63, 0, 0, 0, 64}}}}
	tests := []struct {
		name       string
		reply      []byte
		discard    bool
		wantErr    codes.Code // codes.OK: no error
		wantOutput bool
	}{
		{name: "decoded", reply: okResp, wantOutput: true},
		{name: "discarded", reply: okResp, discard: true},
		{name: "undecodable decoded", reply: garbage, wantErr: codes.Internal},
		// A discarded response is not decoded, but bytes that are not a
		// protobuf message still fail the call.
		{name: "undecodable discarded", reply: garbage, discard: true, wantErr: codes.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr, seen := rawServer(t, rawReply(tc.reply))
			c, err := grpcclient.New(addr, grpcclient.WithConns(1), grpcclient.WithEagerConnect(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			p, err := c.PrepareInfer(req)
			if err != nil {
				t.Fatal(err)
			}
			// Twice: the shared pre-encoded bytes survive a send.
			for range 2 {
				var resp *kserve.InferResponse
				if tc.discard {
					err = c.InferPreparedDiscard(t.Context(), p)
				} else {
					resp, err = c.InferPrepared(t.Context(), p)
				}
				if got := status.Code(err); err != nil && tc.wantErr == codes.OK || err == nil && tc.wantErr != codes.OK {
					t.Fatalf("err = %v, want code %v", err, tc.wantErr)
				} else if err != nil {
					if ke, ok := err.(*kserve.Error); !ok || ke.Code != tc.wantErr {
						t.Fatalf("err = %#v (%v), want a *kserve.Error with code %v", err, got, tc.wantErr)
					}
				}
				if tc.wantOutput && (resp == nil || len(resp.Outputs) != 1 || !bytes.Equal(resp.Outputs[0].Data, []byte{0, 0, 128, 63, 0, 0, 0, 64})) {
					t.Errorf("response = %+v, want output Y", resp)
				}
				s := <-seen
				var got inferencepb.ModelInferRequest
				if err := proto.Unmarshal(s.body, &got); err != nil || !proto.Equal(&got, p.Message()) {
					t.Errorf("server received %v (%v), want %v", &got, err, p.Message())
				}
				if len(s.contentType) != 1 || s.contentType[0] != "application/grpc" {
					t.Errorf("content-type %q, want application/grpc", s.contentType)
				}
			}
		})
	}
}

func TestGRPCPreparedStream(t *testing.T) {
	addr, seen := rawServer(t, rawReply(nil))
	c, err := grpcclient.New(addr, grpcclient.WithConns(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.PrepareInfer(&kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{
		{Name: "X", Datatype: kserve.Int32, Shape: []int64{1}, Data: []byte{7, 0, 0, 0}}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.StreamInfer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SendPrepared(p); err != nil {
		t.Fatal(err)
	}
	s := <-seen
	var got inferencepb.ModelInferRequest
	if err := proto.Unmarshal(s.body, &got); err != nil || !proto.Equal(&got, p.Message()) {
		t.Errorf("server received %v (%v), want %v", &got, err, p.Message())
	}
	if err := st.SendPrepared(nil); err == nil {
		t.Error("SendPrepared(nil) succeeded")
	}
}

// One prepared request sent from many goroutines at once over two
// connections: grpc-go shares its pre-encoded bytes without writing to them
// (run with -race), and every server sees the same message.
func TestGRPCPreparedConcurrent(t *testing.T) {
	const senders, each = 8, 16
	addr, seen := rawServer(t, rawReply(nil))
	c, err := grpcclient.New(addr, grpcclient.WithConns(2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.PrepareInfer(&kserve.InferRequest{Model: "m", ID: "same", Inputs: []kserve.Tensor{
		{Name: "X", Datatype: kserve.Int32, Shape: []int64{2}, Data: []byte{1, 0, 0, 0, 2, 0, 0, 0}}}})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, senders)
	for range senders {
		go func() {
			var err error
			for range each {
				if err = c.InferPreparedDiscard(t.Context(), p); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	check := func(s rawSeen) {
		var got inferencepb.ModelInferRequest
		if err := proto.Unmarshal(s.body, &got); err != nil || !proto.Equal(&got, p.Message()) {
			t.Errorf("server received %v (%v), want %v", &got, err, p.Message())
		}
	}
	received := 0
	// The server reports a request before it answers, so once every sender
	// is done every request has been reported.
	for finished := 0; finished < senders; {
		select {
		case s := <-seen:
			check(s)
			received++
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
			finished++
		}
	}
	for len(seen) > 0 {
		check(<-seen)
		received++
	}
	if received != senders*each {
		t.Errorf("server saw %d requests, want %d", received, senders*each)
	}
}
