package megamcp

// Abandon simulates a crash of s for in-process recovery tests: the data
// directory's lock goes, as the kernel drops it when a process dies, and
// nothing else happens (no last checkpoint, ledgers left as they are).
func Abandon(s *Server) {
	if s.unlock != nil {
		s.unlock()
		s.unlock = nil
	}
}
