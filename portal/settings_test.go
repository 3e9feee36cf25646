package portal

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestJSONIndent(t *testing.T) {
	f := func(src, want string) {
		t.Helper()
		var b bytes.Buffer
		if err := jsonIndent(&b, []byte(src)); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := b.String(); got != want {
			t.Fatalf("%s:\ngot  %s\nwant %s", src, got, want)
		}
	}
	f(`{"a":"\u003cb\u003e \u0026 \u003C\u003E"}`, "{\n  \"a\": \"<b> & <>\"\n}")
	f(`{"a":"\\u003cb"}`, "{\n  \"a\": \"\\\\u003cb\"\n}") // an escaped backslash, then text
	f(`{"a":"\\\u003c"}`, "{\n  \"a\": \"\\\\<\"\n}")
	f(`{"a":"\"\u0041\n\u2028"}`, "{\n  \"a\": \"\\\"\\u0041\\n\\u2028\"\n}")
	f(`[1,2.50,"x"]`, "[\n  1,\n  2.50,\n  \"x\"\n]")
	for _, bad := range []string{`{"a":`, `{"a":"\u003"}`, `{"a":"\u003c`, `"\`} {
		var b bytes.Buffer
		if err := jsonIndent(&b, []byte(bad)); err == nil {
			t.Fatalf("%s accepted: %s", bad, b.String())
		}
	}
}

// FuzzJSONIndent: whatever the settings, the layout never panics and
// means what the stored JSON means.
func FuzzJSONIndent(f *testing.F) {
	f.Add([]byte(`{"a":"\u003cb\u003e \\u003c \u0026"}`))
	f.Add([]byte(`[1,"\\\u003c",{"b":null}]`))
	f.Fuzz(func(t *testing.T, src []byte) {
		var b bytes.Buffer
		if jsonIndent(&b, src) != nil {
			return
		}
		var want, got any
		if json.Unmarshal(src, &want) != nil {
			return
		}
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%q laid out as %q: %v", src, b.Bytes(), err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%q laid out as %q: means %v, not %v", src, b.Bytes(), got, want)
		}
	})
}
