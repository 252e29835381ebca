package model

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"absent", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond},
		{"milliseconds win", map[string]string{"Retry-After-Ms": "120", "Retry-After": "9"}, 120 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, 3 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"capped", map[string]string{"Retry-After": "86400"}, MaxRetryAfter},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-5"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := parseRetryAfter(h, now); got != tt.want {
				t.Errorf("parseRetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	c, err := NewClient(ClientConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m",
		InitialBackoff: 100 * time.Millisecond, MaxBackoff: 1 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Un-jittered waits: 100ms, 200ms, 400ms, 800ms, then capped at 1s.
	full := []time.Duration{100, 200, 400, 800, 1000, 1000, 1000}
	for i, w := range full {
		w *= time.Millisecond
		for range 200 {
			got := c.backoff(i+1, 0)
			if got < w/2 || got > w {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", i+1, got, w/2, w)
			}
		}
	}
	if got := c.backoff(1, 3*time.Second); got != 3*time.Second {
		t.Errorf("backoff with Retry-After 3s = %v, want 3s (Retry-After wins, unjittered)", got)
	}
}

func TestNewClientConfig(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  ClientConfig
	}{
		{"no model", ClientConfig{BaseURL: "http://127.0.0.1:8000/v1"}},
		{"no base url", ClientConfig{Model: "m"}},
		{"relative base url", ClientConfig{BaseURL: "127.0.0.1:8000/v1", Model: "m"}},
		{"ftp", ClientConfig{BaseURL: "ftp://h/v1", Model: "m"}},
	} {
		if _, err := NewClient(tt.cfg); err == nil {
			t.Errorf("%s: NewClient succeeded, want an error", tt.name)
		}
	}
	c, err := NewClient(ClientConfig{BaseURL: "http://127.0.0.1:8000/v1/", Model: "m", MaxRetries: -1, RequestTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != "http://127.0.0.1:8000/v1/chat/completions" {
		t.Errorf("Endpoint = %q", c.Endpoint())
	}
	if c.cfg.MaxRetries != 0 || c.cfg.RequestTimeout != -1 || c.sem != nil {
		t.Errorf("MaxRetries=%d RequestTimeout=%v sem=%v, want 0, -1, nil", c.cfg.MaxRetries, c.cfg.RequestTimeout, c.sem)
	}
	d, _ := NewClient(ClientConfig{BaseURL: "https://h/v1", Model: "m"})
	if d.cfg.MaxRetries != DefaultMaxRetries || d.cfg.RequestTimeout != DefaultRequestTimeout ||
		d.cfg.InitialBackoff != DefaultInitialBackoff || d.cfg.MaxBackoff != DefaultMaxBackoff {
		t.Errorf("defaults not applied: %+v", d.cfg)
	}
}
