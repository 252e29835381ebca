package megamcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// PreloadReport is what Preload did: the references loaded (each as a
// one-module lifecycle group, seed state included), how many were
// synthesized servers on a shared interpreter, and the wall time.
type PreloadReport struct {
	Loaded  int           `json:"loaded"`
	Servers int           `json:"servers"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Preload registers refs before any session asks for them: each module or
// synthesized server is resolved, loaded (a server bundle on its
// interpreter: nothing compiled, its seed imported) and made a one-module
// lifecycle group, so that the first session on it costs what a later one
// does. A ref that does not resolve or load stops Preload with an error
// naming it; the refs loaded before it stay loaded.
func (s *Server) Preload(ctx context.Context, refs []string) (*PreloadReport, error) {
	start := time.Now()
	rep := &PreloadReport{}
	for _, ref := range refs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		g, err := s.group(ctx, []string{ref})
		if err != nil {
			return rep, fmt.Errorf("preload %s: %w", ref, err)
		}
		rep.Loaded++
		if g.modules[0].mod.Interpreter() != nil {
			rep.Servers++
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// ErrNoRegistryRefs: PreloadAll found nothing tagged in the registry.
var ErrNoRegistryRefs = errors.New("the registry has no tagged module")

// PreloadAll preloads every name:latest reference of the registry (module
// bundles and synthesized servers alike), in name order.
func (s *Server) PreloadAll(ctx context.Context) (*PreloadReport, error) {
	list, err := s.cfg.Registry.List()
	if err != nil {
		return nil, fmt.Errorf("preload: listing the registry: %w", err)
	}
	var refs []string
	for _, r := range list {
		if r.Tag == "latest" {
			refs = append(refs, r.Name+":latest")
		}
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("preload: %w (%s)", ErrNoRegistryRefs, s.cfg.Registry.Dir())
	}
	return s.Preload(ctx, refs)
}

// LoadedModule describes one module the server has loaded.
type LoadedModule struct {
	Ref    string `json:"ref"`    // the reference it was first loaded by
	Digest string `json:"digest"` // bundle digest
	Name   string `json:"name"`   // manifest name
	Tools  int    `json:"tools"`
	// Server is true for a synthesized server run by a shared interpreter.
	Server bool `json:"server"`
}

// Loaded lists the loaded modules, by name then digest.
func (s *Server) Loaded() []LoadedModule {
	s.mu.RLock()
	out := make([]LoadedModule, 0, len(s.modules))
	for _, lm := range s.modules {
		out = append(out, LoadedModule{Ref: lm.ref, Digest: lm.digest, Name: lm.mod.Manifest().Name,
			Tools: len(lm.mod.Manifest().Tools), Server: lm.mod.Interpreter() != nil})
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Digest < out[j].Digest
	})
	return out
}

// loadedHandler is GET /v1/modules: {"count": N, "servers": M, "modules":
// [LoadedModule...]}.
func (s *Server) loadedHandler(w http.ResponseWriter, _ *http.Request) {
	mods := s.Loaded()
	n := 0
	for _, m := range mods {
		if m.Server {
			n++
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(mods), "servers": n, "modules": mods})
}
