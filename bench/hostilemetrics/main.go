// Command hostilemetrics serves Prometheus endpoints that fail a scrape
// each its own way, for bench/server-metrics.sh: a loopback server whose
// paths are the hostile kinds of docs/server-metrics.md.
//
//	/huge       a 10 MB body (over a 1 MiB --server-metrics-max-bytes; under the default it is 10 MB of comments)
//	/series     100,000 series
//	/slow       5 s before any answer
//	/slowbody   a byte every 10 ms, for ever
//	/endless    a body without end, as fast as it goes
//	/malformed  text the parser refuses
//	/404        not found
//	/redirect   a 302
//	/reset      the connection reset after the request
//
// It writes its address to -ready-file once it listens, and ends on
// SIGINT/SIGTERM.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	ready := flag.String("ready-file", "", "write the address here once listening")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	srv := &http.Server{Handler: mux(), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

func mux() *http.ServeMux {
	m := http.NewServeMux()
	// The bodies are made once: serving them costs the copy, not their
	// making, so that this server (on the target's CPU in the benchmark)
	// takes as little as it can from the target beside it.
	huge := bytes.Repeat([]byte("# padding padding padding padding padding padding padding\n"), 10_000_000/58)
	var series bytes.Buffer
	fmt.Fprintln(&series, "# TYPE hostile_series gauge")
	for i := range 100_000 {
		fmt.Fprintf(&series, "hostile_series{i=\"%d\"} %d\n", i, i)
	}
	whole := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		}
	}
	m.HandleFunc("/huge", whole(huge))
	m.HandleFunc("/series", whole(series.Bytes()))
	m.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
			fmt.Fprintln(w, "slow 1")
		}
	})
	m.HandleFunc("/slowbody", func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
				if _, err := w.Write([]byte("#")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	})
	m.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		block := bytes.Repeat([]byte("# endless\n"), 1000)
		for r.Context().Err() == nil {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
	})
	m.HandleFunc("/malformed", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE x counter\nx{a=\"1\" 3\n")
	})
	m.HandleFunc("/404", http.NotFound)
	m.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/404", http.StatusFound)
	})
	m.HandleFunc("/reset", func(w http.ResponseWriter, _ *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			return
		}
		c, _, err := hj.Hijack()
		if err != nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	})
	return m
}
