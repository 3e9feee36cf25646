package jsonstr

import (
	"testing"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	f := func(in string, lone Surrogates, want string) {
		t.Helper()
		if got := string(Append(nil, []byte(in), lone)); got != want {
			t.Errorf("Append(%q) = %q, want %q", in, got, want)
		}
	}
	f(`""`, Replace, "")
	f(`"plain"`, Replace, "plain")
	f(`"a\nb\tc\rd\be\ff"`, Replace, "a\nb\tc\rd\be\ff")
	f(`"\"\\\/"`, Replace, `"\/`)
	f(`"\u00e9\u20AC"`, Replace, "é€")
	f(`"\ud83d\ude00"`, Replace, "😀")
	f(`"\ud83d\ude00"`, KeepInvalid, "😀")
	f(`"x\ud800y"`, Replace, "x\uFFFDy")
	f(`"x\ud800y"`, KeepInvalid, "x\xed\xa0\x80y")
	f(`"\udc00\ud800"`, Replace, "\uFFFD\uFFFD") // a low then a high: no pair
	f(`"\u12"`, Replace, "\uFFFD")               // cut short
	f(`"\"`, Replace, `\`)                       // a lone backslash at the end
	f(`x`, Replace, "")
	if s := Append(nil, []byte(`"x\ud800y"`), KeepInvalid); utf8.Valid(s) {
		t.Error("a kept lone surrogate reads as valid UTF-8")
	}
}

func FuzzAppend(f *testing.F) {
	f.Add([]byte(`"a\u00e9\ud83d\ude00\ud800"`))
	f.Fuzz(func(t *testing.T, v []byte) {
		if out := Append(nil, v, Replace); utf8.Valid(v) && !utf8.Valid(out) {
			t.Fatalf("%q: valid input gave invalid %q", v, out)
		}
		Append(nil, v, KeepInvalid)
	})
}

func TestKind(t *testing.T) {
	f := func(v, want string) {
		t.Helper()
		if got := Kind([]byte(v)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", v, got, want)
		}
	}
	f(``, "nothing")
	f(`{}`, "object")
	f(`[1]`, "array")
	f(`"x"`, "string")
	f(`true`, "boolean")
	f(`false`, "boolean")
	f(`null`, "null")
	f(`-1.5e3`, "number")
}
