package gnaf

import (
	"io"
	"sync"
)

// prefetchChunks and prefetchSize bound the read-ahead of a ZIP entry: at
// most 1 MiB inflated ahead of the parser.
const (
	prefetchChunks = 4
	prefetchSize   = 256 << 10
)

// A prefetcher reads its source on its own goroutine, a few chunks ahead of
// its reader, so inflating a ZIP entry and parsing it use two cores.
type prefetcher struct {
	src   io.ReadCloser
	full  chan chunk
	empty chan []byte
	done  chan struct{}
	wg    sync.WaitGroup
	cur   []byte // unread part of the chunk being read
	buf   []byte // the chunk being read, to give back
	err   error  // the error that came with it
}

type chunk struct {
	b   []byte
	err error
}

func newPrefetcher(src io.ReadCloser) *prefetcher {
	p := &prefetcher{
		src:   src,
		full:  make(chan chunk, prefetchChunks),
		empty: make(chan []byte, prefetchChunks),
		done:  make(chan struct{}),
	}
	for i := 0; i < prefetchChunks; i++ {
		p.empty <- make([]byte, prefetchSize)
	}
	p.wg.Add(1)
	go p.run()
	return p
}

func (p *prefetcher) run() {
	defer p.wg.Done()
	for {
		var b []byte
		select {
		case b = <-p.empty:
		case <-p.done:
			return
		}
		n, err := io.ReadFull(p.src, b)
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		select {
		case p.full <- chunk{b[:n], err}:
		case <-p.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (p *prefetcher) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.buf != nil {
			p.empty <- p.buf[:cap(p.buf)] // never blocks: room for every chunk
			p.buf = nil
		}
		if p.err != nil {
			return 0, p.err
		}
		c := <-p.full
		p.cur, p.buf, p.err = c.b, c.b, c.err
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// Close stops the read-ahead and closes the source.
func (p *prefetcher) Close() error {
	close(p.done)
	p.wg.Wait()
	return p.src.Close()
}
