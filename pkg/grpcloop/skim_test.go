package grpcloop

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzSkimmer: however a message is cut, the skimmer keeps the same bytes and
// reaches the same verdict; what it keeps of a message that parses is the
// message without its raw_output_contents.
func FuzzSkimmer(f *testing.F) {
	var msg []byte
	msg = protowire.AppendString(protowire.AppendTag(msg, 1, protowire.BytesType), "m")
	msg = protowire.AppendBytes(protowire.AppendTag(msg, 6, protowire.BytesType), make([]byte, 20))
	msg = protowire.AppendVarint(protowire.AppendTag(msg, 7, protowire.VarintType), 300)
	msg = protowire.AppendFixed32(protowire.AppendTag(msg, 8, protowire.Fixed32Type), 1)
	f.Add(msg, 3)
	f.Add([]byte{0x0b, 0x0c}, 1)
	f.Fuzz(func(t *testing.T, msg []byte, step int) {
		step = max(1, step%64)
		var whole, cut skimmer
		whole.take(msg)
		for b := msg; len(b) > 0; b = b[min(step, len(b)):] {
			cut.take(b[:min(step, len(b))])
		}
		werr, cerr := whole.end(), cut.end()
		if (werr == nil) != (cerr == nil) || !bytes.Equal(whole.kept, cut.kept) {
			t.Fatalf("whole: %x, %v; in pieces of %d: %x, %v", whole.kept, werr, step, cut.kept, cerr)
		}
		if werr != nil {
			return
		}
		var want []byte
		for b := msg; len(b) > 0; {
			num, typ, n := protowire.ConsumeTag(b)
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if n < 0 || m < 0 {
				t.Fatalf("the skimmer passed %x, protowire does not", msg)
			}
			if num != rawOutputContents || typ != protowire.BytesType {
				want = append(want, b[:n+m]...)
			}
			b = b[n+m:]
		}
		if !bytes.Equal(whole.kept, want) {
			t.Fatalf("kept %x of %x, want %x", whole.kept, msg, want)
		}
	})
}
