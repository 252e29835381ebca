package module

import (
	"bytes"
	"fmt"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// IsServer reports whether b is a server bundle (a synthesized server:
// server.json, no module.wasm).
func (b *Bundle) IsServer() bool { return b.Server != nil }

// ServerBundle returns the bundle of synthesized server s run by the
// interpreter module whose bundle digest is interpreter ("sha256:<hex>",
// ResolveInterpreter): manifest.json is s.Manifest() naming the
// interpreter, server.json the spec with its program inline and without
// its schema and seed, which go to schema.sql and seed.json. The bundle is
// checked (Check: the spec validates, its program compiles, the schema and
// seed load) but not stored; Registry.Put stores it. Errors wrap
// ErrInvalidBundle and name server, tool and field.
func ServerBundle(s *spec.Server, interpreter string) (*Bundle, error) {
	if !digestRe.MatchString(interpreter) {
		return nil, fmt.Errorf("%w: interpreter %q is not a bundle digest (sha256:<hex>)", ErrInvalidBundle, interpreter)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidBundle, err)
	}
	body := *s
	body.Schema, body.Seed = "", nil
	body.ProgramFile, body.SchemaFile, body.SeedFile = "", "", ""
	raw, err := abi.Marshal(&body)
	if err != nil {
		return nil, fmt.Errorf("%w: server.json: %v", ErrInvalidBundle, err)
	}
	man := Manifest(s.Manifest())
	man.Interpreter = interpreter
	b := &Bundle{Manifest: man, Server: raw, Schema: s.Schema, Seed: bytes.Clone(s.Seed)}
	if err := b.checkServer(); err != nil {
		return nil, err
	}
	return b, nil
}

// Spec returns the server of a server bundle: server.json with the
// bundle's schema and seed, validated. Errors wrap ErrInvalidBundle.
func (b *Bundle) Spec() (*spec.Server, error) {
	if !b.IsServer() {
		return nil, fmt.Errorf("%w: not a server bundle (no %s)", ErrInvalidBundle, BundleServer)
	}
	s, err := spec.Parse(b.Server)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidBundle, BundleServer, err)
	}
	if s.Schema != "" || len(s.Seed) > 0 || s.ProgramFile != "" || s.SchemaFile != "" || s.SeedFile != "" {
		return nil, fmt.Errorf("%w: %s: server %q: schema, seed and file references belong in schema.sql and seed.json", ErrInvalidBundle, BundleServer, s.Name)
	}
	s.Schema, s.Seed = b.Schema, bytes.Clone(b.Seed)
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidBundle, err)
	}
	return s, nil
}

// checkServer verifies a server bundle's own parts: the spec, a program
// that compiles (sdk/interp.Check, under the default step budget), an
// interpreter digest, and manifest.json equal to what the spec gives.
func (b *Bundle) checkServer() error {
	s, err := b.Spec()
	if err != nil {
		return err
	}
	if len(b.Wasm) > 0 {
		return fmt.Errorf("%w: server %q: a server bundle holds no module.wasm", ErrInvalidBundle, s.Name)
	}
	if !digestRe.MatchString(b.Manifest.Interpreter) {
		return fmt.Errorf("%w: server %q: manifest.json interpreter %q is not a bundle digest (sha256:<hex>)", ErrInvalidBundle, s.Name, b.Manifest.Interpreter)
	}
	if err := interp.Check(s.Program); err != nil {
		return fmt.Errorf("%w: server %q, field program: %v", ErrInvalidBundle, s.Name, err)
	}
	want := Manifest(s.Manifest())
	want.Interpreter = b.Manifest.Interpreter
	wj, err := canonicalManifest(&want)
	if err != nil {
		return err
	}
	hj, err := canonicalManifest(&b.Manifest)
	if err != nil {
		return err
	}
	if !bytes.Equal(wj, hj) {
		return fmt.Errorf("%w: server %q: manifest.json differs from the manifest its server.json gives (tools, tables or identity edited by hand?)", ErrInvalidBundle, s.Name)
	}
	return nil
}
