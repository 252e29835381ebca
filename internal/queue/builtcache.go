package queue

import (
	"sync"

	"github.com/weft-dev/weft/internal/pipeline"
)

// DefaultMaxBuilt is how many distinct experiments a Worker keeps built
// when WorkerOptions.MaxBuilt is 0.
const DefaultMaxBuilt = 4

// builtCache holds a worker's built experiments by Run.buildKey, at most
// max of them idle: acquiring a new key closes the least recently used
// experiments no job is running on until the cache is back within max.
// Experiments in use are never closed; while more than max are in use at
// once the cache holds them all and shrinks as their jobs release them.
// Its methods are called under the worker's mutex; close is called by the
// caller outside it on what take and release return.
type builtCache struct {
	max  int
	tick uint64
	m    map[string]*built
}

type built struct {
	once   sync.Once
	b      *pipeline.Built
	runner *pipeline.UnitRunner
	err    error
	users  int    // jobs holding it
	used   uint64 // tick of its last take or release
}

func newBuiltCache(max int) *builtCache {
	if max <= 0 {
		max = DefaultMaxBuilt
	}
	return &builtCache{max: max, m: map[string]*built{}}
}

// take returns the entry of key (a new, unbuilt one when there is none)
// held by one more job, and the entries evicted to make room.
func (c *builtCache) take(key string) (*built, []*built) {
	bd := c.m[key]
	if bd == nil {
		bd = &built{}
		c.m[key] = bd
	}
	bd.users++
	c.tick++
	bd.used = c.tick
	return bd, c.evict()
}

// release drops one job's hold on bd and returns the entries evicted now
// that it may be idle.
func (c *builtCache) release(bd *built) []*built {
	bd.users--
	c.tick++
	bd.used = c.tick
	return c.evict()
}

// drop forgets key's entry if it is still bd (a failed build: the next
// job builds again); bd's hold is released.
func (c *builtCache) drop(key string, bd *built) {
	bd.users--
	if c.m[key] == bd {
		delete(c.m, key)
	}
}

// evict removes idle entries, least recently used first, while the cache
// holds more than max.
func (c *builtCache) evict() []*built {
	var out []*built
	for len(c.m) > c.max {
		var lk string
		var lru *built
		for k, bd := range c.m {
			if bd.users == 0 && (lru == nil || bd.used < lru.used) {
				lk, lru = k, bd
			}
		}
		if lru == nil {
			break // all in use
		}
		delete(c.m, lk)
		out = append(out, lru)
	}
	return out
}

// all empties the cache and returns what it held.
func (c *builtCache) all() []*built {
	out := make([]*built, 0, len(c.m))
	for _, bd := range c.m {
		out = append(out, bd)
	}
	c.m = map[string]*built{}
	return out
}

// closeBuilt closes what evicted entries built (servers, plugin
// processes).
func closeBuilt(bds []*built) {
	for _, bd := range bds {
		if bd.b != nil {
			bd.b.Close()
		}
	}
}
