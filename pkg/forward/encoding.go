package forward

// The binary tensor data extension's parameters describe how one hop's body
// is framed, not what the tensors hold: binary_data_size on a tensor,
// binary_data on a requested output, binary_data_output on a request. A
// forwarded request crosses two hops that choose their encodings apart. The
// front's client chose the front's (and kserve/server encodes the answer from
// the request as that client sent it); the upstream client chooses its own
// toward the upstream (binary for HTTP, protobuf for gRPC). So the front
// client's encoding parameters must not reach the upstream, where they would
// make it answer in an encoding the forwarder did not ask for, and the
// upstream's must not reach the front's client: a JSON answer carrying
// binary_data_size, as a gRPC upstream such as the KServe Python server
// sends it, is one Triton's client and loadgend cannot read.

import "github.com/netloadgen/netloadgen/kserve"

// hasEncodingParam reports whether p holds a framing parameter.
func hasEncodingParam(p kserve.Parameters) bool {
	for k := range p {
		if kserve.IsBinaryDataParam(k) {
			return true
		}
	}
	return false
}

// withoutEncoding returns p without its framing parameters: p itself when it
// has none, else a copy (nil when nothing is left), so a map the caller still
// reads, or one an upstream shares between answers, is never changed.
func withoutEncoding(p kserve.Parameters) kserve.Parameters {
	if !hasEncodingParam(p) {
		return p
	}
	var out kserve.Parameters
	for k, v := range p {
		if kserve.IsBinaryDataParam(k) {
			continue
		}
		if out == nil {
			out = make(kserve.Parameters, len(p))
		}
		out[k] = v
	}
	return out
}

// anyTensorEncoding reports whether a tensor of ts holds a framing parameter.
func anyTensorEncoding(ts []kserve.Tensor) bool {
	for i := range ts {
		if hasEncodingParam(ts[i].Parameters) {
			return true
		}
	}
	return false
}

// tensorsWithoutEncoding returns a copy of ts without the tensors' framing
// parameters; the data is shared, never written.
func tensorsWithoutEncoding(ts []kserve.Tensor) []kserve.Tensor {
	if ts == nil {
		return nil
	}
	out := make([]kserve.Tensor, len(ts))
	for i, t := range ts {
		t.Parameters = withoutEncoding(t.Parameters)
		out[i] = t
	}
	return out
}

// upstreamRequest is req as the upstream should see it: without the front
// client's framing parameters. req itself is left alone, since the front
// encodes its answer from it after Infer returns; when req has no such
// parameter it is returned as is, so the common case copies nothing.
func upstreamRequest(req *kserve.InferRequest) *kserve.InferRequest {
	dirty := hasEncodingParam(req.Parameters) || anyTensorEncoding(req.Inputs)
	for i := 0; !dirty && i < len(req.Outputs); i++ {
		dirty = hasEncodingParam(req.Outputs[i].Parameters)
	}
	if !dirty {
		return req
	}
	up := *req
	up.Parameters = withoutEncoding(req.Parameters)
	up.Inputs = tensorsWithoutEncoding(req.Inputs)
	if req.Outputs != nil {
		up.Outputs = make([]kserve.RequestedOutput, len(req.Outputs))
		for i, o := range req.Outputs {
			up.Outputs[i] = kserve.RequestedOutput{Name: o.Name, Parameters: withoutEncoding(o.Parameters)}
		}
	}
	return &up
}

// frontResponse is resp without the upstream's framing parameters, for the
// front to encode the way its own client asked. resp is copied, not changed,
// when it has any: an upstream may hand out one shared answer.
func frontResponse(resp *kserve.InferResponse) *kserve.InferResponse {
	if resp == nil || (!hasEncodingParam(resp.Parameters) && !anyTensorEncoding(resp.Outputs)) {
		return resp
	}
	clean := *resp
	clean.Parameters = withoutEncoding(resp.Parameters)
	clean.Outputs = tensorsWithoutEncoding(resp.Outputs)
	return &clean
}
