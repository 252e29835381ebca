package module

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/core/state"
)

// Bundle file names (docs/abi.md, "Bundle").
const (
	BundleManifest = "manifest.json"
	BundleWasm     = "module.wasm"
	BundleSchema   = "schema.sql"
	BundleSeed     = "seed.json"
	// BundleServer is the spec of a synthesized server (sdk/spec, its
	// program inline; schema and seed in schema.sql and seed.json): a
	// server bundle holds it instead of module.wasm.
	BundleServer = "server.json"
)

// ErrInvalidBundle: a bundle is not a well-formed tar of the files
// docs/abi.md lists, or its manifest and files disagree.
var ErrInvalidBundle = errors.New("invalid module bundle")

// Bundle is a tool module as published: its manifest, wasm, the DDL of the
// tables it owns and optional seed rows. Its identity is Digest. A server
// bundle (a synthesized server, ServerBundle) holds Server instead of Wasm,
// and its manifest names the interpreter module that runs it.
type Bundle struct {
	Manifest Manifest
	Wasm     []byte // nil in a server bundle
	Server   []byte // server.json of a server bundle, else nil
	Schema   string // DDL (MySQL dialect) of the tables in Manifest.Tables.Owns
	Seed     []byte // optional: a weft.state/v1 export, or rows in state.LoadJSON's layout
}

// canonicalManifest encodes the manifest with sorted keys and no insignificant
// whitespace, so equal manifests give equal bytes.
func canonicalManifest(m *Manifest) ([]byte, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v) // maps marshal with sorted keys
}

// Tar returns the bundle's canonical encoding: a tar of its files in name
// order, mode 0644, zero times and owners.
func (b *Bundle) Tar() ([]byte, error) {
	man, err := canonicalManifest(&b.Manifest)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{BundleManifest: man, BundleSchema: []byte(b.Schema)}
	if b.IsServer() {
		if len(b.Wasm) > 0 {
			return nil, fmt.Errorf("%w: a server bundle holds no module.wasm", ErrInvalidBundle)
		}
		files[BundleServer] = b.Server
	} else {
		files[BundleWasm] = b.Wasm
	}
	if len(b.Seed) > 0 {
		files[BundleSeed] = b.Seed
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), ModTime: time.Unix(0, 0).UTC(), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Digest returns "sha256:<hex>" of the bundle's canonical tar.
func (b *Bundle) Digest() (string, error) {
	t, err := b.Tar()
	if err != nil {
		return "", err
	}
	return digestOf(t), nil
}

func digestOf(p []byte) string {
	s := sha256.Sum256(p)
	return "sha256:" + hex.EncodeToString(s[:])
}

// MaxBundleBytes bounds what ReadBundle reads from a stream of unknown
// length (1 GiB).
const MaxBundleBytes = 1 << 30

// ReadBundle decodes a bundle tar. Errors wrap ErrInvalidBundle.
//
// What it allocates is bounded by what the input can hold: the files'
// bytes together may not exceed the input's length (known for a
// *bytes.Reader, *bytes.Buffer, *strings.Reader or regular *os.File; else
// MaxBundleBytes), and only regular files are read — sparse entries (GNU
// 'S' or PAX GNU.sparse.*), whose headers may claim gigabytes of holes
// that a few bytes of tar produce, are refused, as are links, devices and
// directories.
func ReadBundle(r io.Reader) (*Bundle, error) {
	budget := inputLen(r)
	tr := tar.NewReader(r)
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidBundle, err)
		}
		switch hdr.Name {
		case BundleManifest, BundleWasm, BundleSchema, BundleSeed, BundleServer:
		default:
			return nil, fmt.Errorf("%w: unexpected file %q", ErrInvalidBundle, hdr.Name)
		}
		if _, dup := files[hdr.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate file %q", ErrInvalidBundle, hdr.Name)
		}
		if hdr.Typeflag != tar.TypeReg { // the reader reports old-style TypeRegA entries as TypeReg
			return nil, fmt.Errorf("%w: %s is not a regular file (tar type %q)", ErrInvalidBundle, hdr.Name, hdr.Typeflag)
		}
		for k := range hdr.PAXRecords {
			if strings.HasPrefix(k, "GNU.sparse.") {
				return nil, fmt.Errorf("%w: %s is a sparse file (PAX %s)", ErrInvalidBundle, hdr.Name, k)
			}
		}
		if hdr.Size < 0 || hdr.Size > budget {
			return nil, fmt.Errorf("%w: %s claims %d bytes, more than the %d the bundle can hold", ErrInvalidBundle, hdr.Name, hdr.Size, budget)
		}
		data, err := io.ReadAll(io.LimitReader(tr, budget+1))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidBundle, err)
		}
		if int64(len(data)) > budget {
			return nil, fmt.Errorf("%w: %s holds more bytes than the bundle can hold (%d)", ErrInvalidBundle, hdr.Name, budget)
		}
		budget -= int64(len(data))
		files[hdr.Name] = data
	}
	for _, need := range []string{BundleManifest, BundleSchema} {
		if _, ok := files[need]; !ok {
			return nil, fmt.Errorf("%w: missing %s", ErrInvalidBundle, need)
		}
	}
	wasm, hasWasm := files[BundleWasm]
	srv, hasServer := files[BundleServer]
	switch {
	case hasWasm && hasServer:
		return nil, fmt.Errorf("%w: holds both %s and %s (a module bundle has the wasm, a server bundle the spec)", ErrInvalidBundle, BundleWasm, BundleServer)
	case !hasWasm && !hasServer:
		return nil, fmt.Errorf("%w: missing %s (or %s for a synthesized server)", ErrInvalidBundle, BundleWasm, BundleServer)
	case hasServer && srv == nil:
		srv = []byte{}
	}
	b := &Bundle{Wasm: wasm, Server: srv, Schema: string(files[BundleSchema]), Seed: files[BundleSeed]}
	dec := json.NewDecoder(bytes.NewReader(files[BundleManifest]))
	if err := dec.Decode(&b.Manifest); err != nil {
		return nil, fmt.Errorf("%w: manifest.json: %v", ErrInvalidBundle, err)
	}
	switch {
	case b.IsServer() && b.Manifest.Interpreter == "":
		return nil, fmt.Errorf("%w: server bundle: manifest.json names no interpreter", ErrInvalidBundle)
	case !b.IsServer() && b.Manifest.Interpreter != "":
		return nil, fmt.Errorf("%w: manifest.json names an interpreter but the bundle holds module.wasm, not server.json", ErrInvalidBundle)
	}
	return b, nil
}

// SeedVersion loads the bundle's schema and seed rows into store and returns
// the seed state every session of this module starts from. The seed may be a
// weft.state/v1 export (its DDL must equal the bundle's schema) or a JSON
// object of rows per table (state.LoadJSON).
func (b *Bundle) SeedVersion(ctx context.Context, store *state.Store) (*state.Version, error) {
	if len(bytes.TrimSpace(b.Seed)) == 0 {
		return store.Load(ctx, b.Schema)
	}
	var probe struct {
		Format string `json:"format"`
	}
	_ = json.Unmarshal(b.Seed, &probe)
	if probe.Format == state.ExportFormat {
		return store.Import(ctx, bytes.NewReader(b.Seed))
	}
	return store.LoadJSON(ctx, b.Schema, bytes.NewReader(b.Seed))
}

// Check verifies that the bundle's parts agree: the schema loads (with the
// seed) and creates exactly the tables the manifest owns; for a server
// bundle also that server.json is a valid spec whose program compiles and
// whose manifest is manifest.json (checkServer). Tables the
// manifest only reads may come from another module of a lifecycle group.
func (b *Bundle) Check(ctx context.Context) error {
	if b.IsServer() {
		if err := b.checkServer(); err != nil {
			return err
		}
	}
	s := state.NewStore()
	defer s.Close()
	schemaOnly, err := s.Load(ctx, b.Schema)
	if err != nil {
		return fmt.Errorf("%w: schema.sql: %v", ErrInvalidBundle, err)
	}
	v, err := b.SeedVersion(ctx, s)
	if err != nil {
		return fmt.Errorf("%w: seed: %v", ErrInvalidBundle, err)
	}
	if v.Schema() != schemaOnly.Schema() {
		return fmt.Errorf("%w: the seed state's tables differ from schema.sql (a weft.state/v1 seed carries its own DDL, which must create the same tables, columns and indexes)", ErrInvalidBundle)
	}
	have := map[string]bool{}
	for _, t := range v.Tables() {
		have[strings.ToLower(t)] = true
	}
	owns := map[string]bool{}
	for _, t := range b.Manifest.Tables.Owns {
		owns[strings.ToLower(t)] = true
		if !have[strings.ToLower(t)] {
			return fmt.Errorf("%w: manifest owns table %q, which schema.sql does not create", ErrInvalidBundle, t)
		}
	}
	for _, t := range v.Tables() {
		if !owns[strings.ToLower(t)] {
			return fmt.Errorf("%w: schema.sql creates table %q, which the manifest does not own", ErrInvalidBundle, t)
		}
	}
	// Tables the module only reads may belong to another module of its
	// lifecycle group; the group checks they exist when it is formed.
	return nil
}

// inputLen is how many bytes r can still deliver, when that is known, else
// MaxBundleBytes.
func inputLen(r io.Reader) int64 {
	switch x := r.(type) {
	case interface{ Len() int }: // *bytes.Reader, *bytes.Buffer, *strings.Reader
		return int64(x.Len())
	case *os.File:
		if st, err := x.Stat(); err == nil && st.Mode().IsRegular() {
			if off, err := x.Seek(0, io.SeekCurrent); err == nil {
				return max(st.Size()-off, 0)
			}
		}
	}
	return MaxBundleBytes
}
