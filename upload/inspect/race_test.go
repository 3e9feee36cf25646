//go:build race

package inspect

const raceEnabled = true
