package synth

import (
	"regexp"
	"strings"
	"unicode"
)

// Op is the operation the deterministic synthesizer infers for a tool.
type Op string

// The inferred operations: three reads and four writes.
const (
	OpGet    Op = "get"    // read one entity by its key
	OpList   Op = "list"   // read entities, filtered by the arguments that are columns
	OpCreate Op = "create" // insert an entity (key given or generated)
	OpUpdate Op = "update" // change an entity's columns by key
	OpDelete Op = "delete" // remove an entity by key
	OpStatus Op = "status" // set an entity's status column by key (cancel, close, archive)
)

// ReadOnly reports whether op changes no state.
func (op Op) ReadOnly() bool { return op == OpGet || op == OpList }

// Classification is what Classify decided for a tool and why.
type Classification struct {
	ReadOnly bool
	Verb     string // the lexicon word that decided, "" when none matched
	Status   string // for OpStatus: the status written ("cancelled", "closed", ...)
	Reason   string // "annotation", "name", "description", "default"
}

// ClassifyOptions tunes Classify.
type ClassifyOptions struct {
	// HideAnnotations ignores the documented readOnlyHint, classifying from
	// name, description and schema alone.
	HideAnnotations bool
}

// verbKind is a lexicon entry: whether the verb writes, and the
// operation it means.
type verbKind struct {
	write  bool
	op     Op
	status string
}

// lexicon maps a verb (lower case, as it appears in tool names and at the
// start of descriptions) to what it does. Reads are get/list; writes are
// create/update/delete/status. Built from the verbs of MCP server, tau2
// and BFCL tool names.
var lexicon = func() map[string]verbKind {
	m := map[string]verbKind{}
	add := func(k verbKind, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = k
		}
	}
	add(verbKind{op: OpGet}, `get fetch read retrieve show view describe display lookup inspect info detail details status
		check verify validate get_ open cat head tail peek load download resolve explain preview print echo whoami pwd
		extract scrape crawl screenshot snapshot translate convert parse summarize summarise analyze analyse evaluate
		compare diff calculate calc compute estimate predict recommend suggest generate_report measure count stat stats
		du wc exists test ping health monitor track watch navigate_back take capture`)
	add(verbKind{op: OpList}, `list ls search find query filter browse explore discover scan grep lookup_all top trending
		recent latest history logs log search_ ask research`)
	add(verbKind{write: true, op: OpCreate}, `create add insert new make post publish send book register reserve submit
		upload put write append touch mkdir place buy purchase order sell invite share comment reply retweet tweet like
		follow subscribe schedule enqueue queue push commit deploy install generate import save store record log_ clone
		copy cp fork mint transfer pay charge deposit withdraw login logon signin sign_in authenticate connect logout
		apply trigger run execute start launch spawn fill type click press hover drag select upload_file tag message
		notify email sms call`)
	add(verbKind{write: true, op: OpUpdate}, `update edit modify set change rename move mv patch replace adjust assign
		unassign configure enable disable toggle lock unlock mark resolve_ approve reject merge rebase reset restore
		increase decrease raise lower activate deactivate fix sort label pin unpin star unstar mute unmute block unblock
		accept decline attach detach link unlink grant revoke upgrade downgrade refill fillfuel drive steer accelerate
		brake park engage release adjust_ setup init initialize sync refresh rotate resize crop compress`)
	add(verbKind{write: true, op: OpDelete}, `delete remove rm rmdir del erase purge destroy drop uninstall unfollow
		unsubscribe unlike clear wipe truncate kill terminate evict`)
	add(verbKind{write: true, op: OpStatus, status: "cancelled"}, `cancel abort void revert`)
	add(verbKind{write: true, op: OpStatus, status: "closed"}, `close archive complete finish end stop halt pause suspend
		expire dismiss`)
	return m
}()

// writeHints are description phrases that mark a write even when the
// name's verb is a read (e.g. "checks out", "saves").
var writeDescRE = regexp.MustCompile(`(?i)\b(creates?|deletes?|removes?|updates?|modif(y|ies)|inserts?|writes?|saves?|sends?|posts?|uploads?|cancels?|books?|changes?|sets?|adds?|renames?|moves?|edits?|publish(es)?|submits?)\b`)

var readDescRE = regexp.MustCompile(`(?i)^\s*(returns?|gets?|retrieves?|lists?|searches|search|fetch(es)?|finds?|shows?|reads?|looks? up|queries|query|checks?|calculates?|computes?|describes?|displays?|provides?|view)\b`)

// Words splits a tool name into lower-case words: on _ - . / spaces and
// camelCase boundaries ("getUserDetails" -> get user details).
func Words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == '/' || r == ' ' || r == ':':
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// verbOf returns the first lexicon verb among the name's words (the
// first word is tried first, then the others: "ticket_login", "mv").
func verbOf(words []string) (string, verbKind, bool) {
	for _, w := range words {
		if k, ok := lexicon[w]; ok {
			return w, k, true
		}
	}
	return "", verbKind{}, false
}

// Classify decides whether a documented tool only reads, and the
// operation the deterministic synthesizer implements it with. Order: the
// readOnlyHint annotation when documented (unless hidden) decides
// read/write; otherwise the first lexicon verb among the tool name's
// words; otherwise the first verb of the description; otherwise a read
// when the description reads like one, else a write when it mentions a
// write verb, else a read (most undocumented MCP tools are lookups).
func Classify(t DocTool, opts ClassifyOptions) (Op, Classification) {
	words := Words(t.Name)
	verb, k, ok := verbOf(words)
	c := Classification{Verb: verb, Reason: "name"}
	if !ok {
		dw := Words(firstSentence(t.Description))
		if len(dw) > 0 {
			if kk, ok2 := lexicon[strings.TrimSuffix(dw[0], "s")]; ok2 {
				verb, k, ok = strings.TrimSuffix(dw[0], "s"), kk, true
			} else if kk, ok2 := lexicon[dw[0]]; ok2 {
				verb, k, ok = dw[0], kk, true
			}
		}
		c.Verb, c.Reason = verb, "description"
	}
	if !ok {
		c.Reason = "default"
		desc := firstSentence(t.Description)
		switch {
		case readDescRE.MatchString(desc):
			k = verbKind{op: OpList}
		case writeDescRE.MatchString(desc):
			k = verbKind{write: true, op: OpCreate}
		default:
			k = verbKind{op: OpList}
		}
	}
	op := k.op
	c.ReadOnly = !k.write
	c.Status = k.status
	if op == OpGet && !hasKeyParam(t) {
		op = OpList
	}
	if t.ReadOnlyHint != nil && !opts.HideAnnotations {
		c.Reason = "annotation"
		c.ReadOnly = *t.ReadOnlyHint
		switch {
		case c.ReadOnly && !op.ReadOnly():
			op, c.Status = OpList, ""
			if hasKeyParam(t) {
				op = OpGet
			}
		case !c.ReadOnly && op.ReadOnly():
			op = OpCreate
			if hasKeyParam(t) {
				op = OpUpdate
			}
		}
	}
	return op, c
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	// BFCL prefixes every description with the API's own blurb; the tool's
	// part follows "Tool description:".
	if i := strings.Index(s, "Tool description:"); i >= 0 {
		s = strings.TrimSpace(s[i+len("Tool description:"):])
	}
	if i := strings.IndexAny(s, ".\n"); i > 0 {
		s = s[:i]
	}
	return s
}

// hasKeyParam reports whether the input schema has a key-like property
// (id, *_id, *Id, *_number, *_name of a declared entity is decided later).
func hasKeyParam(t DocTool) bool {
	for _, p := range docProps(t.InputSchema) {
		if isKeyName(p.name) {
			return true
		}
	}
	return false
}
