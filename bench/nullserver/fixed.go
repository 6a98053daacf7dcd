package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// fixed holds the one answer, encoded once per form: the point of this
// server is to cost as little per request as a real KServe server can.
type fixed struct {
	resp       *kserve.InferResponse
	binBody    []byte // binary-extension body
	binJSONLen string // its Inference-Header-Content-Length
	jsonBody   []byte // pure JSON body
	pb         *inferencepb.ModelInferResponse
}

func newFixed() (*fixed, error) {
	resp := &kserve.InferResponse{Model: modelName, Version: "1", Outputs: []kserve.Tensor{{
		Name: "OUTPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 64),
	}}}
	f := &fixed{resp: resp}
	var n int
	var err error
	if f.binBody, n, err = kserve.EncodeInferResponse(nil, resp, []bool{true}); err != nil {
		return nil, fmt.Errorf("encode binary response: %w", err)
	}
	f.binJSONLen = strconv.Itoa(n)
	if f.jsonBody, _, err = kserve.EncodeInferResponse(nil, resp, nil); err != nil {
		return nil, fmt.Errorf("encode JSON response: %w", err)
	}
	if f.pb, err = kserve.InferResponseToPB(resp); err != nil {
		return nil, fmt.Errorf("encode gRPC response: %w", err)
	}
	return f, nil
}

var inferSuffix = []byte("/infer")

// httpHandler answers POST .../infer with the fixed body (binary when the
// request used the binary extension, as a KServe server would) and passes
// everything else to the control handler.
func (f *fixed) httpHandler(control fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsPost() || !bytes.HasSuffix(ctx.Path(), inferSuffix) {
			control(ctx)
			return
		}
		if len(ctx.Request.Header.Peek(kserve.HeaderInferenceContentLength)) > 0 {
			ctx.Response.Header.Set(kserve.HeaderInferenceContentLength, f.binJSONLen)
			ctx.SetContentType("application/octet-stream")
			ctx.SetBody(f.binBody)
			return
		}
		ctx.SetContentType("application/json")
		ctx.SetBody(f.jsonBody)
	}
}

const modelInferMethod = "/inference.GRPCInferenceService/ModelInfer"

// grpcInterceptor answers ModelInfer with the fixed message; grpc-go has
// already decoded the request, as any server must.
func (f *fixed) grpcInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if info.FullMethod == modelInferMethod {
		return f.pb, nil
	}
	return h(ctx, req)
}
