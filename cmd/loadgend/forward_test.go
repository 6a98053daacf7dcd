package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// echoModel answers every sample with its own bytes, so an accuracy log
// through any chain of servers must hold the samples themselves.
const echoModel = "name=echo8,fn=echo,dtype=FP32,dims=8,max_batch=4"

// TestAccuracyThroughForwardingFront: accuracy runs through a forwarding
// sutproxy, for every front transport (HTTP with binary and JSON clients,
// gRPC) and every way an upstream answers (HTTP JSON, HTTP binary, gRPC with
// KServe Python's binary_data_size; see sutproxytest.StartUpstream), answer
// every sample with what the upstream's echo model returned: neither hop's
// encoding parameters leak into the other.
func TestAccuracyThroughForwardingFront(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	data, samples := clsData(t)
	for _, style := range []string{sutproxytest.UpstreamHTTPJSON, sutproxytest.UpstreamHTTP, sutproxytest.UpstreamGRPC} {
		t.Run("upstream="+style, func(t *testing.T) {
			up := sutproxytest.StartUpstream(t, style, echoModel)
			front := sutproxytest.StartForward(t, up.URL)
			for _, transport := range transports {
				t.Run("front="+transport, func(t *testing.T) {
					dir := t.TempDir()
					args := append([]string{"--mode", "accuracy", "--target", targetOf(front, transport), "--model", "echo8",
						"--scenario", "Offline", "--data", data, "--performance-samples", "16", "--target-qps", "2000", "--out", dir},
						transportArgs(transport)...)
					if inv := runArgs(args...); inv.code != exitValid {
						t.Fatalf("accuracy run: %v", inv)
					}
					entries := readAccuracyLog(t, filepath.Join(dir, runlog.AccuracyFile))
					answered := map[int]bool{}
					for _, e := range entries {
						if e.QSLIndex >= len(samples) || !bytes.Equal(e.Data, samples[e.QSLIndex]) {
							t.Fatalf("sample %d answered %x, want its echo %x", e.QSLIndex, e.Data, samples[min(e.QSLIndex, len(samples)-1)])
						}
						answered[e.QSLIndex] = true
					}
					if len(entries) != len(samples) || len(answered) != len(samples) {
						t.Fatalf("%d entries for %d distinct samples, want each of %d once", len(entries), len(answered), len(samples))
					}
				})
			}
			if n := up.EncodingRequests(); n != 0 {
				t.Errorf("%d requests reached the upstream with the front client's binary_data parameters", n)
			}
		})
	}
}
