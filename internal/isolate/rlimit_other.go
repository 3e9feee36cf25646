//go:build !linux

package isolate

// LimitAddressSpace does nothing outside Linux: there the child's memory
// is bounded by GOMEMLIMIT (a soft limit) and its timeout only.
func LimitAddressSpace(int64) error { return nil }
