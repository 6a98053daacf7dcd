package sut

import (
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/grpcloop"
	"github.com/netloadgen/netloadgen/pkg/qsl"
)

// GRPCLoop is Loop's counterpart for gRPC: an engine SUT that sends
// pre-encoded ModelInfer calls through a grpcloop.Loop on the engine's
// issuer goroutine (loadgen.Poller). Queries become calls as in Loop (the
// same tags, chunking of Offline's query within MaxInflight and completion
// of each chunk: polled). It serves one run at a time, and only an engine
// that polls it (a run on the system clock) ever sees its answers.
type GRPCLoop struct {
	polled[*grpcloop.Request]
	loop      *grpcloop.Loop
	authority string   // the :authority of every call
	md        []string // metadata of every call, name/value pairs
}

// GRPCLoopOptions configure the connections of a GRPCLoop.
type GRPCLoopOptions struct {
	Addr  string // host:port
	Conns int    // HTTP/2 connections (default 4)
	// Authority is every call's :authority ("": Addr), a Host header's
	// name; Metadata are further metadata, name/value pairs with
	// lowercased names (grpcclient.Client's Authority and Metadata).
	Authority string
	Metadata  []string
	// Slack is the timer slack of the sleeps until a due time (0: the
	// thread's own; grpcloop.Config.Slack).
	Slack time.Duration
}

// NewGRPCLoop builds a GRPCLoop SUT for a performance run. It fails where
// grpcloop does not run (not Linux: match grpcloop.ErrUnsupported and fall
// back to Network with the grpc-go client) and for response capture, which
// needs decoded answers.
func NewGRPCLoop(lib qsl.Library, o Options, lo GRPCLoopOptions) (*GRPCLoop, error) {
	if o.Capture {
		return nil, fmt.Errorf("sut: the gRPC loop client does not return responses (Options.Capture)")
	}
	shape, err := New(nil, lib, o)
	if err != nil {
		return nil, err
	}
	l := &GRPCLoop{authority: lo.Authority, md: lo.Metadata}
	if l.authority == "" {
		l.authority = lo.Addr
	}
	l.polled = newPolled(shape, l.encode)
	cfg := grpcloop.Config{Addr: lo.Addr, Conns: lo.Conns, Slack: lo.Slack, Timeout: o.Timeout, OnDone: l.onDone}
	if o.Expect != nil {
		cfg.Check = l.check
	}
	l.loop, err = grpcloop.New(cfg)
	if err != nil {
		return nil, err
	}
	l.tr = l.loop
	return l, nil
}

// check is the answer check: the message of the answer to the call tag
// names, at its batch size.
func (l *GRPCLoop) check(tag uint64, msg []byte) error {
	return l.o.Expect.CheckProto(msg, l.batchOf(tag))
}

// encode builds the call for samples.
func (l *GRPCLoop) encode(samples []int) (*grpcloop.Request, error) {
	req, err := l.shape.request(samples)
	if err != nil {
		return nil, err
	}
	msg, err := kserve.MarshalGRPCInfer(req)
	if err != nil {
		return nil, fmt.Errorf("sut: encode samples %v: %w", samples, err)
	}
	r, err := grpcloop.NewRequest(grpcloop.ModelInferPath, l.authority, l.o.Timeout, msg, l.md...)
	if err != nil {
		return nil, fmt.Errorf("sut: encode samples %v: %w", samples, err)
	}
	return r, nil
}
