// Checks netloadgen's KServe v2 clients against the KServe Python model server.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
)

var fails int

func check(name string, err error) {
	if err != nil {
		fails++
		fmt.Printf("FAIL %-34s %v\n", name, err)
		return
	}
	fmt.Printf("PASS %s\n", name)
}

func fp32(vals []float32) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func input() []float32 {
	v := make([]float32, 16)
	for i := range v {
		v[i] = float32(i + 1)
	}
	return v
}

func req(model string) *kserve.InferRequest {
	return &kserve.InferRequest{Model: model, Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: fp32(input())}}}
}

func checkEcho(r *kserve.InferResponse, err error) error {
	if err != nil {
		return err
	}
	if len(r.Outputs) != 1 || r.Outputs[0].Name != "OUTPUT0" || string(r.Outputs[0].Data) != string(fp32(input())) {
		return fmt.Errorf("unexpected echo response %+v", r)
	}
	return nil
}

func checkMulti(r *kserve.InferResponse, err error) error {
	if err != nil {
		return err
	}
	var sum, text *kserve.Tensor
	for i := range r.Outputs {
		switch r.Outputs[i].Name {
		case "SUM":
			sum = &r.Outputs[i]
		case "TEXT":
			text = &r.Outputs[i]
		}
	}
	if sum == nil || text == nil {
		return fmt.Errorf("missing outputs: %+v", r.Outputs)
	}
	iv, e := kserve.Int64s(sum.Datatype, sum.Data)
	if e != nil || sum.Datatype != kserve.Int32 || len(iv) != 1 || iv[0] != 136 {
		return fmt.Errorf("SUM = %v %v (%v)", sum.Datatype, iv, e)
	}
	el, e := kserve.BytesElements(text.Data)
	if e != nil || len(el) != 2 || string(el[0]) != "hello" || string(el[1]) != "kserve" {
		return fmt.Errorf("TEXT = %q (%v)", el, e)
	}
	return nil
}

func httpChecks(ctx context.Context, base string, binary bool, tag string) {
	c, err := httpclient.New(base, httpclient.Binary(binary))
	if err != nil {
		check(tag+" NewHTTPClient", err)
		return
	}
	defer c.Close()
	if !binary {
		live, err := c.ServerLive(ctx)
		if err == nil && !live {
			err = errors.New("live=false")
		}
		check(tag+" ServerLive", err)
		ready, err := c.ServerReady(ctx)
		if err == nil && !ready {
			err = errors.New("ready=false")
		}
		check(tag+" ServerReady", err)
		md, err := c.ServerMetadata(ctx)
		if err == nil && md.Name != "kserve" {
			err = fmt.Errorf("metadata %+v", md)
		}
		fmt.Printf("     server metadata: %+v\n", md)
		check(tag+" ServerMetadata", err)
		mm, err := c.ModelMetadata(ctx, "echo", "")
		if err == nil && (mm.Name != "echo" || len(mm.Inputs) != 1 || mm.Inputs[0].Datatype != kserve.FP32) {
			err = fmt.Errorf("model metadata %+v", mm)
		}
		check(tag+" ModelMetadata", err)
		mr, err := c.ModelReady(ctx, "echo", "")
		if err == nil && !mr {
			err = errors.New("ready=false")
		}
		check(tag+" ModelReady", err)
		_, err = c.ModelReady(ctx, "nope", "")
		if err == nil || !errors.Is(err, kserve.ErrNotFound) {
			err = fmt.Errorf("want ErrNotFound, got %v", err)
		} else {
			fmt.Printf("     (unknown model ready: %v)\n", err)
			err = nil
		}
		check(tag+" ModelReady unknown->ErrNotFound", err)
		_, err = c.ModelMetadata(ctx, "nope", "")
		if err == nil || !errors.Is(err, kserve.ErrNotFound) {
			err = fmt.Errorf("want ErrNotFound, got %v", err)
		} else {
			err = nil
		}
		check(tag+" ModelMetadata unknown->ErrNotFound", err)
	}
	check(tag+" Infer echo FP32", checkEcho(c.Infer(ctx, req("echo"))))
	check(tag+" Infer multi INT32+BYTES", checkMulti(c.Infer(ctx, req("multi"))))
	_, err = c.Infer(ctx, req("nope"))
	if err == nil || !errors.Is(err, kserve.ErrNotFound) {
		err = fmt.Errorf("want ErrNotFound, got %v", err)
	} else {
		err = nil
	}
	check(tag+" Infer unknown->ErrNotFound", err)
	p, err := c.PrepareInfer(req("multi"))
	if err != nil {
		check(tag+" PrepareInfer", err)
		return
	}
	check(tag+" InferPrepared", checkMulti(c.InferPrepared(ctx, p)))
	check(tag+" InferPreparedCheck", c.InferPreparedCheck(ctx, p))
	// malformed: shape says 16 elements, data has 15 (encoded by hand to bypass client checks)
	bad := req("echo")
	bad.Outputs = []kserve.RequestedOutput{{Name: "NOPE"}} // server rejects an unknown requested output
	_, err = c.Infer(ctx, bad)
	var ke *kserve.Error
	if err == nil {
		err = errors.New("malformed request accepted")
	} else if errors.As(err, &ke) && (ke.HTTPStatus == 400 || ke.HTTPStatus == 422 || ke.HTTPStatus == 500) {
		fmt.Printf("     (malformed -> HTTP %d code %v: %.120s)\n", ke.HTTPStatus, ke.Code, ke.Message)
		err = nil
	} else {
		fmt.Printf("     (malformed -> %T %v)\n", err, err)
		if errors.As(err, &ke) {
			err = nil // rejected locally or by server
		}
	}
	check(tag+" malformed request rejected", err)
}

func main() {
	ctx := context.Background()
	base := os.Args[1]
	grpcTarget := os.Args[2]

	httpChecks(ctx, base, false, "HTTP/json")
	httpChecks(ctx, base, true, "HTTP/binary")

	// Diagnostic: same binary requests through a proxy that only adds Content-Type: application/octet-stream.
	u, _ := url.Parse(base)
	// Rewrite keeps what NewSingleHostReverseProxy's (deprecated) Director
	// did: the target URL, the client's Host, X-Forwarded-For.
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.Host = pr.In.Host
		pr.SetXForwarded()
		r := pr.Out
		if r.Header.Get(kserve.HeaderInferenceContentLength) != "" && r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/octet-stream")
		}
	}}
	rp.ModifyResponse = func(r *http.Response) error {
		if r.Request.URL.Path == "/v2/models/multi/infer" {
			fmt.Printf("     (binary response via shim: status %d, Transfer-Encoding %v, Content-Length %d, IHCL %q)\n",
				r.StatusCode, r.TransferEncoding, r.ContentLength, r.Header.Get(kserve.HeaderInferenceContentLength))
		}
		return nil
	}
	shim := httptest.NewServer(rp)
	httpChecks(ctx, shim.URL, true, "HTTP/binary+octet-shim")
	shim.Close()

	// idle keep-alive close (uvicorn timeout_keep_alive = 5 s)
	c, _ := httpclient.New(base, httpclient.Binary(false))
	var err error
	for i := 0; i < 4 && err == nil; i++ {
		err = checkEcho(c.Infer(ctx, req("echo")))
	}
	r0 := c.Retries()
	fmt.Printf("     idle 7s ...\n")
	time.Sleep(7 * time.Second)
	for i := 0; i < 4 && err == nil; i++ {
		err = checkEcho(c.Infer(ctx, req("echo")))
	}
	if err == nil {
		_, err = c.ServerLive(ctx)
	}
	fmt.Printf("     Retries before idle %d, after %d\n", r0, c.Retries())
	if err == nil && c.Retries() == r0 {
		err = fmt.Errorf("no retry counted after idle close (server kept the connection?)")
	}
	check("HTTP idle keep-alive close + retry", err)
	c.Close()

	// gRPC
	g, err := grpcclient.New(grpcTarget, grpcclient.WithConns(2), grpcclient.WithEagerConnect(5*time.Second))
	if err != nil {
		check("gRPC NewGRPCClient", err)
		os.Exit(1)
	}
	defer g.Close()
	live, err := g.ServerLive(ctx)
	if err == nil && !live {
		err = errors.New("live=false")
	}
	check("gRPC ServerLive", err)
	ready, err := g.ServerReady(ctx)
	if err == nil && !ready {
		err = errors.New("ready=false")
	}
	check("gRPC ServerReady", err)
	md, err := g.ServerMetadata(ctx)
	if err == nil && md.Name != "kserve" {
		err = fmt.Errorf("metadata %+v", md)
	}
	check("gRPC ServerMetadata", err)
	mm, err := g.ModelMetadata(ctx, "multi", "")
	if err == nil && (mm.Name != "multi" || len(mm.Outputs) != 2) {
		err = fmt.Errorf("model metadata %+v", mm)
	}
	check("gRPC ModelMetadata", err)
	mr, err := g.ModelReady(ctx, "echo", "")
	if err == nil && !mr {
		err = errors.New("ready=false")
	}
	check("gRPC ModelReady", err)
	_, err = g.ModelReady(ctx, "nope", "")
	if !errors.Is(err, kserve.ErrNotFound) {
		err = fmt.Errorf("want ErrNotFound, got %v", err)
	} else {
		err = nil
	}
	check("gRPC ModelReady unknown->ErrNotFound", err)
	check("gRPC Infer echo FP32", checkEcho(g.Infer(ctx, req("echo"))))
	check("gRPC Infer multi INT32+BYTES", checkMulti(g.Infer(ctx, req("multi"))))
	_, err = g.Infer(ctx, req("nope"))
	if !errors.Is(err, kserve.ErrNotFound) {
		err = fmt.Errorf("want ErrNotFound, got %v", err)
	} else {
		err = nil
	}
	check("gRPC Infer unknown->ErrNotFound", err)
	gp, err := g.PrepareInfer(req("multi"))
	if err == nil {
		check("gRPC InferPrepared", checkMulti(g.InferPrepared(ctx, gp)))
		check("gRPC InferPreparedDiscard", g.InferPreparedDiscard(ctx, gp))
	} else {
		check("gRPC PrepareInfer", err)
	}
	gb := req("echo")
	gb.Inputs[0].Datatype = kserve.BF16
	gb.Inputs[0].Data = make([]byte, 32)
	_, err = g.Infer(ctx, gb)
	var gke *kserve.Error
	if errors.As(err, &gke) && gke.HTTPStatus == 0 {
		fmt.Printf("     (gRPC malformed BF16 -> code %v: %.100s)\n", gke.Code, gke.Message)
		err = nil
	} else {
		err = fmt.Errorf("want server *Error, got %v", err)
	}
	check("gRPC malformed request rejected", err)
	fmt.Printf("TOTAL FAIL %d\n", fails)
}
