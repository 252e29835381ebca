package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"github.com/weft-dev/weft/sdk/tool"
)

func init() {
	tool.Module(tool.Info{
		Name:        "hello",
		Version:     "1.0.0",
		Description: "Notes, a clock and dice: the weft example module.",
		Owns:        []string{"notes"},
	})
	tool.Register("add_note", "Adds a note and returns its id.", addNote)
	tool.Register("list_notes", "Lists all notes in id order.", listNotes, tool.ReadOnly())
	tool.Register("now", "Returns the session's current time (UTC).", now, tool.ReadOnly())
	tool.Register("random", "Returns a random 64-bit unsigned integer from the session's random stream.", random, tool.ReadOnly())
	tool.Export(exportNotes)
}

func main() {}

// exportNotes is the export hook: the state as collections of records keyed
// by id, {"notes": {"1": {"id": 1, "text": "..."}}}, the shape
// `weft module test` compares final states in.
func exportNotes(ctx context.Context) (any, error) {
	list, err := listNotes(ctx, struct{}{})
	if err != nil {
		return nil, err
	}
	notes := map[string]note{}
	for _, n := range list.Notes {
		notes[strconv.FormatInt(n.ID, 10)] = n
	}
	return map[string]any{"notes": notes}, nil
}

type addNoteIn struct {
	Text string `json:"text" description:"the note, at most 200 characters"`
}

type addNoteOut struct {
	ID int64 `json:"id"`
}

func addNote(ctx context.Context, in addNoteIn) (addNoteOut, error) {
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return addNoteOut{}, tool.Errorf("the note is empty")
	}
	if len([]rune(text)) > 200 {
		return addNoteOut{}, tool.Errorf("the note has %d characters, at most 200 are allowed", len([]rune(text)))
	}
	res, err := tool.DB().ExecContext(ctx, "INSERT INTO notes (text) VALUES (?)", text)
	if err != nil {
		return addNoteOut{}, err
	}
	id, err := res.LastInsertId()
	return addNoteOut{ID: id}, err
}

type note struct {
	ID   int64  `json:"id"`
	Text string `json:"text"`
}

type listNotesOut struct {
	Notes []note `json:"notes"`
}

func listNotes(ctx context.Context, _ struct{}) (listNotesOut, error) {
	rows, err := tool.DB().QueryContext(ctx, "SELECT id, text FROM notes ORDER BY id")
	if err != nil {
		return listNotesOut{}, err
	}
	defer rows.Close()
	out := listNotesOut{Notes: []note{}}
	for rows.Next() {
		var n note
		var text *string
		if err := rows.Scan(&n.ID, &text); err != nil {
			return listNotesOut{}, err
		}
		if text != nil {
			n.Text = *text
		}
		out.Notes = append(out.Notes, n)
	}
	return out, rows.Err()
}

type nowOut struct {
	Now time.Time `json:"now" description:"RFC 3339, UTC"`
}

func now(context.Context, struct{}) (nowOut, error) {
	return nowOut{Now: time.Now().UTC()}, nil
}

type randomOut struct {
	Value uint64 `json:"value"`
}

func random(context.Context, struct{}) (randomOut, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return randomOut{}, err
	}
	return randomOut{Value: binary.LittleEndian.Uint64(b[:])}, nil
}
