package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// clientIDs lists the server's connections' ids, without the caller's.
func clientIDs(t *testing.T, s *server) map[string]bool {
	t.Helper()
	rc := s.client(t, "")
	defer rc.Close()
	list, err := rc.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	self, _ := rc.ClientID(context.Background()).Result()
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		for _, f := range strings.Fields(line) {
			if id, ok := strings.CutPrefix(f, "id="); ok && id != itoa(self) {
				ids[id] = true
			}
		}
	}
	return ids
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestSessionKeepsConnections: a session's windows run on the connections
// it opened, back to back from the instant asked for, each interval its
// own result.
func TestSessionKeepsConnections(t *testing.T) {
	s := startRedis(t)
	ctx := context.Background()
	sess, err := Open(ctx, Config{Addr: s.Addr, Clients: 4, Keyspace: 1000, DataSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	before := clientIDs(t, s)
	if len(before) != 5 { // 4 load connections + the session's control client
		t.Fatalf("%d connections on the server after Open, want 5: %v", len(before), before)
	}
	for _, test := range []string{"SET", "LRANGE_100"} {
		w := Windows{Test: test, Pipeline: 4, Start: time.Now().Add(50 * time.Millisecond), Warmup: 100 * time.Millisecond,
			Duration: 150 * time.Millisecond, Count: 3, Tail: 20 * time.Millisecond}
		t0 := time.Now()
		res, err := sess.Run(ctx, w)
		if err != nil {
			t.Fatalf("%s: %v", test, err)
		}
		if took, least := time.Since(t0), time.Until(w.Start)+w.Warmup+3*w.Duration+w.Tail; took < least {
			t.Errorf("%s: Run returned after %s, before the load's end (%s from its call)", test, took, least)
		}
		if len(res) != 3 {
			t.Fatalf("%s: %d results, want one per interval (3)", test, len(res))
		}
		for i, r := range res {
			h, err := DecodeHist(r.Hist)
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests == 0 || r.Errors != 0 || r.Elapsed != w.Duration || h.TotalCount() != r.Requests || r.Pipeline != 4 || r.Clients != 4 {
				t.Errorf("%s interval %d: %d requests, %d errors, elapsed %s, histogram %d values, P%d, %d clients", test, i, r.Requests, r.Errors, r.Elapsed, h.TotalCount(), r.Pipeline, r.Clients)
			}
		}
	}
	if after := clientIDs(t, s); len(after) != len(before) {
		t.Errorf("connections changed across windows: %v, then %v", before, after)
	} else {
		for id := range before {
			if !after[id] {
				t.Errorf("connection %s was replaced across windows: %v, then %v", id, before, after)
			}
		}
	}
	// A start instant already passed is refused, not run late.
	_, err = sess.Run(ctx, Windows{Test: "SET", Start: time.Now().Add(-time.Second), Duration: 100 * time.Millisecond, Count: 1})
	if !errors.Is(err, ErrLate) {
		t.Errorf("a start a second ago: %v, want ErrLate", err)
	}
}

// TestServe drives a serving generator through its control protocol.
func TestServe(t *testing.T) {
	s := startRedis(t)
	ctx := context.Background()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, Config{Addr: s.Addr, Clients: 2}, inR, outW); outW.Close() }()
	rd := bufio.NewScanner(outR)
	read := func() Reply {
		t.Helper()
		if !rd.Scan() {
			t.Fatalf("no reply: %v", rd.Err())
		}
		var r Reply
		if err := json.Unmarshal(rd.Bytes(), &r); err != nil {
			t.Fatalf("reply %q: %v", rd.Text(), err)
		}
		return r
	}
	if r := read(); !r.Ready || r.Clients != 2 {
		t.Fatalf("first reply %+v, want ready with 2 clients", r)
	}
	req, _ := json.Marshal(Request{Windows: &Windows{Test: "GET", Pipeline: 2, Start: time.Now().Add(30 * time.Millisecond),
		Duration: 100 * time.Millisecond, Count: 2}})
	inW.Write(append(req, '\n'))
	if r := read(); r.Error != "" || len(r.Results) != 2 || r.Results[0].Requests == 0 || r.Results[1].Requests == 0 {
		t.Fatalf("window reply %+v, want two measured intervals", r)
	}
	inW.Write([]byte("{\"windows\": {\"test\": \"NOPE\", \"count\": 1, \"duration\": 1000}}\n"))
	if r := read(); !strings.Contains(r.Error, "NOPE") {
		t.Errorf("unknown test: reply %+v, want an error naming it", r)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve after end of input: %v", err)
	}
}

// TestServeRefusesUnreachable: a generator that cannot connect says so in
// its first reply.
func TestServeRefusesUnreachable(t *testing.T) {
	var out strings.Builder
	err := Serve(context.Background(), Config{Addr: "127.0.0.1:1", Clients: 1, Timeout: time.Second}, strings.NewReader(""), &out)
	if err == nil || !strings.Contains(out.String(), "\"error\"") {
		t.Errorf("Serve to a closed port: %v, wrote %q; want an error reply", err, out.String())
	}
}
