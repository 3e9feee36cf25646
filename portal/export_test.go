package portal

// SetSearchScanBound sets how many mailings a search examines a page,
// and returns the restoring of the bound before.
func SetSearchScanBound(n int) (restore func()) {
	old := searchScanBound
	searchScanBound = n
	return func() { searchScanBound = old }
}
