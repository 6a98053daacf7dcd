package kserve

// The check of every answer of a performance run: the protocol header of an
// inference response (the model's name, the outputs' names, datatypes and
// shapes) against the model's metadata, read where the response's bytes
// already are (the JSON header of a REST answer, the encoded
// ModelInferResponse of a gRPC one), without decoding a tensor and without
// allocating.

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrBadResponse marks a well-formed answer that is not the model's: another
// model's name, outputs missing, unknown or repeated, or an output whose
// datatype or shape differs from the model's metadata. A load generator
// counts it as a failed sample.
var ErrBadResponse = errors.New("response does not match the model's metadata")

// badResponseError is a mismatch; it matches ErrBadResponse.
type badResponseError struct{ msg string }

func (e *badResponseError) Error() string { return ErrBadResponse.Error() + ": " + e.msg }
func (e *badResponseError) Unwrap() error { return ErrBadResponse }

func badResponsef(format string, args ...any) error {
	return &badResponseError{msg: fmt.Sprintf(format, args...)}
}

// maxCheckedDims bounds the dimensions of an answered shape that a check
// reads; one more than the model's is a mismatch already.
const maxCheckedDims = 32

// Expect is what every answer of one model must say, built once per run from
// the model's metadata. Its checks are safe for concurrent use and allocate
// only to describe a mismatch, and once per batch size and form to remember
// an answer that passed.
type Expect struct {
	model string
	// batched: an output's first dimension is the request's batch size.
	batched bool
	outs    []expectOutput
	// passed remembers, by form and batch size, the first answer (its JSON
	// or its message) that passed: a server answers a batch size with the
	// same header every time, and bytes equal to ones that passed pass (a
	// check is a function of the bytes and the batch size), for a compare
	// instead of a walk (bench/nullserver's answer, BenchmarkExpect: its
	// JSON 150–215 ns walked, its message 60–80, either 6 compared). An
	// answer that differs is walked, and not remembered: answers that all
	// differ (an id echoed) cost no memory.
	passed [numForms][maxRemembered + 1]atomic.Pointer[passedAnswer]
}

// passedAnswer is an answer that passed: its bytes, and the sum of its
// outputs' binary_data_size (a REST header's), which the bytes decide.
type passedAnswer struct {
	b   []byte
	bin int64
}

// The forms an answer is checked in, for Expect.passed.
const (
	formJSON = iota
	formProto
	numForms
)

// maxRemembered is the largest batch size whose answer is remembered.
const maxRemembered = 256

// seen returns the answer that passed when b, an answer of form at batch,
// is one; nil otherwise.
func (e *Expect) seen(form int, b []byte, batch int) *passedAnswer {
	if batch < 0 || batch > maxRemembered {
		return nil
	}
	if p := e.passed[form][batch].Load(); p != nil && bytes.Equal(p.b, b) {
		return p
	}
	return nil
}

// remember keeps b, an answer of form at batch that passed with binary
// sizes adding up to bin, when none is kept yet.
func (e *Expect) remember(form int, b []byte, batch int, bin int64) {
	if batch < 0 || batch > maxRemembered || e.passed[form][batch].Load() != nil {
		return
	}
	e.passed[form][batch].CompareAndSwap(nil, &passedAnswer{b: bytes.Clone(b), bin: bin})
}

type expectOutput struct {
	name, datatype string
	// shape is the metadata's, -1 for a variable dimension; with
	// batchDim, shape[0] stands for the request's batch size.
	shape      []int64
	batchDim   bool
	checkShape bool
}

// NewExpect is the check of model's answers: its name, and the outputs of its
// metadata (every one of them, once, with its datatype and shape; a request
// that names no output gets them all). With batched, an output's first
// dimension, -1 in the metadata, is the batch dimension, which an answer
// must fill with the request's batch size; any other -1 is a dimension of
// any size. A model whose metadata lists no outputs must answer with at
// least one, of any name, datatype and shape.
func NewExpect(model string, outputs []TensorMetadata, batched bool) *Expect {
	e := &Expect{model: model, batched: batched}
	for _, o := range outputs {
		shape := append([]int64(nil), o.Shape...)
		e.outs = append(e.outs, expectOutput{
			name: o.Name, datatype: string(o.Datatype), shape: shape,
			batchDim: batched && len(shape) > 0 && shape[0] == -1,
			// A batching model's output without dimensions says nothing
			// of its answered shape.
			checkShape: !batched || len(shape) > 0,
		})
	}
	return e
}

// BatchOf is the batch size of req as an answer to it must show it: the first
// dimension of its first input when the model batches, else 1.
func (e *Expect) BatchOf(req *InferRequest) int {
	if e == nil || !e.batched || len(req.Inputs) == 0 || len(req.Inputs[0].Shape) == 0 {
		return 1
	}
	return int(req.Inputs[0].Shape[0])
}

// answerCheck follows one answer: what it said so far.
type answerCheck struct {
	e      *Expect // nil: only the binary sizes are checked
	batch  int
	binLen int64 // the bytes after a REST answer's JSON header; -1: none
	bin    int64 // the outputs' binary_data_size so far
	// A gRPC answer's outputs, the first maxRawChecked: their names and
	// the bytes their datatype and shape make (-1: not fixed, BYTES),
	// and the lengths of its raw_output_contents.
	raw       rawCheck
	modelSeen bool
	outputs   int
	seen      uint64 // expected outputs answered, the first 64
	seenMore  []bool // and beyond, for a model with more (allocated then)
}

// model takes the answer's model name.
func (c *answerCheck) model(name []byte) error {
	c.modelSeen = true
	if c.e == nil {
		return nil
	}
	if string(name) != c.e.model {
		return badResponsef("model %q answered, want %q", string(name), c.e.model)
	}
	return nil
}

// output takes one answered output: its name, its datatype, and its shape
// (dims; over when it had more than maxCheckedDims).
func (c *answerCheck) output(name, datatype []byte, dims []int64, over bool) error {
	c.outputs++
	if c.e == nil || len(c.e.outs) == 0 {
		return nil
	}
	k := c.e.find(name)
	if k < 0 {
		return badResponsef("output %q is not one of the model's", string(name))
	}
	if c.saw(k) {
		return badResponsef("output %q answered twice", string(name))
	}
	o := &c.e.outs[k]
	if string(datatype) != o.datatype {
		return badResponsef("output %q: datatype %q, want %q", string(name), string(datatype), o.datatype)
	}
	if o.checkShape && (over || !o.matches(dims, c.batch)) {
		return badResponsef("output %q: shape %s, want %s", string(name), dimsString(dims, over), o.want(c.batch))
	}
	return nil
}

// saw marks expected output k answered and reports whether it already was.
func (c *answerCheck) saw(k int) bool {
	if k < 64 {
		bit := uint64(1) << k
		was := c.seen&bit != 0
		c.seen |= bit
		return was
	}
	if c.seenMore == nil {
		c.seenMore = make([]bool, len(c.e.outs))
	}
	was := c.seenMore[k]
	c.seenMore[k] = true
	return was
}

// done checks what the whole answer must have said.
func (c *answerCheck) done() error {
	if c.e == nil {
		return nil
	}
	switch {
	case !c.modelSeen:
		return badResponsef("no model name, want %q", c.e.model)
	case c.outputs == 0:
		return badResponsef("no outputs")
	}
	for k := range c.e.outs {
		if k < 64 && c.seen&(1<<k) == 0 || k >= 64 && (c.seenMore == nil || !c.seenMore[k]) {
			return badResponsef("output %q missing", c.e.outs[k].name)
		}
	}
	return nil
}

// find is the index of the expected output called name; -1 if none is.
func (e *Expect) find(name []byte) int {
	for k := range e.outs {
		if string(name) == e.outs[k].name {
			return k
		}
	}
	return -1
}

func (o *expectOutput) matches(dims []int64, batch int) bool {
	if len(dims) != len(o.shape) {
		return false
	}
	for k, d := range dims {
		want := o.shape[k]
		if o.batchDim && k == 0 {
			want = int64(batch)
		}
		if d < 0 || want >= 0 && d != want {
			return false
		}
	}
	return true
}

// want is the shape an answer must have, for a message.
func (o *expectOutput) want(batch int) string {
	s := append([]int64(nil), o.shape...)
	if o.batchDim {
		s[0] = int64(batch)
	}
	return dimsString(s, false)
}

func dimsString(dims []int64, over bool) string {
	b := []byte{'['}
	for k, d := range dims {
		if k > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, d, 10)
	}
	if over {
		b = append(b, " ..."...)
	}
	return string(append(b, ']'))
}

// CheckResponse checks a decoded answer (accuracy runs, which decode every
// answer anyway) as CheckJSON and CheckProto check an encoded one. A nil
// Expect checks nothing.
func (e *Expect) CheckResponse(resp *InferResponse, batch int) error {
	if e == nil {
		return nil
	}
	c := answerCheck{e: e, batch: batch}
	if err := c.model([]byte(resp.Model)); err != nil {
		return err
	}
	for i := range resp.Outputs {
		o := &resp.Outputs[i]
		shape := o.Shape
		if len(shape) > maxCheckedDims {
			shape = shape[:maxCheckedDims]
		}
		if err := c.output([]byte(o.Name), []byte(o.Datatype), shape, len(o.Shape) > maxCheckedDims); err != nil {
			return err
		}
	}
	return c.done()
}

// CheckJSON checks a REST answer's JSON: the header of a binary-extension
// body (its first Inference-Header-Content-Length bytes) or a whole JSON
// body, whose tensor data it skips. Broken JSON is an error matching
// ErrMalformed, a mismatch one matching ErrBadResponse. A nil Expect checks
// nothing. It does not check the outputs' binary_data_size: CheckAnswer
// does, with the body's length.
func (e *Expect) CheckJSON(header []byte, batch int) error {
	if e == nil {
		return nil
	}
	return e.check(formJSON, header, batch, -2)
}

// CheckAnswer is CheckJSON for a whole answer whose body holds binLen
// bytes after its JSON header (-1: a JSON body, no binary part), and
// checks the outputs' binary_data_size against them as well: none
// negative, none past the body, and their sum exactly binLen. The sizes
// are read in the same walk of the header (or come with a header that
// passed before), so a performance run checks every answer's framing at
// the cost of a compare: a truncated answer (a size larger than the body)
// is malformed, not a success. A mismatch matches ErrMalformed and names
// the output and the sizes. A nil Expect checks the sizes alone, and only
// of a binary body (a JSON body is not walked for it).
func (e *Expect) CheckAnswer(header []byte, batch int, binLen int64) error {
	if e == nil {
		if binLen < 0 {
			return nil
		}
		_, err := walkJSON(&answerCheck{batch: batch, binLen: binLen}, header)
		return err
	}
	return e.check(formJSON, header, batch, binLen)
}

// check is an answer's verdict: remembered, else walked (and remembered
// when it passes). binLen is CheckAnswer's; -2 skips the binary sizes.
func (e *Expect) check(form int, b []byte, batch int, binLen int64) error {
	if p := e.seen(form, b, batch); p != nil {
		if binLen == -2 || p.bin == max(binLen, 0) {
			return nil
		}
		return binarySum(p.bin, binLen)
	}
	if form != formJSON {
		if err := e.walkProto(b, batch); err != nil {
			return err
		}
		e.remember(form, b, batch, 0)
		return nil
	}
	c := answerCheck{e: e, batch: batch, binLen: binLen}
	if _, err := walkJSON(&c, b); err != nil {
		return err
	}
	e.remember(form, b, batch, c.bin)
	return nil
}

// binarySum is the error of outputs whose binary_data_size add up to sum
// in an answer with binLen bytes after its JSON header.
func binarySum(sum, binLen int64) error {
	if binLen < 0 {
		return Malformedf("the outputs' binary_data_size add up to %d in a JSON body (no %s)", sum, HeaderInferenceContentLength)
	}
	return Malformedf("the outputs' binary_data_size add up to %d, the body has %d bytes after its JSON header", sum, binLen)
}

// binary takes one output's binary_data_size, the bytes of the value.
func (c *answerCheck) binary(name, size []byte) error {
	end, isFloat, err := scanNumber(size, 0)
	n, ok := parseDim(size)
	if err != nil || isFloat || end != len(size) || !ok {
		return Malformedf("output %q binary_data_size %s is not an integer", clipBytes(name), clipBytes(size))
	}
	// The sum is kept whatever binLen, for remember: CheckJSON's header
	// may be CheckAnswer's later.
	switch have := max(c.binLen, 0) - c.bin; {
	case n < 0:
		return Malformedf("output %q binary_data_size %d is negative", clipBytes(name), n)
	case c.binLen != -2 && n > have:
		return Malformedf("output %q binary_data_size %d with %d bytes of binary data left in the body", clipBytes(name), n, have)
	}
	c.bin += n
	return nil
}

// clipBytes bounds a piece of an answer quoted in an error.
func clipBytes(b []byte) string { return string(b[:min(len(b), 64)]) }

// walkJSON is CheckAnswer without remembering: it returns c.bin, the sum
// of the outputs' binary_data_size.
func walkJSON(c *answerCheck, header []byte) (int64, error) {
	i, err := scanObject(header, skipWS(header, 0), 0, func(key []byte, b []byte, i int) (int, error) {
		switch string(key) {
		case "model_name":
			var buf [64]byte
			name, end, err := jsonStringValue(buf[:0], b, i)
			if err == nil {
				err = c.model(name)
			}
			return end, err
		case "outputs":
			return scanOutputs(b, i, c.jsonOutput)
		}
		return skipValue(b, i, 1)
	})
	if err != nil {
		return c.bin, err
	}
	if i = skipWS(header, i); i != len(header) {
		return c.bin, Malformedf("unexpected content after the JSON header at offset %d", i)
	}
	if c.binLen != -2 && c.bin != max(c.binLen, 0) {
		return c.bin, binarySum(c.bin, c.binLen)
	}
	return c.bin, c.done()
}

// jsonOutput checks the output object at b[i]: its fields in any order, its
// data skipped.
func (c *answerCheck) jsonOutput(b []byte, i int) (int, error) {
	var nameBuf, typeBuf [64]byte
	var name, datatype, shape, size []byte
	end, err := scanObject(b, i, 2, func(key []byte, b []byte, i int) (int, error) {
		var err error
		switch string(key) {
		case "name":
			name, i, err = jsonStringValue(nameBuf[:0], b, i)
			return i, err
		case "datatype":
			datatype, i, err = jsonStringValue(typeBuf[:0], b, i)
			return i, err
		case "shape":
			end, err := skipValue(b, i, 3)
			shape = b[i:end]
			return end, err
		case "parameters":
			return scanParameters(b, i, &size)
		}
		return skipValue(b, i, 3)
	})
	if err != nil {
		return end, err
	}
	if size != nil {
		if err := c.binary(name, size); err != nil {
			return end, err
		}
	}
	var dims [maxCheckedDims]int64
	n, over, err := jsonDims(shape, &dims)
	if err != nil {
		return end, err
	}
	return end, c.output(name, datatype, dims[:n], over)
}

// scanParameters skips an output's parameters object at b[i], setting
// *size to the bytes of its binary_data_size value, if it has one.
func scanParameters(b []byte, i int, size *[]byte) (int, error) {
	if hasPrefixAt(b, i, "null") {
		return i + 4, nil
	}
	return scanObject(b, i, 3, func(key []byte, b []byte, i int) (int, error) {
		end, err := skipValue(b, i, 4)
		if err == nil && string(key) == ParamBinaryDataSize {
			*size = b[i:end]
		}
		return end, err
	})
}

// jsonStringValue reads the JSON string (or null) at b[i]: a slice of b when
// it has no escapes, else decoded into dst.
func jsonStringValue(dst []byte, b []byte, i int) ([]byte, int, error) {
	if hasPrefixAt(b, i, "null") {
		return nil, i + 4, nil
	}
	if i >= len(b) || b[i] != '"' {
		return nil, i, Malformedf("expected a string at offset %d", i)
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, nil
		case c == '\\' || c < 0x20:
			return scanString(dst, b, i)
		}
	}
	return nil, i, Malformedf("unterminated JSON string at offset %d", i)
}

// jsonDims reads a shape array (already validated as a JSON value; absent:
// nil) into dims: how many, and whether there were more than dims holds.
func jsonDims(shape []byte, dims *[maxCheckedDims]int64) (n int, over bool, err error) {
	if len(shape) == 0 || hasPrefixAt(shape, 0, "null") {
		return 0, false, nil
	}
	if shape[0] != '[' {
		return 0, false, Malformedf("shape must be an array of integers")
	}
	i := skipWS(shape, 1)
	for i < len(shape) && shape[i] != ']' {
		end, isFloat, err := scanNumber(shape, i)
		if err != nil || isFloat {
			return n, over, Malformedf("shape must be an array of integers")
		}
		d, ok := parseDim(shape[i:end])
		if !ok {
			return n, over, Malformedf("shape dimension %s is out of range", shape[i:end])
		}
		if n == len(dims) {
			over = true
		} else {
			dims[n] = d
			n++
		}
		if i = skipWS(shape, end); i < len(shape) && shape[i] == ',' {
			i = skipWS(shape, i+1)
		}
	}
	return n, over, nil
}

// parseDim reads a JSON integer (validated by scanNumber) without the
// allocation of strconv on a []byte.
func parseDim(tok []byte) (int64, bool) {
	neg := len(tok) > 0 && tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	if len(tok) == 0 || len(tok) > 18 {
		return 0, false
	}
	v := int64(0)
	for _, c := range tok {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// CheckProto checks an encoded ModelInferResponse. Its raw_output_contents
// may be left out (pkg/grpcloop skips them as they arrive); given, there is
// one per output, as long as the output's datatype and shape make (BYTES
// aside), or the answer is malformed: a truncated tensor is not a success
// in a performance run. A message that does not parse is an error matching
// ErrMalformed, a mismatch one matching ErrBadResponse. A nil Expect checks
// nothing.
func (e *Expect) CheckProto(msg []byte, batch int) error {
	if e == nil {
		return nil
	}
	return e.check(formProto, msg, batch, -2)
}

// maxRawChecked bounds the outputs whose raw_output_contents' lengths a
// gRPC answer's check compares: the arrays stay on the stack.
const maxRawChecked = 16

// rawCheck compares a gRPC answer's raw_output_contents with its outputs.
type rawCheck struct {
	names      [maxRawChecked][]byte
	want, have [maxRawChecked]int64
	outs, raws int
}

// output takes an output's name, datatype and shape, in order.
func (r *rawCheck) output(name, datatype []byte, dims []int64, over bool) {
	if r.outs < maxRawChecked {
		want := int64(DataType(datatype).Size())
		for _, d := range dims {
			if want <= 0 || over || d < 0 || (d > 0 && want > (1<<62)/d) {
				want = -1
				break
			}
			want *= d
		}
		r.names[r.outs], r.want[r.outs] = name, want
	}
	r.outs++
}

// contents takes the length of the next raw_output_contents.
func (r *rawCheck) contents(n int) {
	if r.raws < maxRawChecked {
		r.have[r.raws] = int64(n)
	}
	r.raws++
}

// check is the verdict: none given (left out, or skipped by the caller:
// grpcloop) or one per output, each as long as its datatype and shape
// make. A truncated answer is not a success in a performance run either.
func (r *rawCheck) check() error {
	if r.raws == 0 {
		return nil
	}
	if r.raws != r.outs {
		return Malformedf("%d raw_output_contents for %d outputs", r.raws, r.outs)
	}
	for i := range min(r.outs, maxRawChecked) {
		if r.want[i] >= 0 && r.have[i] != r.want[i] {
			return Malformedf("output %q: raw_output_contents of %d bytes, its datatype and shape make %d", clipBytes(r.names[i]), r.have[i], r.want[i])
		}
	}
	return nil
}

// walkProto is CheckProto without remembering.
func (e *Expect) walkProto(msg []byte, batch int) error {
	c := answerCheck{e: e, batch: batch}
	err := pbFields(msg, "ModelInferResponse", func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return m, nil
			}
			return m, c.model(v)
		case num == 5 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return m, nil
			}
			return m, c.pbOutput(v)
		case num == 6 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m >= 0 {
				c.raw.contents(len(v))
			}
			return m, nil
		}
		return protowire.ConsumeFieldValue(num, typ, b), nil
	})
	if err != nil {
		return err
	}
	if err := c.raw.check(); err != nil {
		return err
	}
	// proto3 leaves an empty model_name out: it is a name, and a wrong one.
	if !c.modelSeen {
		if err := c.model(nil); err != nil {
			return err
		}
	}
	return c.done()
}

// pbOutput checks one encoded InferOutputTensor: its name and datatype, then
// its shape, packed or not.
func (c *answerCheck) pbOutput(b []byte) error {
	var name, datatype []byte
	var dims [maxCheckedDims]int64
	n, over := 0, false
	dim := func(v uint64) {
		if n == len(dims) {
			over = true
			return
		}
		dims[n] = int64(v)
		n++
	}
	err := pbFields(b, "InferOutputTensor", func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		var m int
		switch {
		case num == 1 && typ == protowire.BytesType:
			name, m = protowire.ConsumeBytes(b)
		case num == 2 && typ == protowire.BytesType:
			datatype, m = protowire.ConsumeBytes(b)
		case num == 3 && typ == protowire.VarintType:
			var v uint64
			if v, m = protowire.ConsumeVarint(b); m >= 0 {
				dim(v)
			}
		case num == 3 && typ == protowire.BytesType:
			var packed []byte
			if packed, m = protowire.ConsumeBytes(b); m >= 0 {
				for len(packed) > 0 {
					v, l := protowire.ConsumeVarint(packed)
					if l < 0 {
						return l, nil
					}
					dim(v)
					packed = packed[l:]
				}
			}
		default:
			m = protowire.ConsumeFieldValue(num, typ, b)
		}
		return m, nil
	})
	if err != nil {
		return err
	}
	c.raw.output(name, datatype, dims[:n], over)
	return c.output(name, datatype, dims[:n], over)
}

// pbFields walks the fields of the message b (what names it in errors),
// calling field with each one's number, wire type and the bytes from its
// value on; field returns the value's length, negative (protowire's error
// code) when it is malformed, and its own verdict.
func pbFields(b []byte, what string, field func(num protowire.Number, typ protowire.Type, b []byte) (int, error)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return pbMalformed(what, n)
		}
		b = b[n:]
		m, err := field(num, typ, b)
		switch {
		case m < 0:
			return pbMalformed(what, m)
		case err != nil:
			return err
		}
		b = b[m:]
	}
	return nil
}

func pbMalformed(what string, n int) error {
	return fmt.Errorf("%w: %s: %v", ErrMalformed, what, protowire.ParseError(n))
}
