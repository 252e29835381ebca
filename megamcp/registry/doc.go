// Package registry serves a module.Registry over HTTP, so third parties can
// publish tool modules to a weft server and pull them from it, and provides
// the matching Client. The API is documented in docs/registry.md.
//
// NewHandler answers, relative to where it is mounted (weft serve mounts it
// with http.StripPrefix at MountPath, "/v1/registry"):
//
//	GET  /modules                    {"modules": [{"name", "tag", "digest"}, ...]}
//	GET  /modules/{name}/{tag}       the bundle tar
//	GET  /blobs/sha256:{hex}         the bundle tar
//	PUT  /modules/{name}/{tag}       store a bundle tar and tag it name:tag
//
// A bundle tar is served with Content-Type application/x-tar, the header
// Weft-Digest: sha256:<hex> (the sha256 of the body) and that digest, quoted,
// as its ETag. HEAD works wherever GET does.
//
// A PUT carries the tar as its body and its digest in the Weft-Digest header
// (required). The server stores nothing unless every check passes, in this
// order: the body fits HandlerOptions.MaxBundleBytes; the sha256 of the
// bytes received equals Weft-Digest; the tar is a bundle (module.ReadBundle)
// in canonical form (its canonical encoding has the same digest, so what is
// stored and served later is byte for byte what was pushed); the manifest's
// name equals {name}; its version, when set, is a valid tag; the manifest
// validates (module.Manifest.Validate); and the bundle's parts agree
// (module.Bundle.Check: schema, seed, tables). It then stores the bundle
// with module.Registry.PutTar, which, as `weft module build` does, also tags
// name:<manifest version> and name:latest, and tags it name:{tag}. The
// answer is 201 with {"name", "tag", "digest"}, or 200 with the same body
// when the registry already held exactly that (the push changed nothing).
//
// When HandlerOptions.Token is set, every request needs the header
// "Authorization: Bearer <token>" (compared in constant time).
//
// Errors are JSON, {"error": {"code": "...", "message": "..."}}, with
// these codes:
//
//	bad_request         400  malformed name, tag or digest; missing Weft-Digest
//	unauthorized        401  missing or wrong bearer token
//	not_found           404  unknown reference or path
//	method_not_allowed  405  the path exists but not for this method
//	too_large           413  the body exceeds MaxBundleBytes
//	digest_mismatch     422  the bytes received do not have the digest Weft-Digest names
//	invalid_bundle      422  not a bundle, not canonical, invalid manifest, or parts that disagree
//	name_mismatch       422  the manifest's name is not the {name} of the path
//	internal            500  the server failed (e.g. a stored bundle is corrupt)
//
// Client speaks this API. Pull verifies the sha256 of what it received
// against the Weft-Digest header and, when the reference is a digest,
// against the reference; a mismatch is a *DigestMismatchError, which
// matches ErrDigestMismatch with errors.Is. A non-2xx answer is an
// *APIError; errors.Is maps its codes not_found to module.ErrNotFound,
// digest_mismatch to ErrDigestMismatch and invalid_bundle to
// module.ErrInvalidBundle.
package registry
