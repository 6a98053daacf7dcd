package shardrec

import "github.com/netloadgen/netloadgen/pkg/recordwire"

// Ends are the workers' ends, by shard: what each worker's last chunk
// reported (its counts, its issue lateness), nil for a worker whose last
// chunk has not arrived. The coordinator fills result.json's workers[] from
// them.
func (r *Receiver) Ends() []*recordwire.End {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*recordwire.End, len(r.shards))
	for k := range r.shards {
		if st := &r.shards[k]; st.ended {
			e := st.end
			out[k] = &e
		}
	}
	return out
}
