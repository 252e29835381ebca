// Package inspect lets operators look at the state of megamcp sessions with
// any MySQL client, read-only:
//
//	srv, err := inspect.Serve(megamcpServer, inspect.Config{Token: token})
//	// mysql -h 127.0.0.1 -P <port> -u weft -p<token> <session-id>
//
// Each session is a database named by its id (SHOW DATABASES lists the live
// sessions). Every statement runs on a fresh private fork of the session's
// current committed state (megamcp's Server.Current), so a client sees each
// commit on its next statement and can never change a session: writes, DDL
// and server-wide statements are refused with MySQL error 1290. The server
// listens on loopback only unless Config.AllowRemote is set, and accepts
// exactly one user and token.
//
// Serve wires a megamcp server's sessions to the generic server,
// NewMySQLServer (server.go: the vitess wire listener, authentication and
// the handler; catalog.go: database resolution and the read-only statement
// gate), which serves any versions of a state.Store that a Resolve function
// names. core/state provides only what an engine needs
// (Workspace.ReadOnlyDatabase, NewCoster, HostFileAccess).
package inspect
