package grpcclient_test

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
)

// An UNAVAILABLE the server answered is the server's, however it framed it;
// one grpc-go made up for a connection that broke first is a transport
// failure.
func TestGRPCUnavailableSource(t *testing.T) {
	tests := []struct {
		name          string
		answer        func(st grpc.ServerStream, l func()) error
		wantTransport bool
	}{
		{name: "status only (trailers-only response)", answer: func(grpc.ServerStream, func()) error {
			return status.Error(codes.Unavailable, "queue full")
		}},
		{name: "status after headers", answer: func(st grpc.ServerStream, _ func()) error {
			if err := st.SendHeader(metadata.MD{}); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "queue full")
		}},
		{name: "status with trailer metadata", answer: func(st grpc.ServerStream, _ func()) error {
			st.SetTrailer(metadata.Pairs("retry-after", "1"))
			return status.Error(codes.Unavailable, "queue full")
		}},
		{name: "connection broken before any answer", wantTransport: true, answer: func(st grpc.ServerStream, drop func()) error {
			drop()
			<-st.Context().Done()
			return st.Context().Err()
		}},
	}
	p := &kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{{Name: "X", Datatype: kserve.Int32, Shape: []int64{1}, Data: make([]byte, 4)}}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var l *rawListener
			addr, _, l := rawServerListener(t, func(st grpc.ServerStream, _ []byte) error { return tc.answer(st, l.drop) })
			c, err := grpcclient.New(addr, grpcclient.WithConns(1), grpcclient.WithEagerConnect(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			prep, err := c.PrepareInfer(p)
			if err != nil {
				t.Fatal(err)
			}
			calls := map[string]func() error{
				"InferPreparedDiscard": func() error { return c.InferPreparedDiscard(t.Context(), prep) },
				"ServerLive":           func() error { _, err := c.ServerLive(t.Context()); return err },
			}
			for name, call := range calls {
				err := call()
				if !errors.Is(err, kserve.ErrUnavailable) || errors.Is(err, kserve.ErrTransport) != tc.wantTransport {
					t.Errorf("%s: %v: want kserve.ErrUnavailable, kserve.ErrTransport %v", name, err, tc.wantTransport)
				}
				if tc.wantTransport {
					break // the connection is gone; one call shows it
				}
			}
		})
	}
}
