package rpc

import "bytes"

// SetFlushBytes makes HandleTo write its answer in pieces of n bytes or
// more, so that small answers are written in many.
func (s *Server) SetFlushBytes(n int) { s.flushBytes = n }

// SetFast turns the fast path (fast.go) on or off.
func (s *Server) SetFast(on bool) { s.noFast = !on }

// TakesFastPath reports whether the fast path answers body.
func (s *Server) TakesFastPath(body []byte) bool {
	st := s.pool.Get().(*state)
	defer s.pool.Put(st)
	_, ok := s.parseFast(bytes.TrimSpace(body), st)
	return ok
}
