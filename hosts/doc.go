// Package hosts is the root of the host-function libraries that tool modules
// import, one versioned namespace per subpackage (sql, clock, rand, log,
// fs), and the per-call environment they all read: Call.
//
// The module runtime (core/module) creates one Call per guest call — the
// session's virtual clock, the call's random stream, its log and progress
// sinks, the SQL and file handlers of its unit of work and its deadline —
// binds it to the context of the guest call (With), and points the instance's WASI
// clocks, random source and stdio at the same value. Each library reads it
// with From; a call with no environment bound reads the epoch, zero random
// bytes, drops its log records and gets an SQL or file error back, so
// nothing traps.
// The libraries take small interfaces (an SQL executor, a policy) and
// import nothing of core.
package hosts
