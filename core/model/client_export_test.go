package model

import (
	"context"
	"time"
)

// SetSleep replaces the wait between attempts (tests record the waits
// instead of sleeping).
func SetSleep(c *Client, f func(ctx context.Context, d time.Duration) error) { c.sleep = f }
