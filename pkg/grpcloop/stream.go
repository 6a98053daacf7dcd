package grpcloop

// stream is one call on a connection.
type stream struct {
	id      uint32
	p       pending
	sent    int   // bytes of the request's body sent
	sendWin int64 // what the server lets us send on this stream
	recvd   int64 // DATA bytes taken since our last WINDOW_UPDATE for it
	blocked bool  // waits for a send window
	resp    response
	// Where its HEADERS frame went in its connection's out: at outAt,
	// while out's content is the one numbered outGen (conn.flushes).
	outAt  int
	outGen uint32
}

// streamTable finds a connection's open streams by id. Ids grow by two
// per call and calls end roughly in order, so the open ones fit a ring
// indexed by id/2; a collision (a stream outliving a ring's worth of later
// ones) doubles the ring.
type streamTable struct {
	tab  []*stream
	mask uint32
	n    int
}

func (t *streamTable) get(id uint32) *stream {
	if t.tab == nil {
		return nil
	}
	if s := t.tab[(id>>1)&t.mask]; s != nil && s.id == id {
		return s
	}
	return nil
}

func (t *streamTable) put(s *stream) {
	if t.tab == nil {
		t.resize(64)
	}
	for t.tab[(s.id>>1)&t.mask] != nil {
		t.resize(2 * len(t.tab))
	}
	t.tab[(s.id>>1)&t.mask] = s
	t.n++
}

func (t *streamTable) resize(size int) {
	old := t.tab
	for {
		t.tab, t.mask = make([]*stream, size), uint32(size-1)
		ok := true
		for _, s := range old {
			if s == nil {
				continue
			}
			i := (s.id >> 1) & t.mask
			if t.tab[i] != nil {
				ok = false
				break
			}
			t.tab[i] = s
		}
		if ok {
			return
		}
		size *= 2
	}
}

func (t *streamTable) remove(s *stream) {
	if i := (s.id >> 1) & t.mask; t.tab != nil && t.tab[i] == s {
		t.tab[i] = nil
		t.n--
	}
}
