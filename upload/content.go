package upload

import (
	"hash"
	"io"
	"os"
	"sync"

	"github.com/lodge-mail/lodge/upload/inspect"
)

// rejectedError is a file refused for its type: HTTP 403.
type rejectedError struct{ msg string }

func (e *rejectedError) Error() string { return e.msg }

// readError is a failure to read an upload's body (the client's
// connection reset or stalled, a multipart part over its request's
// limit, a body shorter than declared), as opposed to one of storing it.
type readError struct{ err error }

func (e *readError) Error() string { return "reading the upload: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// checkContent checks that a file's first bytes are what its extension says.
func checkContent(name, ext string, head []byte) (string, error) {
	k, err := inspect.CheckType(name, head)
	if err != nil {
		return "", &rejectedError{msg: err.Error()}
	}
	return string(k), nil
}

// Streaming an upload to disk. A body arrives over the network faster than
// one goroutine can read it, hash it and write it, and a 1 GB file left to
// the kernel's write-back is mostly still in the page cache when the final
// fsync comes, so that the fsync alone writes it all. copyBody therefore
// reads into a few large buffers while a second goroutine hashes and
// writes them, and every flushEvery bytes it starts an fsync in the
// background, so that the disk writes while the body still arrives and
// the caller's final fsync has only the tail left. Memory is bounded:
// copyBufs buffers of copyBufSize per upload, whatever the body's size.
const (
	copyBufSize = 1 << 20
	copyBufs    = 3
	flushEvery  = 32 << 20
)

var copyBufPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// copyBody writes body to f and to h until body ends and returns how many
// bytes it wrote. It stops at the first error of reading (a *readError),
// writing or a background fsync (an fsync error is reported once by the
// kernel: it must not be lost to the caller's final fsync). It does not
// sync what it wrote last: the caller syncs f before relying on it.
func copyBody(f *os.File, h hash.Hash, body io.Reader) (int64, error) {
	type chunk struct {
		b *[]byte
		n int
	}
	full := make(chan chunk, copyBufs)
	free := make(chan *[]byte, copyBufs)
	for range copyBufs {
		free <- copyBufPool.Get().(*[]byte)
	}
	failed := make(chan struct{}) // closed when the writer fails
	werr := make(chan error, 1)
	go func() {
		var err error
		var pending int64
		var flush chan error // the running background fsync, if any
		stopped := false
		for c := range full {
			if err == nil {
				p := (*c.b)[:c.n]
				h.Write(p)
				if _, err = f.Write(p); err == nil {
					pending += int64(c.n)
				}
			}
			if err == nil && flush != nil {
				select {
				case err = <-flush:
					flush = nil
				default:
				}
			}
			if err == nil && flush == nil && pending >= flushEvery {
				pending, flush = 0, make(chan error, 1)
				go func(done chan<- error) { done <- f.Sync() }(flush)
			}
			if err != nil && !stopped {
				close(failed)
				stopped = true
			}
			free <- c.b
		}
		if flush != nil {
			if ferr := <-flush; err == nil {
				err = ferr
			}
		}
		werr <- err
	}()
	var total int64
	var rerr error
read:
	for {
		var b *[]byte
		select {
		case <-failed:
			break read
		default:
		}
		select {
		case b = <-free:
		case <-failed:
			break read
		}
		n, err := fill(body, *b)
		if n > 0 {
			full <- chunk{b, n}
			total += int64(n)
		} else {
			free <- b
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rerr = err // io.ErrUnexpectedEOF included: a body cut short
			break
		}
	}
	close(full)
	err := <-werr
	for range copyBufs {
		copyBufPool.Put(<-free)
	}
	if rerr != nil {
		return total, &readError{rerr}
	}
	return total, err
}

// fill reads into b until it is full or r fails; unlike io.ReadFull it
// passes r's errors on as they are, so that only io.EOF ends a body
// normally and a reader's own io.ErrUnexpectedEOF (a body cut short) stays
// an error.
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
