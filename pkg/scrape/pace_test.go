package scrape

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// A body is read no faster than twice the bound per interval: 512 KiB
// at a 1 MiB bound and a 1 s interval (2 MiB a second) take at least
// the time of its reads after the first chunk, 219 ms. A lower bound:
// no machine reads it sooner, however slow or busy.
func TestBodyReadPaced(t *testing.T) {
	body := bytes.Repeat([]byte("# padding padding padding padding padding padding padding pad\n"), 512<<10/64)
	body = append(body, "up 1\n"...)
	url := handler(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	s, err := New(Config{URLs: []string{url}, Interval: time.Second, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	s.Start(t.Context())
	took := time.Since(begin)
	m, err := s.Stop(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Errors) != 0 || find(m, "up") == nil {
		t.Fatalf("errors %v, series %v: want up read and no error", m.Errors, m.Series)
	}
	least := time.Duration(float64(len(body)-readChunk) / (2 << 20) * float64(time.Second))
	if took < least {
		t.Errorf("the first scrape took %v: a paced read of %d bytes takes at least %v", took, len(body), least)
	}
}
