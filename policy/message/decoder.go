package message

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// decoder is a strict jsontext.Decoder reading straight from a byte slice
// (a bytes.Buffer source is read without copying). Decoders are pooled:
// one is needed per message and per object whose names are checked, and
// allocating them dominated the relay's per-message cost.
type decoder struct {
	src bytes.Buffer
	jsontext.Decoder
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

func newDecoder(b []byte) *decoder {
	d := decoders.Get().(*decoder)
	d.src = *bytes.NewBuffer(b)
	d.Reset(&d.src)
	return d
}

func (d *decoder) release() {
	d.src = bytes.Buffer{}
	d.Reset(&d.src) // drop references into the message
	decoders.Put(d)
}

// readName reads an object member name and returns its decoded text. The
// common unescaped name is returned without allocating when it equals one
// of known (the names callers switch on).
func (d *decoder) readName(known ...string) (string, error) {
	raw, err := d.ReadValue()
	if err != nil {
		return "", err
	}
	return memberName(raw, bytes.IndexByte(raw, '\\') >= 0, known), nil
}
