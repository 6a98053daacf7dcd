package dashboards

import (
	"io"
	"sync"
)

// syncWriter serialises a child's stdout and stderr into one log.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
