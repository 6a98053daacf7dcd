package grpcclient

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve"
)

func TestGRPCCallFail(t *testing.T) {
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name       string
		ctx        context.Context
		answered   bool // the server's response began
		err        error
		want       []error
		notWant    []error
		wantPlain  bool // exactly a *kserve.Error with the status's code
		wantStatus codes.Code
	}{
		{name: "server NOT_FOUND", ctx: context.Background(), answered: true, err: status.Error(codes.NotFound, "no model"),
			want: []error{kserve.ErrNotFound}, notWant: []error{kserve.ErrTransport}, wantPlain: true, wantStatus: codes.NotFound},
		{name: "server UNAVAILABLE", ctx: context.Background(), answered: true, err: status.Error(codes.Unavailable, "queue full"),
			want: []error{kserve.ErrUnavailable}, notWant: []error{kserve.ErrTransport}, wantPlain: true, wantStatus: codes.Unavailable},
		{name: "connection refused", ctx: context.Background(), err: status.Error(codes.Unavailable, "connection error"),
			want: []error{kserve.ErrUnavailable, kserve.ErrTransport}, wantStatus: codes.Unavailable},
		{name: "cancelled", ctx: expired, err: status.Error(codes.Canceled, "context canceled"),
			want: []error{context.Canceled}, notWant: []error{kserve.ErrTransport}, wantStatus: codes.Canceled},
		{name: "not a status", ctx: context.Background(), err: io.ErrUnexpectedEOF,
			want: []error{kserve.ErrTransport, io.ErrUnexpectedEOF}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := grpcFail(tc.ctx, tc.err, tc.answered)
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("%v does not match %v", err, w)
				}
			}
			for _, w := range tc.notWant {
				if errors.Is(err, w) {
					t.Errorf("%v matches %v", err, w)
				}
			}
			if ke, ok := errors.AsType[*kserve.Error](err); tc.wantStatus != codes.OK && (!ok || ke.Code != tc.wantStatus || ke.HTTPStatus != 0) {
				t.Errorf("%#v: want a *kserve.Error with code %v", err, tc.wantStatus)
			}
			if _, plain := err.(*kserve.Error); plain != tc.wantPlain {
				t.Errorf("%#v: plain *kserve.Error = %v, want %v", err, plain, tc.wantPlain)
			}
		})
	}
}

// A pooled call must not carry the previous call's answer into the next:
// a transport failure would pass for the server's status.
func TestGRPCCallReuseForgetsAnswer(t *testing.T) {
	var calls grpcCalls
	for range 3 {
		c := calls.get(t.Context())
		if c.answered() {
			t.Fatal("a fresh call counts as answered")
		}
		c.header = metadata.Pairs("content-type", "application/grpc")
		c.trailer = metadata.Pairs("content-type", "application/grpc")
		if !c.answered() {
			t.Fatal("a call with response metadata does not count as answered")
		}
		calls.put(c)
	}
}
