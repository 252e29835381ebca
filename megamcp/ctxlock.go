package megamcp

import (
	"context"
	"sync"
)

// ctxMutex is a mutual-exclusion lock whose wait can be abandoned when a
// context ends (a session's lock: a call may hold it for the whole call
// timeout, and an admin request waiting behind it should give up when its
// client does). The zero value is an unlocked mutex.
type ctxMutex struct {
	once sync.Once
	ch   chan struct{} // holds one token while locked
}

func (m *ctxMutex) init() { m.once.Do(func() { m.ch = make(chan struct{}, 1) }) }

// Lock waits for the lock.
func (m *ctxMutex) Lock() {
	m.init()
	m.ch <- struct{}{}
}

// LockContext waits for the lock or for ctx to end; it returns ctx's error
// (and does not hold the lock) in the latter case.
func (m *ctxMutex) LockContext(ctx context.Context) error {
	m.init()
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case m.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Unlock releases the lock; unlocking an unlocked mutex panics like
// sync.Mutex.
func (m *ctxMutex) Unlock() {
	m.init()
	select {
	case <-m.ch:
	default:
		panic("megamcp: unlock of unlocked session lock")
	}
}
