package plugin

import (
	"context"
	"io"
	"log"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// slogLogger is an hclog.Logger writing to a *slog.Logger: go-plugin logs
// through it, including the plugin's stderr lines it parses.
type slogLogger struct {
	l       *slog.Logger
	name    string
	implied []any
}

func newHCLogger(l *slog.Logger, name string) hclog.Logger {
	return &slogLogger{l: l, name: name}
}

func toSlogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

func (s *slogLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	lv := toSlogLevel(level)
	ctx := context.Background()
	if !s.l.Enabled(ctx, lv) {
		return
	}
	attrs := make([]any, 0, len(s.implied)+len(args)+2)
	if s.name != "" {
		attrs = append(attrs, "logger", s.name)
	}
	attrs = append(attrs, s.implied...)
	attrs = append(attrs, args...)
	s.l.Log(ctx, lv, msg, attrs...)
}

func (s *slogLogger) Trace(msg string, args ...any) { s.Log(hclog.Trace, msg, args...) }
func (s *slogLogger) Debug(msg string, args ...any) { s.Log(hclog.Debug, msg, args...) }
func (s *slogLogger) Info(msg string, args ...any)  { s.Log(hclog.Info, msg, args...) }
func (s *slogLogger) Warn(msg string, args ...any)  { s.Log(hclog.Warn, msg, args...) }
func (s *slogLogger) Error(msg string, args ...any) { s.Log(hclog.Error, msg, args...) }

func (s *slogLogger) enabled(level hclog.Level) bool {
	return s.l.Enabled(context.Background(), toSlogLevel(level))
}

func (s *slogLogger) IsTrace() bool { return s.enabled(hclog.Trace) }
func (s *slogLogger) IsDebug() bool { return s.enabled(hclog.Debug) }
func (s *slogLogger) IsInfo() bool  { return s.enabled(hclog.Info) }
func (s *slogLogger) IsWarn() bool  { return s.enabled(hclog.Warn) }
func (s *slogLogger) IsError() bool { return s.enabled(hclog.Error) }

func (s *slogLogger) ImpliedArgs() []any { return s.implied }

func (s *slogLogger) With(args ...any) hclog.Logger {
	c := *s
	c.implied = append(append([]any(nil), s.implied...), args...)
	return &c
}

func (s *slogLogger) Name() string { return s.name }

func (s *slogLogger) Named(name string) hclog.Logger {
	c := *s
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (s *slogLogger) ResetNamed(name string) hclog.Logger {
	c := *s
	c.name = name
	return &c
}

// SetLevel is ignored: the slog handler decides.
func (s *slogLogger) SetLevel(hclog.Level) {}

func (s *slogLogger) GetLevel() hclog.Level {
	for _, lv := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if s.enabled(lv) {
			return lv
		}
	}
	return hclog.Off
}

func (s *slogLogger) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return log.New(s.StandardWriter(nil), "", 0)
}

func (s *slogLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		s.Info(strings.TrimRight(string(p), "\n"))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

var _ hclog.Logger = (*slogLogger)(nil)
