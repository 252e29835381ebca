package cli

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/registry"
)

// remoteFlags are the flags of push and pull: which registry server, and
// how to authenticate to it.
type remoteFlags struct {
	server  string
	token   string
	timeout time.Duration
}

func (r *remoteFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.server, "server", "", "registry server URL, e.g. http://localhost:7420 (the API under "+registry.MountPath+" is implied)")
	cmd.Flags().StringVar(&r.token, "token", "", "bearer token for the server (default $WEFT_TOKEN)")
	cmd.Flags().DurationVar(&r.timeout, "timeout", 5*time.Minute, "give up on the server after this long")
}

// client builds the registry client for --server: the URL of a weft server
// (the registry API's mount path is appended unless the URL already ends
// with it).
func (r *remoteFlags) client() (*registry.Client, error) {
	if r.server == "" {
		return nil, usageErrorf("--server is required")
	}
	u, err := url.Parse(r.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErrorf("--server %q is not an http(s) URL", r.server)
	}
	base := strings.TrimRight(r.server, "/")
	if !strings.HasSuffix(strings.TrimRight(u.Path, "/"), registry.MountPath) {
		base += registry.MountPath
	}
	tok := r.token
	if tok == "" {
		tok = os.Getenv("WEFT_TOKEN")
	}
	return &registry.Client{BaseURL: base, Token: tok, HTTP: &http.Client{Timeout: r.timeout}}, nil
}

// isBundleFile mirrors moduleFlags.load: REF is a file path rather than a
// registry reference.
func isBundleFile(ref string) bool {
	if strings.ContainsAny(ref, `/\`) || strings.HasSuffix(ref, ".tar") {
		return true
	}
	st, err := os.Stat(ref)
	return err == nil && !st.IsDir()
}

func newModulePushCmd(a *app, f *moduleFlags) *cobra.Command {
	var rf remoteFlags
	var tag string
	cmd := &cobra.Command{
		Use:   "push REF --server URL",
		Short: "Publish a module from the local registry to a registry server",
		Long: `Upload the bundle REF names (in the local registry, or a bundle file) to the
registry of a weft server, as NAME:TAG where NAME is the module's manifest
name and TAG is --tag, else the tag of REF (name:tag), else "latest" for a
bare name, else the manifest version. The server verifies the digest of
what it received and the bundle before storing it; like a local build it
also tags NAME:<version> and NAME:latest (docs/registry.md). The last line
of stdout is the digest.`,
		Example: `  weft module push hello --server http://localhost:7420
  WEFT_TOKEN=... weft module push hello:1.0.0 --server https://weft.example.com`,
		Args: exactArgs(1, "a module reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := rf.client()
			if err != nil {
				return err
			}
			ref := args[0]
			b, d, err := f.load(ref)
			if err != nil {
				return err
			}
			t, err := b.Tar()
			if err != nil {
				return err
			}
			if got := module.Digest(t); got != d { // a registry bundle is stored canonical
				return fmt.Errorf("%s: %w: its canonical tar has digest %s, not %s", ref, module.ErrInvalidBundle, got, d)
			}
			if tag == "" {
				tag = pushTag(ref, b)
			}
			pushed, err := c.Push(cmd.Context(), t, b.Manifest.Name, tag)
			if err != nil {
				return err
			}
			res := struct {
				module.Ref
				Server string `json:"server"`
			}{pushed, c.BaseURL}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "pushed %s:%s to %s\n", pushed.Name, pushed.Tag, c.BaseURL)
				_, err := fmt.Fprintln(w, pushed.Digest)
				return err
			})
		},
	}
	rf.add(cmd)
	cmd.Flags().StringVar(&tag, "tag", "", "tag on the server (default: see above)")
	return cmd
}

// pushTag is the default tag of a push of REF.
func pushTag(ref string, b *module.Bundle) string {
	if !isBundleFile(ref) && !strings.HasPrefix(ref, "sha256:") {
		if _, tag, ok := strings.Cut(ref, ":"); ok {
			return tag
		}
		return "latest"
	}
	if b.Manifest.Version != "" {
		return b.Manifest.Version
	}
	return "latest"
}

func newModulePullCmd(a *app, f *moduleFlags) *cobra.Command {
	var rf remoteFlags
	cmd := &cobra.Command{
		Use:   "pull REF --server URL",
		Short: "Fetch a module from a registry server into the local registry",
		Long: `Download the bundle REF (sha256:<hex>, name or name:tag; a bare name means
name:latest) from the registry of a weft server and store it in the local
registry under the same name:tag. The sha256 of what arrives is checked
against the server's Weft-Digest header and, for a digest REF, against REF;
the manifest's name must be REF's and the bundle must check like a built
one. Like a local build, storing also tags name:<version> and name:latest.
The last line of stdout is the digest.`,
		Example: `  weft module pull hello:0.1.0 --server http://localhost:7420`,
		Args:    exactArgs(1, "a module reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := rf.client()
			if err != nil {
				return err
			}
			ref := args[0]
			data, d, err := c.Pull(ctx, ref)
			if err != nil {
				return err
			}
			b, err := module.ReadBundle(bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("pulled %s: %w", ref, err)
			}
			name, tag := b.Manifest.Name, ""
			if !strings.HasPrefix(ref, "sha256:") {
				var ok bool
				if name, tag, ok = strings.Cut(ref, ":"); !ok {
					tag = "latest"
				}
				if b.Manifest.Name != name {
					return fmt.Errorf("pulled %s: %w: the server sent module %q", ref, module.ErrInvalidBundle, b.Manifest.Name)
				}
			}
			if err := b.Manifest.Validate(); err != nil {
				return fmt.Errorf("pulled %s: %w: manifest: %v", ref, module.ErrInvalidBundle, err)
			}
			if err := b.Check(ctx); err != nil {
				return fmt.Errorf("pulled %s: %w", ref, err)
			}
			reg, err := f.openRegistry()
			if err != nil {
				return err
			}
			// PutTar stores only a canonical tar with digest d, so the local
			// copy is byte for byte what was verified.
			if _, err := reg.PutTar(data, d); err != nil {
				return fmt.Errorf("pulled %s: %w", ref, err)
			}
			if tag != "" {
				if err := reg.Tag(name, tag, d); err != nil {
					return err
				}
			}
			res := struct {
				Name     string `json:"name"`
				Tag      string `json:"tag,omitempty"`
				Digest   string `json:"digest"`
				Registry string `json:"registry"`
			}{name, tag, d, reg.Dir()}
			return a.print(res, func(w io.Writer) error {
				what := name
				if tag != "" {
					what += ":" + tag
				}
				fmt.Fprintf(w, "pulled %s from %s into %s\n", what, c.BaseURL, reg.Dir())
				_, err := fmt.Fprintln(w, d)
				return err
			})
		},
	}
	rf.add(cmd)
	return cmd
}
