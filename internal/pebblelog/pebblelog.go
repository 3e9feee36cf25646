// Package pebblelog is the logger lodge's Pebble databases are opened
// with: quiet, because Pebble's info and error lines (compactions, WAL
// recycling) are not the operator's business, but a fatal error still
// stops the process as Pebble requires.
package pebblelog

import "fmt"

// Quiet drops Pebble's info and error lines and panics on a fatal one.
type Quiet struct{}

func (Quiet) Infof(string, ...interface{})  {}
func (Quiet) Errorf(string, ...interface{}) {}
func (Quiet) Fatalf(format string, args ...interface{}) {
	panic(fmt.Sprintf(format, args...))
}
