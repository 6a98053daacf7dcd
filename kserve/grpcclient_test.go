package kserve

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

func TestGRPCCallFail(t *testing.T) {
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name       string
		ctx        context.Context
		trailer    bool // the server's status arrived
		err        error
		want       []error
		notWant    []error
		wantPlain  bool // exactly an *Error with the status's code
		wantStatus codes.Code
	}{
		{name: "server NOT_FOUND", ctx: context.Background(), trailer: true, err: status.Error(codes.NotFound, "no model"),
			want: []error{ErrNotFound}, notWant: []error{ErrTransport}, wantPlain: true, wantStatus: codes.NotFound},
		{name: "server UNAVAILABLE", ctx: context.Background(), trailer: true, err: status.Error(codes.Unavailable, "queue full"),
			want: []error{ErrUnavailable}, notWant: []error{ErrTransport}, wantPlain: true, wantStatus: codes.Unavailable},
		{name: "connection refused", ctx: context.Background(), err: status.Error(codes.Unavailable, "connection error"),
			want: []error{ErrUnavailable, ErrTransport}, wantStatus: codes.Unavailable},
		{name: "cancelled", ctx: expired, err: status.Error(codes.Canceled, "context canceled"),
			want: []error{context.Canceled}, notWant: []error{ErrTransport}, wantStatus: codes.Canceled},
		{name: "not a status", ctx: context.Background(), err: io.ErrUnexpectedEOF,
			want: []error{ErrTransport, io.ErrUnexpectedEOF}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			call := newGRPCCall(tc.ctx)
			if tc.trailer {
				// What grpc-go does when the status frame arrives.
				grpcTrailerWatch{}.HandleRPC(call, &stats.InTrailer{Client: true})
			}
			err := call.fail(tc.err)
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
			if ke, ok := errors.AsType[*Error](err); tc.wantStatus != codes.OK && (!ok || ke.Code != tc.wantStatus || ke.HTTPStatus != 0) {
				t.Errorf("%#v: want an *Error with code %v", err, tc.wantStatus)
			}
			if _, plain := err.(*Error); plain != tc.wantPlain {
				t.Errorf("%#v: plain *Error = %v, want %v", err, plain, tc.wantPlain)
			}
		})
	}
}

func TestGRPCCallKeepsContextValues(t *testing.T) {
	type key struct{}
	call := newGRPCCall(context.WithValue(context.Background(), key{}, "v"))
	if call.Value(key{}) != "v" || call.Value(grpcCallKey{}) != call {
		t.Error("the call context hides its parent's values or its own")
	}
}
