package native

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Skill is one skill: Name and Description from its front matter, Body
// the markdown after it; Path is the file it was read from ("" for an
// inline skill).
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Body        string `json:"body,omitempty"`
	Path        string `json:"-"`
}

// ParseSkill reads a SKILL.md-like document: a front matter between
// "---" lines holding "key: value" lines (name and description are used,
// other keys ignored; values may be "double" or 'single' quoted), then the
// body. defaultName is used when the front matter has no name. Errors: no
// front matter, an unterminated one, no name, no description.
func ParseSkill(text, defaultName string) (Skill, error) {
	text = strings.ReplaceAll(strings.TrimPrefix(text, "\ufeff"), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Skill{}, errors.New(`no front matter (the file must start with a "---" line)`)
	}
	front, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		if front, ok = strings.CutSuffix(strings.TrimRight(rest, "\n"), "\n---"); !ok {
			return Skill{}, errors.New(`front matter has no closing "---" line`)
		}
		body = ""
	}
	s := Skill{Name: defaultName, Body: strings.TrimSpace(body)}
	for _, line := range strings.Split(front, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "#") {
			continue
		}
		value = unquote(strings.TrimSpace(value))
		switch strings.TrimSpace(key) {
		case "name":
			if value != "" {
				s.Name = value
			}
		case "description":
			s.Description = value
		}
	}
	if s.Name == "" {
		return Skill{}, errors.New("no name")
	}
	if s.Description == "" {
		return Skill{}, fmt.Errorf("skill %q: no description", s.Name)
	}
	return s, nil
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// loadSkills checks the inline skills and reads the directories' skills:
// for each directory, in name order, <sub>/SKILL.md of each
// sub-directory that has one and each *.md file. Errors name the file.
func loadSkills(inline []Skill, dirs []string) ([]Skill, error) {
	var out []Skill
	seen := map[string]string{}
	add := func(s Skill, where string) error {
		if prev, ok := seen[s.Name]; ok {
			return fmt.Errorf("skill %q defined twice (%s and %s)", s.Name, prev, where)
		}
		seen[s.Name] = where
		out = append(out, s)
		return nil
	}
	for i, s := range inline {
		s.Name, s.Description = strings.TrimSpace(s.Name), strings.TrimSpace(s.Description)
		s.Body, s.Path = strings.TrimSpace(s.Body), ""
		if s.Name == "" || s.Description == "" {
			return nil, fmt.Errorf("skills[%d]: a skill needs a name and a description", i)
		}
		if err := add(s, fmt.Sprintf("skills[%d]", i)); err != nil {
			return nil, err
		}
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("skills_dirs: %v", err)
		}
		var files []string
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				if _, err := os.Stat(filepath.Join(p, "SKILL.md")); err == nil {
					files = append(files, filepath.Join(p, "SKILL.md"))
				}
			case strings.HasSuffix(e.Name(), ".md"):
				files = append(files, p)
			}
		}
		sort.Strings(files)
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("skills_dirs: %v", err)
			}
			def := strings.TrimSuffix(filepath.Base(f), ".md")
			if filepath.Base(f) == "SKILL.md" {
				def = filepath.Base(filepath.Dir(f))
			}
			s, err := ParseSkill(string(text), def)
			if err != nil {
				return nil, fmt.Errorf("skill file %s: %v", f, err)
			}
			s.Path = f
			if err := add(s, f); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// renderSkills is the system prompt's skills section ("" for none).
func renderSkills(skills []Skill, mode string) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Available skills\n\nSkills are instructions for particular tasks. When the task at hand matches a skill's description, follow that skill.")
	if mode == "path" {
		b.WriteString(" A skill's instructions are in the file at its location: read it before following it.")
	}
	b.WriteString("\n")
	for _, s := range skills {
		fmt.Fprintf(&b, "\n## %s\n%s\n", s.Name, s.Description)
		switch {
		case mode == "path" && s.Path != "":
			fmt.Fprintf(&b, "Location: %s\n", s.Path)
		case s.Body != "":
			fmt.Fprintf(&b, "\n%s\n", s.Body)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
