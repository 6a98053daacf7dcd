package triton

// Sum adds statistics responses model by model (keyed by name and version),
// as a front over several servers reports them. LastInference is the latest.
func Sum(parts ...StatisticsResponse) StatisticsResponse {
	type key struct{ name, version string }
	index := map[key]int{}
	var out StatisticsResponse
	for _, p := range parts {
		for _, m := range p.ModelStats {
			k := key{m.Name, m.Version}
			i, ok := index[k]
			if !ok {
				index[k] = len(out.ModelStats)
				out.ModelStats = append(out.ModelStats, ModelStatistics{Name: m.Name, Version: m.Version})
				i = len(out.ModelStats) - 1
			}
			out.ModelStats[i].add(m)
		}
	}
	return out
}

func (d *Duration) add(o Duration) { d.Count += o.Count; d.NS += o.NS }

func (s *ModelStatistics) add(o ModelStatistics) {
	s.LastInference = max(s.LastInference, o.LastInference)
	s.InferenceCount += o.InferenceCount
	s.ExecutionCount += o.ExecutionCount
	a, b := &s.InferenceStats, o.InferenceStats
	a.Success.add(b.Success)
	a.Fail.add(b.Fail)
	a.Queue.add(b.Queue)
	a.ComputeInput.add(b.ComputeInput)
	a.ComputeInfer.add(b.ComputeInfer)
	a.ComputeOutput.add(b.ComputeOutput)
	a.CacheHit.add(b.CacheHit)
	a.CacheMiss.add(b.CacheMiss)
	for _, ob := range o.BatchStats {
		found := false
		for i := range s.BatchStats {
			if s.BatchStats[i].BatchSize == ob.BatchSize {
				sb := &s.BatchStats[i]
				sb.ComputeInput.add(ob.ComputeInput)
				sb.ComputeInfer.add(ob.ComputeInfer)
				sb.ComputeOutput.add(ob.ComputeOutput)
				found = true
				break
			}
		}
		if !found {
			s.BatchStats = append(s.BatchStats, ob)
		}
	}
}
