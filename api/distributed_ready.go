package api

import "io"

// MaxWorkerReadyError bounds a ready's error text: it goes in the run's
// failure reason and the daemon's log.
const MaxWorkerReadyError = 4096

// DecodeWorkerReady reads a worker's ready strictly (unknown fields, a
// trailing value, an oversized body are refused) and checks its counts: a
// ready without an error must carry the QSL counts and trace length every
// worker of the run must agree on.
func DecodeWorkerReady(r io.Reader, lim Limits) (WorkerReady, error) {
	lim = lim.WithDefaults()
	var rd WorkerReady
	if err := decodeStrict(r, lim.MaxBodyBytes, &rd); err != nil {
		return WorkerReady{}, err
	}
	if len(rd.Error) > MaxWorkerReadyError {
		rd.Error = rd.Error[:MaxWorkerReadyError]
	}
	if rd.Error != "" {
		return rd, nil
	}
	switch {
	case rd.QSLTotalSampleCount <= 0:
		return WorkerReady{}, fieldErr("qsl_total_sample_count", "%d: want the worker's sample library's count, at least 1 (or error set)", rd.QSLTotalSampleCount)
	case rd.QSLPerformanceSampleCount <= 0 || rd.QSLPerformanceSampleCount > rd.QSLTotalSampleCount:
		return WorkerReady{}, fieldErr("qsl_performance_sample_count", "%d: want 1 to qsl_total_sample_count %d", rd.QSLPerformanceSampleCount, rd.QSLTotalSampleCount)
	case rd.TraceQueries <= 0:
		return WorkerReady{}, fieldErr("trace_queries", "%d: want the length of the trace the worker built, at least 1", rd.TraceQueries)
	case rd.MaxBatchSize < 0:
		return WorkerReady{}, fieldErr("max_batch_size", "%d: negative", rd.MaxBatchSize)
	}
	for _, f := range []struct{ name, v string }{{"sut_name", rd.SUTName}, {"api", rd.API}, {"protocol", rd.Protocol}} {
		if len(f.v) > 1024 {
			return WorkerReady{}, fieldErr(f.name, "%d bytes, over 1024", len(f.v))
		}
	}
	return rd, nil
}
