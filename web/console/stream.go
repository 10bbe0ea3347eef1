package console

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/web/httpx"
)

// streamPing is how often an idle push stream sends a comment, so that a
// client gone away is noticed and proxies keep the connection.
const streamPing = 15 * time.Second

// streamSettle is how long a stream lets a burst of writes settle before
// it counts the queue again.
const streamSettle = 100 * time.Millisecond

// handleStream serves GET /attention/stream: server-sent events for as long
// as a page is open. Event "queue" (data: the number of items) says the
// queue changed: an item joined or left it. It is sent at once when the
// queue changed since the page was built (?since=, the page's
// fingerprint), then after every write that changes it; the counts come
// from the console's one broadcaster (streamHub), shared by every
// stream. A person's stream beyond StreamLimits.PerUser ends their
// oldest with event "closed" (the page stops reconnecting and polls);
// beyond StreamLimits.Total a new one is 503 with Retry-After. The
// stream ends when the client goes away or the server begins to shut
// down.
func (k *console) handleStream() echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		sub, err := k.streams.join(httpx.Actor(c).UserID)
		if err != nil {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(streamRetryAfter.Seconds())))
			return err
		}
		defer k.streams.leave(sub)
		w := c.Response()
		h := w.Header()
		h.Set(echo.HeaderContentType, "text/event-stream")
		h.Set(echo.HeaderCacheControl, "no-store")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		send := func(format string, args ...any) bool {
			// The server's write timeout is for pages; a stream writes
			// now and then for as long as it lives.
			_ = rc.SetWriteDeadline(time.Now().Add(2 * k.ping)) //nolint:errcheck // unsupported only in tests' recorders
			if _, err := fmt.Fprintf(w, format, args...); err != nil {
				return false
			}
			return rc.Flush() == nil
		}
		if !send("retry: 2000\n: the Attention queue, live\n\n") {
			return nil
		}
		last := c.QueryParam("since")
		ping := time.NewTicker(k.ping)
		defer ping.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-k.stopping:
				return nil
			case <-ping.C:
				if !send(": ping\n\n") {
					return nil
				}
			case counts := <-sub.updates:
				if fp := counts.Fingerprint(); fp != last {
					last = fp
					if !send("event: queue\ndata: %d\n\n", counts.Total()) {
						return nil
					}
				}
			case <-sub.ended:
				if sub.why == replaced {
					send("event: closed\ndata: this page was opened in too many tabs; it checks for changes every few seconds instead\n\n")
				}
				return nil // failed: the client reconnects
			}
		}
	}
}
