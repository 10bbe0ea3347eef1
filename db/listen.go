package db

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Changes across replicas. On PostgreSQL several Madebook processes may
// serve one database, and each remembers what it read (a session's brief
// inputs, bearer secrets, the tool registry), forgetting it when its own
// writes change it. Triggers in the PostgreSQL schema tell the others:
// they NOTIFY the channel ChangeChannel, in the writing transaction (so the
// word goes out when, and only if, it commits), with a payload "topic" or
// "topic:key". One connection of each process LISTENs and hands every
// notification to the store's change handlers. Whenever it (re)connects
// it first hands them Notice{} — forget everything — because what was
// sent while it was away is lost.

// ChangeChannel is the channel the schema's triggers notify.
const ChangeChannel = "madebook"

// The topics the triggers notify.
const (
	// TopicSession: a session's timeline gained an event (key: the
	// session's id), so what its brief is built from may have changed.
	TopicSession = "session"
	// TopicTools: the tool registry changed.
	TopicTools = "tools"
	// TopicAuth: an agent key, a personal token or a user changed (a
	// revocation, a disabled user, a new role).
	TopicAuth = "auth"
)

// Notice is one word from another replica (or this one: a process hears
// its own writes too). The zero Notice, Topic "", means forget everything.
type Notice struct {
	Topic string
	Key   string
}

// parseNotice reads a notification's payload, "topic" or "topic:key".
func parseNotice(payload string) Notice {
	topic, key, _ := strings.Cut(payload, ":")
	return Notice{Topic: topic, Key: key}
}

// changeHandlers are the functions told of each Notice (Store.OnChange).
type changeHandlers struct {
	mu  sync.Mutex
	fns []func(Notice)
}

func (h *changeHandlers) add(fn func(Notice)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fns = append(h.fns, fn)
}

func (h *changeHandlers) tell(c Notice) {
	h.mu.Lock()
	fns := h.fns
	h.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// listen keeps a connection to dsn LISTENing on ChangeChannel until ctx
// ends, handing each notification to deliver, and Notice{} first on every
// (re)connection. A lost connection is retried with a backoff from 100ms to
// 5s; report is told why (it may be nil).
func listen(ctx context.Context, dsn string, deliver func(Notice), report func(error)) {
	const first, most = 100 * time.Millisecond, 5 * time.Second
	wait := first
	for ctx.Err() == nil {
		err := listenOnce(ctx, dsn, deliver, func() { wait = first })
		if ctx.Err() != nil {
			return
		}
		if report != nil && err != nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, most)
	}
}

// listenOnce connects, LISTENs, tells deliver to forget everything and
// then hands it every notification until the connection fails or ctx
// ends. connected is called once it listens.
func listenOnce(ctx context.Context, dsn string, deliver func(Notice), connected func()) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+ChangeChannel); err != nil {
		return err
	}
	connected()
	deliver(Notice{})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		deliver(parseNotice(n.Payload))
	}
}

// OnChange has fn told of every Notice another replica's write makes (and
// this process's own, which it hears too), from the goroutine that
// Listen runs. On SQLite, where one process serves the database, it is
// never called.
func (s *Store) OnChange(fn func(Notice)) { s.changes.add(fn) }

// Listen, on PostgreSQL, listens for the changes the schema's triggers
// announce until ctx ends, telling the OnChange handlers and, since a
// change is a committed write, the Subscribe channels (a console's push
// stream, the webhook sender) of each. report is told when the listening
// connection fails (it reconnects). On SQLite it returns at once.
func (s *Store) Listen(ctx context.Context, report func(error)) {
	if !s.pg {
		return
	}
	listen(ctx, s.dsn, func(c Notice) {
		s.changes.tell(c)
		s.watch.committed()
	}, report)
}
