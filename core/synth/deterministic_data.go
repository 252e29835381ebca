package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/module/moduletest"
)

// BFCLClassFiles maps the 8 BFCL multi-turn classes to their func_docs
// file names (BFCL's executable_backend_config).
var BFCLClassFiles = map[string]string{
	"GorillaFileSystem": "gorilla_file_system.json",
	"MathAPI":           "math_api.json",
	"MessageAPI":        "message_api.json",
	"TwitterAPI":        "posting_api.json",
	"TicketAPI":         "ticket_api.json",
	"TradingBot":        "trading_bot.json",
	"TravelAPI":         "travel_booking.json",
	"VehicleControlAPI": "vehicle_control.json",
}

// Tau2OracleGroups reads a tau2 domain's tools.json, db.json and an
// oracle cases file into one OracleGroup (every case starts from db.json).
// Read labels come from tools.json's read_only (tau2's own tool types).
// limit > 0 keeps only the first limit cases.
func Tau2OracleGroups(toolsPath, dbPath, casesPath string, limit int) ([]OracleGroup, error) {
	ds, err := LoadDocs(toolsPath)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(toolsPath)
	if err != nil {
		return nil, err
	}
	var labels []struct {
		Name     string `json:"name"`
		ReadOnly bool   `json:"read_only"`
	}
	if err := json.Unmarshal(raw, &labels); err != nil {
		return nil, fmt.Errorf("%s: %w", toolsPath, err)
	}
	ro := map[string]bool{}
	for _, l := range labels {
		ro[l.Name] = l.ReadOnly
	}
	db, err := os.ReadFile(dbPath)
	if err != nil {
		return nil, err
	}
	st, err := decodeState(db)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dbPath, err)
	}
	cases, err := readCases(casesPath)
	if err != nil {
		return nil, err
	}
	if limit > 0 && len(cases.Cases) > limit {
		cases.Cases = cases.Cases[:limit]
	}
	return []OracleGroup{{Docs: &ds[0], State: st, Cases: cases.Cases, Read: func(tool string) (bool, bool) {
		r, ok := ro[tool]
		return r, ok
	}}}, nil
}

func readCases(path string) (*moduletest.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := moduletest.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// BFCLOracleGroups reads a BFCL oracle file (tasks-public.json or
// fuzz-public.json) and groups its cases by involved classes and starting
// state: each group's server is synthesized from the func_docs of its
// classes (a later class's function wins a name collision, as in BFCL)
// and loaded with the case's initial_config. Read labels are the
// synthesized server's own (BFCL documents none). limit > 0 keeps only the
// first limit cases.
func BFCLOracleGroups(funcDocsDir, casesPath string, limit int) ([]OracleGroup, error) {
	cases, err := readCases(casesPath)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(casesPath)
	if err != nil {
		return nil, err
	}
	var extra struct {
		Cases []struct {
			ID      string                     `json:"id"`
			Classes []string                   `json:"involved_classes"`
			Config  map[string]json.RawMessage `json:"initial_config"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &extra); err != nil {
		return nil, fmt.Errorf("%s: %w", casesPath, err)
	}
	if len(extra.Cases) != len(cases.Cases) {
		return nil, fmt.Errorf("%s: %d cases, %d with classes", casesPath, len(cases.Cases), len(extra.Cases))
	}
	n := len(cases.Cases)
	if limit > 0 && n > limit {
		n = limit
	}
	docsCache := map[string]*Docs{}
	classOf := map[string]map[string]string{}
	byKey := map[string]int{}
	var groups []OracleGroup
	for i := 0; i < n; i++ {
		x := extra.Cases[i]
		if len(x.Classes) == 0 {
			return nil, fmt.Errorf("%s: case %s: no involved_classes", casesPath, x.ID)
		}
		ckey := strings.Join(x.Classes, "+")
		docs, ok := docsCache[ckey]
		if !ok {
			d := &Docs{Name: "bfcl-" + strings.ToLower(strings.Join(x.Classes, "-")), Source: funcDocsDir}
			owner := map[string]string{}
			idx := map[string]int{}
			for _, cl := range x.Classes {
				file, ok := BFCLClassFiles[cl]
				if !ok {
					return nil, fmt.Errorf("%s: case %s: unknown class %q", casesPath, x.ID, cl)
				}
				cd, err := LoadDocs(filepath.Join(funcDocsDir, file))
				if err != nil {
					return nil, err
				}
				for _, t := range cd[0].Tools {
					if j, dup := idx[t.Name]; dup {
						d.Tools[j] = t
					} else {
						idx[t.Name] = len(d.Tools)
						d.Tools = append(d.Tools, t)
					}
					owner[t.Name] = cl
				}
			}
			docs = d
			docsCache[ckey] = d
			classOf[ckey] = owner
		}
		var sb bytes.Buffer
		sb.WriteString(ckey)
		keys := make([]string, 0, len(x.Config))
		for k := range x.Config {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sb.WriteString("|" + k + "=")
			sb.Write(x.Config[k])
		}
		gk := sb.String()
		gi, ok := byKey[gk]
		if !ok {
			cfg, _ := json.Marshal(x.Config)
			st, err := decodeState(cfg)
			if err != nil {
				return nil, err
			}
			owner := classOf[ckey]
			gi = len(groups)
			byKey[gk] = gi
			groups = append(groups, OracleGroup{Docs: docs, State: st, Class: func(tool string) string { return owner[tool] }})
		}
		groups[gi].Cases = append(groups[gi].Cases, cases.Cases[i])
	}
	return groups, nil
}
