package csvsafe

import "testing"

func TestCell(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
	f("", "")
	f("INV-1", "INV-1")
	f("a=b", "a=b")
	f("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")")
	f("+61 2 9999 0000", "'+61 2 9999 0000")
	f("-2+3", "'-2+3")
	f("@SUM(A1)", "'@SUM(A1)")
	f("\t=1", "'\t=1")
	f("\r=1", "'\r=1")
	f(" =1", " =1")
}
