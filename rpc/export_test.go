package rpc

// SetFlushBytes makes HandleTo write its answer in pieces of n bytes or
// more, so that small answers are written in many.
func (s *Server) SetFlushBytes(n int) { s.flushBytes = n }
