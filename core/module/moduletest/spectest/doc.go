// Package spectest is the test kit of synthesized servers' oracle tests (a
// spec directory of weft.server/v1 with a cases file of the shared oracle
// format, docs/module-test.md): the spec and its seed state loaded once per
// directory, the server run natively (module.NewNativeServer), a cases file
// replayed with moduletest.Run and reported through testing.T, and the check
// that a server's export of changed records agrees with its whole export.
// The domains' tests (examples/servers/*) use it; it imports no example.
package spectest
