// Package jsondepth finds JSON nested too deep before a recursive decoder
// sees it. Every JSON parser of lodge (JSON-RPC bodies, metadata files,
// JSON lines for lodge check) asks it first, so that no input can make a
// decoder recurse without bound. It scans once, does not recurse and
// allocates nothing, whatever the input; it does not validate the JSON.
package jsondepth

// Exceeds returns the offset of the first '[' or '{' nested deeper than
// max (outside strings), or -1 when there is none.
func Exceeds(b []byte, max int) int {
	depth := 0
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			if depth++; depth > max {
				return i
			}
		case ']', '}':
			if depth > 0 { // a stray closing bracket must not buy depth for later
				depth--
			}
		}
	}
	return -1
}
