package module

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ErrNotFound: a reference names no bundle in the registry.
var ErrNotFound = errors.New("module not found")

// Registry is a local, content-addressed store of bundles:
//
//	DIR/blobs/sha256/<hex>.tar     one canonical bundle tar per digest
//	DIR/refs/<name>/<tag>          a text file holding a digest
//
// Identical content is stored once. Writes are atomic (rename), so several
// processes may share a registry.
type Registry struct{ dir string }

// ErrNoRegistry: the registry directory does not exist (Registry.Check).
var ErrNoRegistry = errors.New("no module registry")

// OpenRegistry opens the registry in dir. It creates nothing: the first
// write (Put, Tag) creates the directories, so reading a registry that
// does not exist (a mistyped $WEFT_REGISTRY) leaves the disk as it was;
// reads of one find nothing (ErrNotFound, an empty List). A dir that
// exists but is not a directory is an error.
func OpenRegistry(dir string) (*Registry, error) {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("module registry: %s is not a directory", dir)
	}
	return &Registry{dir: dir}, nil
}

// Check is nil when the registry's directory exists, else an error
// wrapping ErrNoRegistry that names it: commands that only read (weft
// module list) report a mistyped registry instead of an empty one.
func (r *Registry) Check() error {
	st, err := os.Stat(r.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w at %s: nothing has been built or pulled into it (check --registry and $WEFT_REGISTRY)", ErrNoRegistry, r.dir)
	case err != nil:
		return fmt.Errorf("module registry: %w", err)
	case !st.IsDir():
		return fmt.Errorf("module registry: %s is not a directory", r.dir)
	}
	return nil
}

// DefaultRegistryDir is $WEFT_REGISTRY, else <user cache dir>/weft/registry.
func DefaultRegistryDir() string {
	if d := os.Getenv("WEFT_REGISTRY"); d != "" {
		return d
	}
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "weft", "registry")
	}
	return filepath.Join(os.TempDir(), "weft-registry")
}

// Dir returns the registry's directory.
func (r *Registry) Dir() string { return r.dir }

var (
	digestRe = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	nameRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

func (r *Registry) blobPath(digest string) string {
	return filepath.Join(r.dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:")+".tar")
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Put stores b and tags it name:version and name:latest. It returns the
// digest; storing the same content again rewrites nothing. A blob already
// stored under the digest is read and verified first: when its bytes do not
// hash to its name (a corrupt or truncated file, e.g. a torn copy or a disk
// error), it is replaced atomically by b's canonical tar, so rebuilding or
// pulling a module repairs the registry.
func (r *Registry) Put(b *Bundle) (string, error) {
	t, err := b.Tar()
	if err != nil {
		return "", err
	}
	d := digestOf(t)
	if !r.blobIntact(d) {
		if err := os.MkdirAll(filepath.Dir(r.blobPath(d)), 0o755); err != nil {
			return "", fmt.Errorf("module registry: %w", err)
		}
		if err := writeAtomic(r.blobPath(d), t); err != nil {
			return "", fmt.Errorf("module registry: %w", err)
		}
	}
	for _, tag := range []string{b.Manifest.Version, "latest"} {
		if tag == "" {
			continue
		}
		if err := r.Tag(b.Manifest.Name, tag, d); err != nil {
			return "", err
		}
	}
	return d, nil
}

// blobIntact reports whether the blob stored under digest exists and its
// bytes hash to digest. Any read error counts as not intact: the caller
// rewrites the blob, and a real I/O problem then shows as the write's error.
func (r *Registry) blobIntact(digest string) bool {
	data, err := os.ReadFile(r.blobPath(digest))
	return err == nil && digestOf(data) == digest
}

// PutTar stores a bundle tar received from elsewhere after checking that it
// is a well-formed bundle whose canonical digest is want (when want != "").
func (r *Registry) PutTar(data []byte, want string) (string, error) {
	b, err := ReadBundle(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	d, err := b.Digest()
	if err != nil {
		return "", err
	}
	if want != "" && d != want {
		return "", fmt.Errorf("%w: digest %s, expected %s", ErrInvalidBundle, d, want)
	}
	return r.Put(b)
}

// Tag points name:tag at digest.
func (r *Registry) Tag(name, tag, digest string) error {
	if !nameRe.MatchString(name) || !nameRe.MatchString(strings.ToLower(tag)) {
		return fmt.Errorf("module registry: invalid name or tag %q:%q (lower-case letters, digits, . _ -)", name, tag)
	}
	if !digestRe.MatchString(digest) {
		return fmt.Errorf("module registry: invalid digest %q", digest)
	}
	if err := os.MkdirAll(filepath.Join(r.dir, "refs", name), 0o755); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(r.dir, "refs", name, tag), []byte(digest+"\n"))
}

// Resolve turns a reference into a digest. A reference is "sha256:<hex>", a
// "name" (meaning name:latest) or "name:tag". Unknown references wrap
// ErrNotFound; a registry that cannot be read (permissions, too many open
// files, a damaged directory) gives the I/O error, not ErrNotFound.
func (r *Registry) Resolve(ref string) (string, error) {
	if digestRe.MatchString(ref) {
		if _, err := os.Stat(r.blobPath(ref)); err != nil {
			return "", notFoundOr(err, ref)
		}
		return ref, nil
	}
	name, tag, ok := strings.Cut(ref, ":")
	if !ok {
		tag = "latest"
	}
	if !nameRe.MatchString(name) || strings.ContainsAny(tag, `/\`) {
		return "", fmt.Errorf("%w: %q is not a digest or name[:tag]", ErrNotFound, ref)
	}
	data, err := os.ReadFile(filepath.Join(r.dir, "refs", name, tag))
	if err != nil {
		return "", notFoundOr(err, ref)
	}
	return strings.TrimSpace(string(data)), nil
}

// Get returns the bundle a reference names. It verifies the stored bytes
// against their digest.
func (r *Registry) Get(ref string) (*Bundle, string, error) {
	d, err := r.Resolve(ref)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(r.blobPath(d))
	if err != nil {
		return nil, "", notFoundOr(err, d)
	}
	if got := digestOf(data); got != d {
		return nil, "", fmt.Errorf("%w: stored bundle %s is corrupt (content digest %s)", ErrInvalidBundle, d, got)
	}
	b, err := ReadBundle(bytes.NewReader(data))
	return b, d, err
}

// notFoundOr is ErrNotFound for a file that does not exist (what a missing
// reference looks like on disk), else the I/O error itself: an unreadable
// registry must not look like an unknown module.
func notFoundOr(err error, ref string) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, ref)
	}
	return fmt.Errorf("module registry: reading %s: %w", ref, err)
}

// Tar returns the stored canonical tar of a reference.
func (r *Registry) Tar(ref string) ([]byte, string, error) {
	d, err := r.Resolve(ref)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(r.blobPath(d))
	if err != nil {
		return nil, "", notFoundOr(err, d)
	}
	return data, d, nil
}

// Ref is one tag of the registry.
type Ref struct {
	Name   string `json:"name"`
	Tag    string `json:"tag"`
	Digest string `json:"digest"`
}

// List returns every name:tag, sorted; none for a registry nothing was
// stored in yet (its directory may not exist).
func (r *Registry) List() ([]Ref, error) {
	var out []Ref
	names, err := os.ReadDir(filepath.Join(r.dir, "refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		tags, err := os.ReadDir(filepath.Join(r.dir, "refs", n.Name()))
		if err != nil {
			continue
		}
		for _, t := range tags {
			if strings.HasPrefix(t.Name(), ".tmp-") {
				continue
			}
			d, _ := os.ReadFile(filepath.Join(r.dir, "refs", n.Name(), t.Name()))
			out = append(out, Ref{Name: n.Name(), Tag: t.Name(), Digest: strings.TrimSpace(string(d))})
		}
	}
	slices.SortFunc(out, func(a, b Ref) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Tag, b.Tag)
	})
	return out, nil
}
