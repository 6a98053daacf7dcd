package genwire

import (
	"encoding/binary"

	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// Content is a ModelStreamInferResponse's text_output (its
// elements' bytes, joined) and output_ids, decoded only for a request that
// captures its content (accuracy mode): nil where it has none.
func Content(raw []byte) (text []byte, ids []int64) {
	var m inferencepb.ModelStreamInferResponse
	if proto.Unmarshal(raw, &m) != nil || m.InferResponse == nil {
		return nil, nil
	}
	resp, err := kserve.InferResponseFromPB(m.InferResponse)
	if err != nil {
		return nil, nil
	}
	for _, t := range resp.Outputs {
		switch {
		case t.Name == TextOutput && t.Datatype == kserve.Bytes:
			for b := t.Data; len(b) >= 4; {
				n := int(binary.LittleEndian.Uint32(b))
				if n > len(b)-4 {
					break
				}
				text, b = append(text, b[4:4+n]...), b[4+n:]
			}
		case t.Name == OutputIDs && t.Datatype == kserve.Int32:
			for b := t.Data; len(b) >= 4; b = b[4:] {
				ids = append(ids, int64(int32(binary.LittleEndian.Uint32(b))))
			}
		case t.Name == OutputIDs && t.Datatype == kserve.Int64:
			for b := t.Data; len(b) >= 8; b = b[8:] {
				ids = append(ids, int64(binary.LittleEndian.Uint64(b)))
			}
		}
	}
	return text, ids
}
