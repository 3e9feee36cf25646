package jsonstr

import (
	"encoding/json"
	"testing"
	"unicode/utf16"
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

// FuzzAppend feeds Append what its contract allows, valid JSON string
// tokens, and compares the result with encoding/json's decoding. Three
// tokens come from each input: the input itself when it is one, the input
// as encoding/json writes it, and the input with every character written
// as \u escapes (surrogate pairs for characters beyond U+FFFF, and lone
// surrogates from the input's 16-bit words) so that the escape paths
// are reached whatever the input.
func FuzzAppend(f *testing.F) {
	f.Add([]byte(`"a\u00e9\ud83d\ude00\ud800"`))
	f.Add([]byte(`"\"\\\/\b\f\n\r\t\u0041\uDBFF\uDFFF\udc00\ud800\u0000"`))
	f.Add([]byte("plain \xff text \xf0\x9f\x98\x80"))
	f.Fuzz(func(t *testing.T, in []byte) {
		check := func(tok []byte) {
			var want string
			if err := json.Unmarshal(tok, &want); err != nil {
				t.Fatalf("%q: test built an invalid token: %v", tok, err)
			}
			if got := Append(nil, tok, Replace); string(got) != want {
				t.Fatalf("Append(%q, Replace) = %q, encoding/json gives %q", tok, got, want)
			}
			kept := Append(nil, tok, KeepInvalid)
			if got := replaceSurrogates(kept); string(got) != want {
				t.Fatalf("Append(%q, KeepInvalid) = %q, which is not encoding/json's %q with lone surrogates kept", tok, kept, want)
			}
		}
		// encoding/json reads bytes that are not UTF-8 as U+FFFD where
		// Append copies them: the contract's tokens are UTF-8.
		if len(in) >= 2 && in[0] == '"' && in[len(in)-1] == '"' && json.Valid(in) && utf8.Valid(in) {
			check(in)
		}
		tok, err := json.Marshal(string(in))
		if err != nil {
			t.Fatal(err)
		}
		check(tok)
		check(escapeAll(in))
	})
}

// escapeAll writes b as a JSON string token of \u escapes only: each
// UTF-8 character as one escape or a surrogate pair, each other byte pair
// as one 16-bit word (a lone surrogate when it is one), a last odd byte
// as the character of its value. Hex digits alternate between upper and lower case.
func escapeAll(b []byte) []byte {
	out := []byte{'"'}
	esc := func(r rune) {
		const lower, upper = "0123456789abcdef", "0123456789ABCDEF"
		digits := lower
		if len(out)%2 == 0 {
			digits = upper
		}
		out = append(out, '\\', 'u', digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15])
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1 && len(b) >= 2:
			esc(rune(b[0])<<8 | rune(b[1]))
			n = 2
		case r == utf8.RuneError && n <= 1:
			esc(rune(b[0]))
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			esc(r1)
			esc(r2)
		default:
			esc(r)
		}
		b = b[n:]
	}
	return append(out, '"')
}

// replaceSurrogates turns each lone surrogate KeepInvalid writes (the
// three bytes ED A0-BF 80-BF) into U+FFFD, as Replace writes it.
func replaceSurrogates(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] == 0xED && i+2 < len(b) && b[i+1] >= 0xA0 && b[i+1] <= 0xBF && b[i+2] >= 0x80 && b[i+2] <= 0xBF {
			out = utf8.AppendRune(out, utf8.RuneError)
			i += 2
			continue
		}
		out = append(out, b[i])
	}
	return out
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
