// Package sql will expose SQL to tool modules as host functions: queries and
// statements routed to the calling session's workspace, limited to the tables
// the module declares. It takes a small SQL-executor interface and imports
// nothing of core. It lands with the tool-module work; nothing is implemented
// here yet.
package sql
