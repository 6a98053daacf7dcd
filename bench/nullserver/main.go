// Command nullserver is the raw-transport target of the benchmarks: a
// fasthttp server and a grpc-go server answering every KServe v2 inference
// request to model "null" with a fixed, pre-encoded response (one per batch
// size, OUTPUT0 [batch, 16] as the metadata says), without decoding the
// request body (HTTP: the batch is read from the JSON header's first
// "shape") or running anything (gRPC). What a load
// generator achieves against it is the generator's and the transport's
// limit, not a model's. With --tls-cert and --tls-key both listeners speak
// TLS (bench/peers.sh tls). Not part of the product; see bench/peers.sh.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/netloadgen/netloadgen/kserve/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nullserver:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("nullserver", flag.ContinueOnError)
	httpAddr := fs.String("http-addr", "127.0.0.1:0", "HTTP listen address")
	grpcAddr := fs.String("grpc-addr", "127.0.0.1:0", "gRPC listen address")
	readyFile := fs.String("ready-file", "", "write {\"http\":ADDR,\"grpc\":ADDR} here once listening")
	certFile := fs.String("tls-cert", "", "serve TLS on both listeners with this certificate PEM file (with --tls-key)")
	keyFile := fs.String("tls-key", "", "the certificate's key PEM file (with --tls-cert)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var cert *tls.Certificate
	if *certFile != "" || *keyFile != "" {
		c, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return fmt.Errorf("--tls-cert, --tls-key: %w", err)
		}
		cert = &c
	}
	f, err := newFixed()
	if err != nil {
		return err
	}
	hl, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return fmt.Errorf("http listen: %w", err)
	}
	gl, err := net.Listen("tcp", *grpcAddr)
	if err != nil {
		return fmt.Errorf("grpc listen: %w", err)
	}
	b := nullBackend{f: f}
	control := server.NewHTTPHandler(b)
	hs := &fasthttp.Server{Handler: f.httpHandler(control.ServeFastHTTP), NoDefaultServerHeader: true, NoDefaultDate: true}
	gopts := []grpc.ServerOption{grpc.ChainUnaryInterceptor(f.grpcInterceptor)}
	if cert != nil {
		// HTTP/1.1 over TLS on the HTTP port; gRPC's TLS (ALPN h2) on the other.
		hl = tls.NewListener(hl, &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{"http/1.1"}})
		gopts = append(gopts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{*cert}})))
	}
	gs := server.NewGRPCServer(b, gopts...)
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(hl) }()
	go func() { errc <- gs.Serve(gl) }()
	if *readyFile != "" {
		addrs, _ := json.Marshal(map[string]string{"http": hl.Addr().String(), "grpc": gl.Addr().String()})
		if err := os.WriteFile(*readyFile, addrs, 0o644); err != nil {
			return fmt.Errorf("ready file: %w", err)
		}
	}
	slog.Info("nullserver listening", "http", hl.Addr().String(), "grpc", gl.Addr().String())
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	gs.Stop()
	if serr := hs.Shutdown(); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}
