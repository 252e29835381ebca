package synth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weft-dev/weft/sdk/spec"
)

// ScriptFormat is the "format" value of a scripted synthesizer's file.
const ScriptFormat = "weft.synth-script/v1"

// Script is the file a Scripted synthesizer replays (JSON, shape below;
// docs/synthesis.md, "Scripted synthesizer"): recorded answers, each
// keyed by the documentation's name, the round and the digest of the
// request's findings.
type Script struct {
	Format      string         `json:"format"`
	Description string         `json:"description,omitempty"`
	Answers     []ScriptAnswer `json:"answers"`
}

// ScriptAnswer is one recorded answer. The key: Docs (Docs.Name), Round
// (Request.Round) and Findings (FindingsDigest of Request.Findings; ""
// matches any findings of that docs and round, an exact digest wins). The
// answer: Raw, the answer text verbatim (for a malformed answer: it is
// parsed as a spec, and a text that is not one is an *AnswerError), or a
// server, inline (Server) or a spec file or directory (File, relative to
// the script file), with Edits applied in order. Fault says what the
// answer plants (documentation only).
type ScriptAnswer struct {
	Docs     string          `json:"docs"`
	Round    int             `json:"round"`
	Findings string          `json:"findings,omitempty"`
	Fault    string          `json:"fault,omitempty"`
	Raw      *string         `json:"raw,omitempty"`
	Server   json.RawMessage `json:"server,omitempty"`
	File     string          `json:"file,omitempty"`
	Edits    []Edit          `json:"edits,omitempty"`
}

// Edit replaces Old (which must occur) by New in one part of the answer:
// Field "program", "schema" or "seed" (the text of that member), or
// "server" (the compact JSON text of the whole server after the other
// parts are inlined: for tools, tables and error codes).
type Edit struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// Scripted is the scripted synthesizer: it replays a Script's answers.
// Safe for concurrent use (it does not change after loading).
type Scripted struct {
	script *Script
	dir    string // the script file's directory
}

var _ Synthesizer = (*Scripted)(nil)

// LoadScript reads a script file and checks it: format, every answer
// keyed (docs non-empty, round 0..MaxRevisions) and holding exactly one of
// raw, server and file, edits naming a known field, no two answers with
// the same key.
func LoadScript(path string) (*Scripted, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("synth: script: %w", err)
	}
	sc, err := ParseScript(b)
	if err != nil {
		return nil, fmt.Errorf("synth: script %s: %w", path, err)
	}
	return &Scripted{script: sc, dir: filepath.Dir(path)}, nil
}

// ParseScript decodes and checks a script (see LoadScript); files of its
// answers are relative to the current directory unless loaded by
// LoadScript.
func ParseScript(b []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var sc Script
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("not a %s JSON object: %w", ScriptFormat, err)
	}
	if sc.Format != ScriptFormat {
		return nil, fmt.Errorf("format %q, want %q", sc.Format, ScriptFormat)
	}
	seen := map[string]bool{}
	for i, a := range sc.Answers {
		where := fmt.Sprintf("answers[%d] (docs %q, round %d)", i, a.Docs, a.Round)
		n := 0
		if a.Raw != nil {
			n++
		}
		if len(a.Server) > 0 {
			n++
		}
		if a.File != "" {
			n++
		}
		switch {
		case a.Docs == "":
			return nil, fmt.Errorf("answers[%d]: docs is empty", i)
		case a.Round < 0 || a.Round > MaxRevisions:
			return nil, fmt.Errorf("%s: round must be 0..%d", where, MaxRevisions)
		case n != 1:
			return nil, fmt.Errorf("%s: give exactly one of raw, server and file (has %d)", where, n)
		case a.Raw != nil && len(a.Edits) > 0:
			return nil, fmt.Errorf("%s: edits apply to server or file, not raw", where)
		}
		for j, e := range a.Edits {
			if !slices.Contains([]string{"program", "schema", "seed", "server"}, e.Field) || e.Old == "" {
				return nil, fmt.Errorf("%s: edits[%d]: field must be program, schema, seed or server, and old non-empty", where, j)
			}
		}
		k := a.Docs + "\x00" + fmt.Sprint(a.Round) + "\x00" + a.Findings
		if seen[k] {
			return nil, fmt.Errorf("%s: a second answer with the same key (findings %q)", where, a.Findings)
		}
		seen[k] = true
	}
	return &sc, nil
}

// Name is "scripted".
func (*Scripted) Name() string { return "scripted" }

// Script returns the loaded script.
func (s *Scripted) Script() *Script { return s.script }

// Synthesize returns the answer recorded for req: docs name, round and
// FindingsDigest(req.Findings) exactly, else the answer of that docs and
// round recorded with no findings digest. No answer is an error naming the
// key to record; a malformed recorded answer is an *AnswerError.
func (s *Scripted) Synthesize(_ context.Context, req *Request) (*spec.Server, error) {
	digest := FindingsDigest(req.Findings)
	var pick *ScriptAnswer
	for i := range s.script.Answers {
		a := &s.script.Answers[i]
		if a.Docs != req.Docs.Name || a.Round != req.Round {
			continue
		}
		if a.Findings == digest {
			pick = a
			break
		}
		if a.Findings == "" && pick == nil {
			pick = a
		}
	}
	if pick == nil {
		return nil, fmt.Errorf("synth: scripted synthesizer: no recorded answer for docs %q, round %d, findings %s", req.Docs.Name, req.Round, digest)
	}
	bad := func(excerpt string, err error) error {
		return &AnswerError{Synthesizer: s.Name(), Docs: req.Docs.Name, Round: req.Round, Excerpt: excerptOf(excerpt), Err: err}
	}
	if pick.Raw != nil {
		srv, err := spec.Parse([]byte(*pick.Raw))
		if err != nil {
			return nil, bad(*pick.Raw, err)
		}
		return srv, nil
	}
	var srv *spec.Server
	var err error
	if pick.File != "" {
		p := pick.File
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.dir, p)
		}
		if srv, err = spec.Load(p); err != nil {
			return nil, fmt.Errorf("synth: scripted synthesizer: docs %q, round %d: %w", req.Docs.Name, req.Round, err)
		}
	} else if srv, err = spec.Parse(pick.Server); err != nil {
		return nil, bad(string(pick.Server), err)
	}
	return applyEdits(srv, pick.Edits, req)
}

func applyEdits(srv *spec.Server, edits []Edit, req *Request) (*spec.Server, error) {
	for i, e := range edits {
		fail := func() (*spec.Server, error) {
			return nil, fmt.Errorf("synth: scripted synthesizer: docs %q, round %d: edits[%d]: %q does not occur in %s", req.Docs.Name, req.Round, i, e.Old, e.Field)
		}
		replace := func(s string) (string, bool) {
			if !strings.Contains(s, e.Old) {
				return s, false
			}
			return strings.Replace(s, e.Old, e.New, 1), true
		}
		var ok bool
		switch e.Field {
		case "program":
			srv.Program, ok = replace(srv.Program)
		case "schema":
			srv.Schema, ok = replace(srv.Schema)
		case "seed":
			var t string
			t, ok = replace(string(srv.Seed))
			srv.Seed = json.RawMessage(t)
		case "server":
			b, err := json.Marshal(srv)
			if err != nil {
				return nil, err
			}
			var t string
			if t, ok = replace(string(b)); ok {
				n, err := spec.Parse([]byte(t))
				if err != nil {
					return nil, fmt.Errorf("synth: scripted synthesizer: docs %q, round %d: edits[%d] breaks the server: %w", req.Docs.Name, req.Round, i, err)
				}
				srv = n
			}
		}
		if !ok {
			return fail()
		}
	}
	return srv, nil
}

// FindingsDigest is the key of a request's findings in a script:
// "sha256:" and the first 16 hex digits of SHA-256 over one line
// "stage code tool field\n" per finding, sorted (messages, calls and
// diffs are left out: they carry details that change from run to run).
// No findings digest to "".
func FindingsDigest(fs []Finding) string {
	if len(fs) == 0 {
		return ""
	}
	lines := make([]string, len(fs))
	for i, f := range fs {
		lines[i] = fmt.Sprintf("%s %s %s %s\n", f.Stage, f.Code, f.Tool, f.Field)
	}
	slices.Sort(lines)
	h := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "sha256:" + hex.EncodeToString(h[:8])
}
