//go:build !linux

package bench

import "time"

// pacer wakes the open loop's sender with Go's timers where the kernel's
// timer slack cannot be set: to about the millisecond on an idle machine,
// which every latency then includes.
type pacer struct{}

func newPacer() *pacer { return &pacer{} }

func (p *pacer) sleepUntil(due time.Time) { time.Sleep(time.Until(due)) }

func (p *pacer) close() {}
