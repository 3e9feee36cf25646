// Package xps reads text with positions out of XPS documents (Open XML
// Paper Specification, ECMA-388, and Microsoft XPS 1.0) for the auto
// processor, and writes XPS packages for tests and test corpora (Writer).
package xps
