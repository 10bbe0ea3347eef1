package pgcluster

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestFailoverKeepsAcknowledgedWrites writes rows one at a time through
// the multi-host URL, kills the leader mid-stream, and goes on writing:
// a new leader takes writes within 30 s, every row whose commit was
// acknowledged is there, and when the cluster stops no process it
// started is left.
func TestFailoverKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-member Patroni cluster")
	}
	c := Start(t, Require(t))
	c.CreateDatabase("madebook")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL("madebook"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE acked (id bigint PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	var (
		mu      sync.Mutex
		acked   []int64
		started []time.Time // when each acknowledged write was sent
		ackedAt []time.Time // and when its acknowledgement came
		failed  int
	)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				conn.Close(context.Background())
			}
		}()
		for id := int64(1); ; id++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			sent := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			if conn == nil {
				if conn, err = pgx.Connect(ctx, c.URL("madebook")); err != nil {
					conn = nil
				}
			}
			if conn != nil {
				_, err = conn.Exec(ctx, "INSERT INTO acked (id) VALUES ($1)", id)
			}
			cancel()
			mu.Lock()
			if conn != nil && err == nil {
				acked = append(acked, id)
				started = append(started, sent)
				ackedAt = append(ackedAt, time.Now())
			} else {
				failed++
			}
			mu.Unlock()
			if conn != nil && err != nil {
				conn.Close(context.Background())
				conn = nil
			}
			if err != nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	waitUntil(t, 30*time.Second, "100 writes acknowledged before the kill", func() bool { return count() >= 100 })
	killed, at := c.KillLeader()
	before := count()
	leader, back, err := c.WaitWritable(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if leader == killed {
		t.Fatalf("the killed member %s took a write", killed.Name)
	}
	waitUntil(t, 30*time.Second, "100 more writes acknowledged after the kill", func() bool { return count() >= before+100 })
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	// The first write sent after the kill that was acknowledged (one sent
	// before may have committed before it).
	firstAfter := time.Duration(-1)
	for i, ts := range started {
		if ts.After(at) {
			firstAfter = ackedAt[i].Sub(at)
			break
		}
	}
	conn, err = pgx.Connect(ctx, c.URL("madebook"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT id FROM acked")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	have := map[int64]bool{}
	for _, id := range ids {
		have[id] = true
	}
	lost := 0
	for _, id := range acked {
		if !have[id] {
			lost++
			if lost <= 10 {
				t.Errorf("the acknowledged row %d is gone", id)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged rows lost", lost, len(acked))
	}
	if firstAfter < 0 || firstAfter > 30*time.Second {
		t.Errorf("writes came back %s after the kill, want within 30 s", firstAfter)
	}
	t.Logf("killed leader %s; %s became leader; a probe write was taken %.1f s after the kill, the writer's first %.1f s after; "+
		"%d rows acknowledged (%d before the kill), %d attempts refused; none lost",
		killed.Name, leader.Name, back.Sub(at).Seconds(), firstAfter.Seconds(), len(acked), before, failed)

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := c.Leftovers(); len(left) > 0 {
		t.Fatalf("processes left after Stop: %v", left)
	}
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
