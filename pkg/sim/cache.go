package sim

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// maxCacheEntries bounds a caching model's memory: past it, new responses
// are not cached (the cache never evicts, so hits stay deterministic).
const maxCacheEntries = 1 << 16

// responseCache is a caching model's store: the outputs of every request
// answered, keyed by a hash of its inputs (names, datatypes, shapes, bytes)
// and the outputs it asked for. It is what a cheating SUT does, and what
// TEST04 and the caching check are there to catch.
type responseCache struct {
	seed    maphash.Seed
	mu      sync.Mutex
	entries map[uint64][]kserve.Tensor
	hits    duration
	misses  duration
}

func newResponseCache() *responseCache {
	return &responseCache{seed: maphash.MakeSeed(), entries: map[uint64][]kserve.Tensor{}}
}

// key hashes a checked request: its inputs in the model's order and the
// wanted outputs. 64 bits: a collision among a simulator's few thousand
// distinct samples is not a practical concern.
func (c *responseCache) key(ch checked) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var b [8]byte
	for _, in := range ch.ins {
		h.WriteString(in.Name)
		h.WriteString(string(in.Datatype))
		for _, d := range in.Shape {
			binary.LittleEndian.PutUint64(b[:], uint64(d))
			h.Write(b[:])
		}
		binary.LittleEndian.PutUint64(b[:], uint64(len(in.Data)))
		h.Write(b[:])
		h.Write(in.Data)
	}
	for _, w := range ch.want {
		binary.LittleEndian.PutUint64(b[:], uint64(w))
		h.Write(b[:])
	}
	return h.Sum64()
}

// get returns a copy of the cached outputs for key.
func (c *responseCache) get(key uint64) ([]kserve.Tensor, bool) {
	c.mu.Lock()
	outs, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	return cloneOutputs(outs), true
}

func (c *responseCache) put(key uint64, outs []kserve.Tensor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) < maxCacheEntries {
		c.entries[key] = cloneOutputs(outs)
	}
}

func cloneOutputs(outs []kserve.Tensor) []kserve.Tensor {
	cp := make([]kserve.Tensor, len(outs))
	for i, o := range outs {
		cp[i] = kserve.Tensor{Name: o.Name, Datatype: o.Datatype, Shape: slices.Clone(o.Shape), Data: slices.Clone(o.Data)}
	}
	return cp
}

// answerFromCache answers a request seen before: after the model's
// cache_hit_latency, without queueing or taking an instance. ok is false on
// a miss.
func (s *Server) answerFromCache(ctx context.Context, e *engine, req *kserve.InferRequest, c checked, key uint64, t0 time.Time) (*kserve.InferResponse, bool, error) {
	outs, ok := e.cache.get(key)
	if !ok {
		return nil, false, nil
	}
	if d := e.spec.CacheHitLatency.D(); d > 0 {
		fired := make(chan struct{})
		t := e.clk.AfterFunc(d, func() { close(fired) })
		select {
		case <-fired:
		case <-ctx.Done():
			t.Stop()
			e.req.fail.add(e.clk.Now().Sub(t0))
			return nil, true, contextError(ctx.Err())
		}
	}
	t1 := e.clk.Now()
	r := &e.req
	r.success.add(t1.Sub(t0))
	r.computeInput.add(t1.Sub(t0))
	r.inferences.Add(uint64(c.n))
	r.lastMS.Store(t1.UnixMilli())
	e.cache.hits.add(t1.Sub(t0))
	return &kserve.InferResponse{Model: e.spec.Name, Version: e.version, ID: req.ID, Outputs: outs}, true, nil
}
