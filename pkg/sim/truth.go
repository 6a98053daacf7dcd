package sim

import "time"

// truth is the simulation's own record of a model version's executions,
// kept where the engine decides their times (launch), apart from the
// statistics that Infer records once a request is answered: the tests of
// a reader of the statistics compare the two.
type truth struct {
	jobs, samples, executions uint64
	queueNS, inferNS          uint64
}

// launched records an execution of the jobs from first (linked by next)
// of samples samples, from start to end. Called with the engine's lock held.
func (t *truth) launched(first *job, samples int, start, end time.Time) {
	t.executions++
	t.samples += uint64(samples)
	for j := first; j != nil; j = j.next {
		t.jobs++
		t.queueNS += uint64(max(start.Sub(j.arrival), 0))
		// A transient's hold counts as compute_infer, as Infer records it.
		t.inferNS += uint64(max(end.Add(j.hold).Sub(start), 0))
	}
}

// Truth is the simulation's record of a model version's requests, as the
// engine decided their times: every request that started executing is
// counted once, when it started, whether or not its caller then waited for
// its answer. After a run whose requests were all answered, its delta is
// what the statistics extension's should say: Requests the success count,
// QueueNs and InferNs the queue and compute_infer times, Executions the
// execution count, Samples the inference count.
type Truth struct {
	Requests, Samples, Executions uint64
	QueueNs, InferNs              uint64
}

// Truth is model's version's record (version "": the default version).
func (s *Server) Truth(model, version string) (Truth, error) {
	e, err := s.engine(model, version)
	if err != nil {
		return Truth{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.truth
	return Truth{Requests: t.jobs, Samples: t.samples, Executions: t.executions, QueueNs: t.queueNS, InferNs: t.inferNS}, nil
}
