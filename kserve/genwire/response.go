package genwire

// This file reads a ModelStreamInferResponse of a generative model straight
// from its wire bytes: the few facts a token timer needs (the request id,
// the final flag, how many tokens the response holds, an error message),
// without decoding the message. A decoded response costs a dozen
// allocations (maps, tensors, strings), once per token at LLM rates; the
// walk costs none.

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/netloadgen/netloadgen/kserve"
)

// Triton's LLM conventions on the wire.
const (
	// FinalParam is the response parameter, true on the last response
	// of a request to a decoupled model.
	FinalParam = "triton_final_response"
	// TextOutput is the generated text; one response holds one step.
	TextOutput = "text_output"
	// OutputIDs are the generated token ids, when the model returns
	// them: their count is the server's token count.
	OutputIDs = "output_ids"
)

// Response is what Walk read of one ModelStreamInferResponse. It is reused
// for every response of a stream: Walk resets it.
type Response struct {
	ID      uint64
	IDOK    bool   // the id is a decimal number (ours always are)
	IDText  string // the id as sent, only when it is not (for the message)
	ErrMsg  string // error_message; "" when none (allocates only then)
	Final   bool   // triton_final_response = true
	Infer   bool   // an infer_response was present
	IDs     int    // elements of output_ids
	IDsSeen bool   // output_ids was present
	Text    int    // elements of text_output
	Outputs int    // output tensors of any name
	Err     error  // the bytes are not a ModelStreamInferResponse (kserve.ErrMalformed)
}

// Tokens is the number of tokens the response carries: output_ids' count
// when the server sent them, else one for a response with text.
func (w *Response) Tokens() int {
	if w.IDsSeen {
		return w.IDs
	}
	if w.Text > 0 {
		return 1
	}
	return 0
}

// Walk reads b, a ModelStreamInferResponse.
func (w *Response) Walk(b []byte) {
	*w = Response{}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			// The last occurrence wins, as protobuf decodes it; an
			// empty one converts without allocating.
			w.ErrMsg = string(v)
		case num == 2 && typ == protowire.BytesType:
			w.Infer = true
			return w.response(v)
		}
		return nil
	})
	if err != nil {
		w.Err = fmt.Errorf("%w: ModelStreamInferResponse: %v", kserve.ErrMalformed, err)
	}
}

// response reads a ModelInferResponse.
func (w *Response) response(b []byte) error {
	return eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 3: // id
			w.readID(v)
		case 4: // parameters
			return w.param(v)
		case 5: // outputs
			return w.output(v)
		}
		return nil
	})
}

func (w *Response) readID(v []byte) {
	var n uint64
	ok := len(v) > 0 && len(v) <= 19
	for _, c := range v {
		if c < '0' || c > '9' {
			ok = false
			break
		}
		n = n*10 + uint64(c-'0')
	}
	w.ID, w.IDOK = n, ok
	if !ok {
		w.IDText = string(v)
	}
}

// param reads one entry of the parameters map (key 1, InferParameter 2).
func (w *Response) param(b []byte) error {
	var key, val []byte
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ == protowire.BytesType {
			switch num {
			case 1:
				key = v
			case 2:
				val = v
			}
		}
		return nil
	})
	if err != nil || string(key) != FinalParam {
		return err
	}
	return eachField(val, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if num == 1 && typ == protowire.VarintType { // bool_param
			x, _ := protowire.ConsumeVarint(v)
			w.Final = x != 0
		}
		return nil
	})
}

// output reads one InferOutputTensor: its name and element count.
func (w *Response) output(b []byte) error {
	var name []byte
	elems := 1 // an unshaped tensor is a scalar: one element
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			name = v
		case num == 3 && typ == protowire.BytesType: // packed shape
			for len(v) > 0 {
				d, n := protowire.ConsumeVarint(v)
				if n < 0 {
					return protowire.ParseError(n)
				}
				if elems = dimTimes(elems, int64(d)); elems < 0 {
					return fmt.Errorf("output shape has dimension %d", int64(d))
				}
				v = v[n:]
			}
		case num == 3 && typ == protowire.VarintType: // unpacked shape
			d, _ := protowire.ConsumeVarint(v)
			if elems = dimTimes(elems, int64(d)); elems < 0 {
				return fmt.Errorf("output shape has dimension %d", int64(d))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.Outputs++
	switch string(name) {
	case OutputIDs:
		w.IDs += elems
		w.IDsSeen = true
	case TextOutput:
		w.Text += elems
	}
	return nil
}

// dimTimes multiplies an element count by a dimension; -1 for a negative
// dimension or an absurd count.
func dimTimes(elems int, d int64) int {
	if d < 0 || d > 1<<31 {
		return -1
	}
	p := int64(elems) * d
	if p > 1<<31 {
		return -1
	}
	return int(p)
}

// eachField calls f with every top-level field of the message b: its
// number, its wire type, and its value (for a length-delimited field, the
// bytes inside; otherwise the raw encoded value).
func eachField(b []byte, f func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(m))
		}
		v := b[:m]
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(v)
		}
		if err := f(num, typ, v); err != nil {
			return err
		}
		b = b[m:]
	}
	return nil
}
