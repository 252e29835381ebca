// Package verifier connects core/verify to the plugin protocol: it adapts a
// plugin State service to a verify.Evidence (RemoteEvidence, the plugin
// side) and a verify.Evidence to a plugin State service (EvidenceState, the
// host side). The built-in verifier plugin "exec" is in the exec
// subpackage.
package verifier
