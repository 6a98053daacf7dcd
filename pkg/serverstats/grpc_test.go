package serverstats

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/triton"
)

// statsServer answers ModelStatistics with answer, recording the metadata
// it was sent.
type statsServer struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
	answer func(ctx context.Context) (*inferencepb.ModelStatisticsResponse, error)
	md     chan metadata.MD
}

func (s *statsServer) ModelStatistics(ctx context.Context, _ *inferencepb.ModelStatisticsRequest) (*inferencepb.ModelStatisticsResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	select {
	case s.md <- md:
	default:
	}
	return s.answer(ctx)
}

func serveGRPC(t *testing.T, s *statsServer) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.MaxSendMsgSize(64 << 20))
	inferencepb.RegisterGRPCInferenceServiceServer(gs, s)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	return ln.Addr().String()
}

// Over gRPC: the run's headers go as metadata; an answer over MaxBytes is
// refused, a slow one cut at the timeout; neither is "not offered".
func TestGRPCHostileAndHeaders(t *testing.T) {
	one := triton.StatisticsToPB(triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{{Name: "m", Version: "1", InferenceCount: 4,
		InferenceStats: triton.InferStatistics{Success: triton.Duration{Count: 4, NS: 40}}}}})
	s := &statsServer{md: make(chan metadata.MD, 1), answer: func(context.Context) (*inferencepb.ModelStatisticsResponse, error) { return one, nil }}
	r := open(t, "grpc://"+serveGRPC(t, s))
	if got, err := r.Read(t.Context()); err != nil || len(got) != 1 || got[0].InferenceCount != 4 {
		t.Fatalf("read %+v, %v", got, err)
	}
	if md := <-s.md; strings.Join(md.Get("x-test"), ",") != "1" {
		t.Errorf("metadata %v: want the run's header x-test: 1", md)
	}

	huge := triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{{Name: strings.Repeat("m", MaxBytes+1)}}}
	s = &statsServer{md: make(chan metadata.MD, 1), answer: func(context.Context) (*inferencepb.ModelStatisticsResponse, error) {
		return triton.StatisticsToPB(huge), nil
	}}
	r = open(t, "grpc://"+serveGRPC(t, s))
	if _, err := r.Read(t.Context()); err == nil || NotOffered(err) || !strings.Contains(err.Error(), "larger than max") {
		t.Errorf("an answer over %d bytes: %v", MaxBytes, err)
	}

	s = &statsServer{md: make(chan metadata.MD, 1), answer: func(ctx context.Context) (*inferencepb.ModelStatisticsResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	r = open(t, "grpc://"+serveGRPC(t, s))
	r.timeout = 200 * time.Millisecond
	began := time.Now()
	_, err := r.Read(t.Context())
	if took := time.Since(began); err == nil || NotOffered(err) || !errors.Is(err, context.DeadlineExceeded) || took > 5*time.Second {
		t.Errorf("a server that never answers: %v after %v", err, took)
	}
}

// Over HTTP the run's headers are sent with every read.
func TestHTTPHeadersSent(t *testing.T) {
	got := make(chan string, 1)
	addr := serveRaw(t, func(c net.Conn) {
		req := readRequest(c)
		if req != nil {
			got <- req.Method + " " + req.URL.Path + " X-Test=" + req.Header.Get("X-Test")
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: " + itoa(len(okBody)) + "\r\n\r\n" + okBody))
	})
	r := open(t, "http://"+addr)
	if m, err := r.Read(t.Context()); err != nil || len(m) != 1 || m[0].InferenceStats.Queue.NS != 30 {
		t.Fatalf("read %+v, %v", m, err)
	}
	if line := <-got; line != "GET /v2/models/m/stats X-Test=1" {
		t.Errorf("request %q", line)
	}
}
