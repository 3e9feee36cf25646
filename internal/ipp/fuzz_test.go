package ipp

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// FuzzDecode: any bytes a printer may answer decode without a panic,
// either to a message that encodes back to the very same bytes (nothing
// misread or dropped) or to a DecodeError located inside the input.
func FuzzDecode(f *testing.F) {
	testenv.LimitMinimization(f, "2000x")
	files, _ := filepath.Glob(filepath.Join("testdata", "*.ipp"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(hostile(op, []byte{TagCharset, 0xFF, 0xFF}))
	f.Add(hostile(op, attr(TagBegCollection, "c", nil), attr(TagMemberName, "", []byte("m")), attr(TagEndCollection, "", nil), end))
	f.Add(hostile(op, attr(TagTextWithLang, "m", []byte{0, 2, 'e', 'n', 0, 2, 'h', 'i'}), end, []byte("data")))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, Limits{MaxValues: 1000})
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(data) {
				t.Fatalf("error %v is not a DecodeError inside the %d bytes", err, len(data))
			}
			return
		}
		back, err := m.AppendBinary(nil)
		if err != nil {
			t.Fatalf("a decoded message does not encode: %v", err)
		}
		if !bytes.Equal(append(back, m.Data...), data) {
			t.Fatalf("decoded and encoded back to other bytes:\n% x\n% x", data, back)
		}
	})
}
