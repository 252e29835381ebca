package ftrl

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// ScenarioType is one of FTRL's four scenario types.
type ScenarioType string

// The four scenario types (FTRL §3.1): one sub-question; independent
// sub-questions; a chain where each sub-question takes the answer of the
// one before; independent chains.
const (
	SingleHop         ScenarioType = "single_hop"
	ParallelSingleHop ScenarioType = "parallel_single_hop"
	MultiHop          ScenarioType = "multi_hop"
	ParallelMultiHop  ScenarioType = "parallel_multi_hop"
)

// ScenarioTypes lists the types in the order the generator cycles them.
var ScenarioTypes = []ScenarioType{SingleHop, ParallelSingleHop, MultiHop, ParallelMultiHop}

// SubQuestion is one step of a scenario: attribute Attr of the entity of
// Kind with key Key. DependsOn is the sub-question whose answer is Key
// ("" for one that names its entity in the question). Answer is the
// golden answer as FTRL writes it: the value's pieces joined by ", ".
type SubQuestion struct {
	ID        string   `json:"id"`
	Text      string   `json:"text"`
	Kind      string   `json:"kind"`
	Attr      string   `json:"attr"`
	Key       []string `json:"key"`
	DependsOn string   `json:"depends_on,omitempty"`
	Answer    string   `json:"answer"`
	// Branch numbers the independent branch (chain) the sub-question is in.
	Branch int `json:"branch"`
}

// Scenario is stage (a)'s output: a question, its type, its
// sub-questions in dependency order (a sub-question comes after the one it
// depends on) and the final answer (the last answer of every branch,
// joined by ", ").
type Scenario struct {
	ID           string        `json:"id"`
	Domain       string        `json:"domain"`
	Type         ScenarioType  `json:"type"`
	Question     string        `json:"question"`
	SubQuestions []SubQuestion `json:"sub_questions"`
	Answer       string        `json:"answer"`
}

// chain is a path of attributes from a start kind, each but the last a
// link to the next kind.
type chain struct {
	start string
	attrs []string
}

// chains are the multi-hop paths the generator follows, per domain.
var chains = map[string][]chain{
	"retail": {
		{"user", []string{"latest_order", "first_item", "price"}},
		{"user", []string{"latest_order", "status"}},
		{"order", []string{"first_item", "product", "product_name"}},
		{"item", []string{"product", "variant_count"}},
		{"user", []string{"latest_order", "item_count"}},
	},
	"airline": {
		{"user", []string{"first_reservation", "first_flight", "flight_status"}},
		{"reservation", []string{"first_flight", "flight", "destination", "airport_city"}},
		{"reservation", []string{"origin", "airport_city"}},
		{"user", []string{"first_reservation", "cabin"}},
		{"flight_date", []string{"flight", "departure"}},
	},
}

// keyText is an entity key in question text.
func keyText(k *Kind, key []string) string {
	if len(key) == 2 && k.Name == "flight_date" {
		return fmt.Sprintf("flight %s on %s", key[0], key[1])
	}
	return k.Noun + " " + strings.Join(key, ", ")
}

// Decompose is stage (a): n scenarios of world w, the types cycling
// through ScenarioTypes, entities and chains drawn from rng. IDs are
// prefix + "-" + the index. It fails only when the world has no entities
// to ask about.
func Decompose(w *World, n int, prefix string, rng *rand.Rand) ([]Scenario, error) {
	for _, k := range w.Kinds {
		if len(w.Entities[k.Name]) == 0 {
			return nil, fmt.Errorf("ftrl: %s world has no %s entities", w.Domain, k.Name)
		}
	}
	out := make([]Scenario, 0, n)
	for i := 0; i < n; i++ {
		typ := ScenarioTypes[i%len(ScenarioTypes)]
		sc := Scenario{ID: fmt.Sprintf("%s-%04d", prefix, i), Domain: w.Domain, Type: typ}
		var branches [][]SubQuestion
		switch typ {
		case SingleHop:
			branches = append(branches, singleHop(w, "", rng))
		case ParallelSingleHop:
			// Half the time every branch asks about one kind, so function
			// integration has overlapping documents to merge.
			kind := ""
			if rng.IntN(2) == 0 {
				kind = pick(rng, w.Kinds).Name
			}
			for b, n := 0, 2+rng.IntN(2); b < n; b++ {
				branches = append(branches, singleHop(w, kind, rng))
			}
		case MultiHop:
			branches = append(branches, multiHop(w, rng))
		case ParallelMultiHop:
			branches = append(branches, multiHop(w, rng), multiHop(w, rng))
		}
		var questions, answers []string
		for b, br := range branches {
			for j := range br {
				br[j].Branch = b
				br[j].ID = fmt.Sprintf("%s-q%d", sc.ID, len(sc.SubQuestions))
				if j > 0 {
					br[j].DependsOn = sc.SubQuestions[len(sc.SubQuestions)-1].ID
				}
				sc.SubQuestions = append(sc.SubQuestions, br[j])
			}
			nq := nested(w, br)
			if b > 0 {
				nq = "w" + nq[1:] // "Also, what is ..."
			}
			questions = append(questions, nq)
			answers = append(answers, br[len(br)-1].Answer)
		}
		sc.Question = strings.Join(questions, " Also, ")
		if len(questions) > 1 {
			sc.Question += " Give the answers in this order, separated by commas."
		}
		sc.Answer = strings.Join(answers, ", ")
		out = append(out, sc)
	}
	return out, nil
}

// pick returns a random element.
func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

func ask(w *World, k *Kind, e *Entity, attr string) SubQuestion {
	a := k.Attr(attr)
	return SubQuestion{
		Text: fmt.Sprintf("What is %s of %s?", a.Phrase, keyText(k, e.Key)),
		Kind: k.Name, Attr: attr, Key: append([]string(nil), e.Key...),
		Answer: strings.Join(e.Values[attr], ", "),
	}
}

// singleHop asks one attribute of one entity (of kind, "" for any).
func singleHop(w *World, kind string, rng *rand.Rand) []SubQuestion {
	k := pick(rng, w.Kinds)
	if kind != "" {
		k = w.Kind(kind)
	}
	e := pick(rng, w.Entities[k.Name])
	return []SubQuestion{ask(w, k, e, pick(rng, k.Attrs).Name)}
}

func multiHop(w *World, rng *rand.Rand) []SubQuestion {
	c := pick(rng, chains[w.Domain])
	k := w.Kind(c.start)
	e := pick(rng, w.Entities[k.Name])
	var out []SubQuestion
	for i, attr := range c.attrs {
		q := ask(w, k, e, attr)
		if i > 0 {
			q.Text = fmt.Sprintf("What is %s of that %s?", k.Attr(attr).Phrase, k.Noun)
		}
		out = append(out, q)
		a := k.Attr(attr)
		if a.Link == "" {
			break
		}
		k = w.Kind(a.Link)
		e = w.Lookup(k.Name, e.Values[attr])
	}
	return out
}

// nested is one branch as one question: "What is the price of the first
// item of the latest order of user X?".
func nested(w *World, br []SubQuestion) string {
	first := w.Kind(br[0].Kind)
	s := keyText(first, br[0].Key)
	for _, q := range br {
		s = w.Kind(q.Kind).Attr(q.Attr).Phrase + " of " + s
	}
	return "What is " + s + "?"
}
