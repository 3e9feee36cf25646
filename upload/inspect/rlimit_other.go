//go:build !linux

package inspect

// limitAddressSpace does nothing outside Linux: there the child's memory
// is bounded by GOMEMLIMIT (a soft limit) and its timeout only.
func limitAddressSpace(int64) error { return nil }
