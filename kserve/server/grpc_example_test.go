package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/server"
)

// A server over a Backend, and a client sending one pre-encoded request.
func ExampleNewGRPCServer() {
	srv := server.NewGRPCServer(&grpcFake{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()

	c, err := grpcclient.New(lis.Addr().String(), grpcclient.WithConns(2), grpcclient.WithEagerConnect(5*time.Second))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	p, err := c.PrepareInfer(grpcEchoRequest("q1"))
	if err != nil {
		panic(err)
	}
	resp, err := c.InferPrepared(context.Background(), p)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.ID, resp.Outputs[0].Name, resp.Outputs[0].Datatype, resp.Outputs[0].Shape)

	_, err = c.ModelMetadata(context.Background(), "nope", "")
	fmt.Println(errors.Is(err, kserve.ErrNotFound), errors.Is(err, kserve.ErrTransport))
	// Output:
	// q1 OUT_X FP32 [1 16]
	// true false
}
