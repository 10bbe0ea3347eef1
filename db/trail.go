package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/madebook/madebook/db/chain"
)

// The timeline and the activity record are append-only and hash-chained
// (package chain; migration 00024 holds the triggers). Every row of either
// is written here, chained onto the last row of its table: AppendEvent
// and AppendActivity are the one place each is inserted.

// NewEvent is one line of a session's timeline, as AppendEvent adds it.
type NewEvent struct {
	SessionID string
	// At is the time as stored (FormatTime).
	At     string
	Actor  string
	Kind   string
	Ref    string
	Detail string
}

// NewActivity is one entry of the activity record, as AppendActivity
// adds it.
type NewActivity struct {
	// At is the time as stored (FormatTime).
	At     string
	Actor  string
	Action string
	Target string
	// BeforeJSON and AfterJSON are JSON objects, or NULL.
	BeforeJSON sql.NullString
	AfterJSON  sql.NullString
}

// AppendEvent adds e to the timeline, chained onto its last event. q must be a Store.Write transaction: writes
// run one at a time there (on PostgreSQL under the writers' lock), so the
// last event it reads is still the last when it inserts. A writer outside
// one that races another is refused by the schema, never stored as a
// fork.
func AppendEvent(ctx context.Context, q Querier, e NewEvent) error {
	head, err := q.LastEvent(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		head = LastEventRow{Hash: chain.Genesis}
	} else if err != nil {
		return fmt.Errorf("read the timeline's last event: %w", err)
	}
	if head.Hash == "" {
		return errUnchained(chain.Events, head.ID)
	}
	r := chain.Event(head.ID+1, e.At, e.Actor, e.SessionID, e.Kind, e.Ref, e.Detail).Linked(head.Hash)
	return q.InsertEvent(ctx, InsertEventParams{ID: r.ID, SessionID: e.SessionID, At: e.At, Actor: e.Actor, Kind: e.Kind, Ref: e.Ref,
		Detail: e.Detail, PrevHash: r.PrevHash, Hash: r.Hash})
}

// AppendActivity adds a to the activity record, chained onto its last
// entry. q must be a Store.Write transaction, as for AppendEvent.
func AppendActivity(ctx context.Context, q Querier, a NewActivity) error {
	head, err := q.LastAdminActivity(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		head = LastAdminActivityRow{Hash: chain.Genesis}
	} else if err != nil {
		return fmt.Errorf("read the activity record's last entry: %w", err)
	}
	if head.Hash == "" {
		return errUnchained(chain.Activity, head.ID)
	}
	r := chain.ActivityEntry(head.ID+1, a.At, a.Actor, a.Action, a.Target,
		chain.Nullable(a.BeforeJSON.String, a.BeforeJSON.Valid), chain.Nullable(a.AfterJSON.String, a.AfterJSON.Valid)).Linked(head.Hash)
	return q.InsertAdminActivity(ctx, InsertAdminActivityParams{ID: r.ID, At: a.At, Actor: a.Actor, Action: a.Action, Target: a.Target,
		BeforeJson: a.BeforeJSON, AfterJson: a.AfterJSON, PrevHash: r.PrevHash, Hash: r.Hash})
}

// errUnchained is the error of an append onto a row older than the chain:
// Migrate chains every such row, so the database was not migrated by this
// version.
func errUnchained(table string, id int64) error {
	return fmt.Errorf("%s row %d is not chained yet: run `madebook migrate` with this version first", table, id)
}

// EventRow is a stored event as its chain has it.
func EventRow(e Event) chain.Row {
	r := chain.Event(e.ID, e.At, e.Actor, e.SessionID, e.Kind, e.Ref, e.Detail)
	r.PrevHash, r.Hash = e.PrevHash, e.Hash
	return r
}

// ActivityRow is a stored activity entry as its chain has it.
func ActivityRow(a AdminActivity) chain.Row {
	r := chain.ActivityEntry(a.ID, a.At, a.Actor, a.Action, a.Target, chain.Nullable(a.BeforeJson.String, a.BeforeJson.Valid),
		chain.Nullable(a.AfterJson.String, a.AfterJson.Valid))
	r.PrevHash, r.Hash = a.PrevHash, a.Hash
	return r
}

// chainBatch is how many old rows one transaction chains.
const chainBatch = 2000

// chainOldRows chains the rows written before the chain existed (an empty hash),
// in id order, a batch per write transaction, and returns how many it
// chained. It is deterministic, so replicas that migrate together chain
// the same rows alike: the second finds nothing left to do. Migrate
// calls it; a database it has run on has no unchained row.
func (s *Store) chainOldRows(ctx context.Context) (int, error) {
	total := 0
	for _, c := range []struct {
		name string
		next func(context.Context, Querier) (int, error)
	}{{chain.Events, chainOldEvents}, {chain.Activity, chainOldActivity}} {
		for {
			var n int
			if err := s.Write(ctx, func(q Querier) (err error) { n, err = c.next(ctx, q); return err }); err != nil {
				return total, fmt.Errorf("chain the %s written before the chain: %w", c.name, err)
			}
			if total += n; n < chainBatch {
				break
			}
		}
	}
	return total, nil
}

// chainOldEvents chains the oldest batch of unchained events.
func chainOldEvents(ctx context.Context, q Querier) (int, error) {
	rows, err := q.UnchainedEvents(ctx, chainBatch)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	prev, err := q.EventHashBefore(ctx, rows[0].ID)
	if errors.Is(err, sql.ErrNoRows) {
		prev = chain.Genesis
	} else if err != nil {
		return 0, err
	}
	for _, e := range rows {
		r := EventRow(e).Linked(prev)
		if n, err := q.ChainOldEvent(ctx, ChainOldEventParams{PrevHash: r.PrevHash, Hash: r.Hash, ID: r.ID}); err != nil {
			return 0, fmt.Errorf("events row %d: %w", e.ID, err)
		} else if n != 1 {
			return 0, fmt.Errorf("events row %d: chained by someone else meanwhile", e.ID)
		}
		prev = r.Hash
	}
	return len(rows), nil
}

// chainOldActivity chains the oldest batch of unchained activity entries.
func chainOldActivity(ctx context.Context, q Querier) (int, error) {
	rows, err := q.UnchainedAdminActivity(ctx, chainBatch)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	prev, err := q.AdminActivityHashBefore(ctx, rows[0].ID)
	if errors.Is(err, sql.ErrNoRows) {
		prev = chain.Genesis
	} else if err != nil {
		return 0, err
	}
	for _, a := range rows {
		r := ActivityRow(a).Linked(prev)
		if n, err := q.ChainOldAdminActivity(ctx, ChainOldAdminActivityParams{PrevHash: r.PrevHash, Hash: r.Hash, ID: r.ID}); err != nil {
			return 0, fmt.Errorf("admin_activity row %d: %w", a.ID, err)
		} else if n != 1 {
			return 0, fmt.Errorf("admin_activity row %d: chained by someone else meanwhile", a.ID)
		}
		prev = r.Hash
	}
	return len(rows), nil
}

// exportPage is how many rows an export reads at a time.
const exportPage = 1000

// ExportChains hands fn every row of the timeline's chain and then every
// row of the activity record's, each in chain order, from one snapshot.
// With since (a stored time, FormatTime) each chain starts at its first
// row at or after since and runs to its end: a contiguous part of the
// chain, even where a row's time is earlier than the one before it, so
// its first row's prev_hash is the hash of the row before. fn's error
// stops the export and is returned.
func (s *Store) ExportChains(ctx context.Context, since string, fn func(chain.Row) error) error {
	return s.Read(ctx, func(q Querier) error {
		from := func(first func(context.Context, string) (int64, error)) (int64, error) {
			if since == "" {
				return 1, nil
			}
			return first(ctx, since)
		}
		id, err := from(q.FirstEventSince)
		if err != nil {
			return fmt.Errorf("export the timeline: %w", err)
		}
		for id > 0 {
			rows, err := q.ChainEvents(ctx, ChainEventsParams{FromID: id, Lim: exportPage})
			if err != nil {
				return fmt.Errorf("export the timeline from id %d: %w", id, err)
			}
			for _, e := range rows {
				if err := fn(EventRow(e)); err != nil {
					return err
				}
				id = e.ID + 1
			}
			if len(rows) < exportPage {
				break
			}
		}
		if id, err = from(q.FirstAdminActivitySince); err != nil {
			return fmt.Errorf("export the activity record: %w", err)
		}
		for id > 0 {
			rows, err := q.ChainAdminActivity(ctx, ChainAdminActivityParams{FromID: id, Lim: exportPage})
			if err != nil {
				return fmt.Errorf("export the activity record from id %d: %w", id, err)
			}
			for _, a := range rows {
				if err := fn(ActivityRow(a)); err != nil {
					return err
				}
				id = a.ID + 1
			}
			if len(rows) < exportPage {
				break
			}
		}
		return nil
	})
}
