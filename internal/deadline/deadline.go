// Package deadline is a cooperative time bound for code that reads
// hostile input (the PDF reader, the XPS and PostScript inspectors): the
// loops check it as they go, and stop with the error the caller chose.
package deadline

import "time"

// Deadline is a point in time and the error for having passed it. Check
// is cheap (it reads the clock every 256 calls); Now always reads it. A
// Deadline belongs to one goroutine.
type Deadline struct {
	at      time.Time
	n       int
	expired error
}

// New returns a deadline d from now whose checks fail with expired.
func New(d time.Duration, expired error) *Deadline {
	return &Deadline{at: time.Now().Add(d), expired: expired}
}

// At returns when the deadline passes (for a context or a child
// process's timeout).
func (d *Deadline) At() time.Time { return d.at }

// Reset moves the deadline to d from now.
func (d *Deadline) Reset(dur time.Duration) {
	d.at, d.n = time.Now().Add(dur), 0
}

// Check returns the expiry error once the deadline has passed, reading
// the clock only every 256 calls.
func (d *Deadline) Check() error {
	d.n++
	if d.n&255 != 0 {
		return nil
	}
	return d.Now()
}

// Now checks the clock regardless of the call count.
func (d *Deadline) Now() error {
	if time.Now().After(d.at) {
		return d.expired
	}
	return nil
}
