//go:build !race

package testenv

// RaceEnabled reports whether the race detector is on. Its
// instrumentation allocates, so allocation counts are checked only
// without it (scripts/test runs those tests a second time, plain).
const RaceEnabled = false
