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

// maxBatch is the model's max_batch_size.
const maxBatch = 64

// fixed holds the answers, one per batch size, each encoded once per form:
// the point of this server is to cost as little per request as a real
// KServe server can. An answer's OUTPUT0 is [batch, 16], as the model's
// metadata says ([-1, 16]): a load generator that checks answers against
// the metadata must find them right.
type fixed struct {
	byBatch [maxBatch + 1]*encoded // by batch size; 0 unused
}

// encoded is one answer in every form.
type encoded struct {
	resp       *kserve.InferResponse
	binBody    []byte // binary-extension body
	binJSONLen string // its Inference-Header-Content-Length
	jsonBody   []byte // pure JSON body
	pb         *inferencepb.ModelInferResponse
}

func newFixed() (*fixed, error) {
	f := &fixed{}
	for n := 1; n <= maxBatch; n++ {
		e, err := encode(n)
		if err != nil {
			return nil, err
		}
		f.byBatch[n] = e
	}
	return f, nil
}

// encode builds the answer to a request of batch n.
func encode(n int) (*encoded, error) {
	resp := &kserve.InferResponse{Model: modelName, Version: "1", Outputs: []kserve.Tensor{{
		Name: "OUTPUT0", Datatype: kserve.FP32, Shape: []int64{int64(n), 16}, Data: make([]byte, 64*n),
	}}}
	e := &encoded{resp: resp}
	var jsonLen int
	var err error
	if e.binBody, jsonLen, err = kserve.EncodeInferResponse(nil, resp, []bool{true}); err != nil {
		return nil, fmt.Errorf("encode binary response: %w", err)
	}
	e.binJSONLen = strconv.Itoa(jsonLen)
	if e.jsonBody, _, err = kserve.EncodeInferResponse(nil, resp, nil); err != nil {
		return nil, fmt.Errorf("encode JSON response: %w", err)
	}
	if e.pb, err = kserve.InferResponseToPB(resp); err != nil {
		return nil, fmt.Errorf("encode gRPC response: %w", err)
	}
	return e, nil
}

// answer is the answer to a request of batch n (1 when the request did not
// say); a batch over the model's, which the model would refuse, is encoded
// on the spot.
func (f *fixed) answer(n int64) *encoded {
	switch {
	case n < 1:
		n = 1
	case n > maxBatch:
		if e, err := encode(int(n)); err == nil {
			return e
		}
		n = 1
	}
	return f.byBatch[n]
}

var (
	inferSuffix = []byte("/infer")
	shapeKey    = []byte(`"shape"`)
)

// batchOf reads the first dimension of the first "shape" in a request's
// JSON: its first input's batch, without decoding the request.
func batchOf(json []byte) int64 {
	i := bytes.Index(json, shapeKey)
	if i < 0 {
		return 1
	}
	j := bytes.IndexByte(json[i:], '[')
	if j < 0 {
		return 1
	}
	n := int64(0)
	for _, c := range bytes.TrimLeft(json[i+j+1:], " \t\r\n") {
		if c < '0' || c > '9' || n > 1<<20 {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// httpHandler answers POST .../infer with the fixed body for the request's
// batch (binary when the request used the binary extension, as a KServe
// server would) and passes everything else to the control handler.
func (f *fixed) httpHandler(control fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsPost() || !bytes.HasSuffix(ctx.Path(), inferSuffix) {
			control(ctx)
			return
		}
		body := ctx.PostBody()
		if hl := ctx.Request.Header.Peek(kserve.HeaderInferenceContentLength); len(hl) > 0 {
			if n, err := strconv.Atoi(string(hl)); err == nil && n <= len(body) {
				body = body[:n]
			}
			e := f.answer(batchOf(body))
			ctx.Response.Header.Set(kserve.HeaderInferenceContentLength, e.binJSONLen)
			ctx.SetContentType("application/octet-stream")
			ctx.SetBody(e.binBody)
			return
		}
		ctx.SetContentType("application/json")
		ctx.SetBody(f.answer(batchOf(body)).jsonBody)
	}
}

const modelInferMethod = "/inference.GRPCInferenceService/ModelInfer"

// grpcInterceptor answers ModelInfer with the fixed message for the
// request's batch; grpc-go has already decoded the request, as any server
// must.
func (f *fixed) grpcInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if info.FullMethod == modelInferMethod {
		n := int64(1)
		if r, ok := req.(*inferencepb.ModelInferRequest); ok && len(r.GetInputs()) > 0 && len(r.GetInputs()[0].GetShape()) > 0 {
			n = r.GetInputs()[0].GetShape()[0]
		}
		return f.answer(n).pb, nil
	}
	return h(ctx, req)
}
