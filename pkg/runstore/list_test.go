package runstore

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestListPagingAndFilter(t *testing.T) {
	s := openTest(t, t.TempDir(), WithClock(newTestClock().now))
	// Ten runs, created in order; every third is done, the others queued.
	var created []Record
	state := make(map[string]State)
	for i := range 10 {
		r := mustCreate(t, s, `{}`)
		state[r.ID] = Queued
		if i%3 == 0 {
			mustSet(t, s, r.ID, Running)
			state[r.ID] = mustSet(t, s, r.ID, Done).State
		}
		created = append(created, r)
	}
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)
	want := func(st State) []string {
		var out []string
		for _, r := range newestFirst {
			if st == "" || state[r.ID] == st {
				out = append(out, r.ID)
			}
		}
		return out
	}
	for _, c := range []struct {
		filter State
		limit  int
	}{
		{"", 3}, {"", 1}, {"", 10}, {"", 11}, {"", 0},
		{Done, 2}, {Done, 4}, {Queued, 3}, {Running, 5},
	} {
		var got []string
		pages, token := 0, ""
		for {
			rs, next, err := s.List(c.filter, c.limit, token)
			if err != nil {
				t.Fatalf("List(%q, %d, %q): %v", c.filter, c.limit, token, err)
			}
			pages++
			if c.limit > 0 && len(rs) > c.limit {
				t.Fatalf("page of %d, limit %d", len(rs), c.limit)
			}
			for _, r := range rs {
				if c.filter != "" && r.State != c.filter {
					t.Errorf("filter %s returned a %s run", c.filter, r.State)
				}
			}
			got = append(got, ids(rs)...)
			if next == "" {
				break
			}
			if len(rs) == 0 || pages > 20 {
				t.Fatalf("a next token with page %d of %d runs", pages, len(rs))
			}
			token = next
		}
		if w := want(c.filter); !slices.Equal(got, w) {
			t.Errorf("filter %q limit %d: %v, want %v", c.filter, c.limit, got, w)
		}
	}
}

func TestListPagesStableWhileCreating(t *testing.T) {
	s := openTest(t, t.TempDir())
	var all []string
	for range 4 {
		all = append(all, mustCreate(t, s, `{}`).ID)
	}
	p1, next, err := s.List("", 2, "")
	if err != nil || next == "" {
		t.Fatalf("first page: %v, next %q", err, next)
	}
	mustCreate(t, s, `{}`) // newer than everything listed: not on later pages
	p2, next, err := s.List("", 2, next)
	if err != nil {
		t.Fatal(err)
	}
	if next != "" {
		t.Errorf("next = %q after the oldest run", next)
	}
	got := append(ids(p1), ids(p2)...)
	slices.Reverse(all)
	if !slices.Equal(got, all) {
		t.Errorf("pages %v, want %v", got, all)
	}
}

func TestListErrors(t *testing.T) {
	s := openTest(t, t.TempDir())
	mustCreate(t, s, `{}`)
	if _, _, err := s.List("", 10, "not-a-token"); !errors.Is(err, ErrPageToken) {
		t.Errorf("bad token: %v, want ErrPageToken", err)
	}
	if _, _, err := s.List("paused", 10, ""); !errors.Is(err, ErrInvalidState) {
		t.Errorf("bad filter: %v, want ErrInvalidState", err)
	}
	empty := openTest(t, t.TempDir())
	rs, next, err := empty.List("", 10, "")
	if err != nil || len(rs) != 0 || next != "" {
		t.Errorf("empty store: %v, %q, %v", rs, next, err)
	}
}

func TestRecordsAreCopies(t *testing.T) {
	s := openTest(t, t.TempDir())
	r := mustCreate(t, s, `{"model":"a"}`)
	r.Spec[10] = 'X'
	got, _ := s.Get(r.ID)
	got.Spec[10] = 'Y'
	rs, _, _ := s.List("", 1, "")
	if string(rs[0].Spec) != `{"model":"a"}` {
		t.Errorf("spec in the index changed through a returned record: %s", rs[0].Spec)
	}
}

// ListBrief is List, page for page, without the specs.
func TestListBrief(t *testing.T) {
	s := openTest(t, t.TempDir())
	for i := range 5 {
		r := mustCreate(t, s, `{"n":1}`)
		if i%2 == 0 {
			mustSet(t, s, r.ID, Cancelled)
		}
	}
	for _, filter := range []State{"", Cancelled, Queued, Done} {
		token, briefToken := "", ""
		for {
			full, next, err := s.List(filter, 2, token)
			brief, briefNext, briefErr := s.ListBrief(filter, 2, briefToken)
			if err != nil || briefErr != nil || next != briefNext || len(full) != len(brief) {
				t.Fatalf("%q: List %d runs, next %q, %v; ListBrief %d, %q, %v", filter, len(full), next, err, len(brief), briefNext, briefErr)
			}
			for i := range full {
				if string(full[i].Spec) != `{"n":1}` || brief[i].Spec != nil {
					t.Errorf("specs %s and %s", full[i].Spec, brief[i].Spec)
				}
				full[i].Spec = nil
				if !reflect.DeepEqual(full[i], brief[i]) {
					t.Errorf("List %+v, ListBrief %+v", full[i], brief[i])
				}
			}
			if next == "" {
				break
			}
			token, briefToken = next, briefNext
		}
	}
}
