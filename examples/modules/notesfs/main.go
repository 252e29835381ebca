package main

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/weft-dev/weft/sdk/tool"
)

// logPath is the file add_note appends to, one note a line.
const logPath = "notes/log.txt"

func init() {
	tool.Module(tool.Info{
		Name:        "notesfs",
		Version:     "1.0.0",
		Description: "Notes in a table and in a workspace file, and file tools: the weft workspace-files example module.",
		Owns:        []string{"notes"},
		FileWrites:  []string{"notes/**"},
		FileReads:   []string{"README.md"},
	})
	tool.Register("add_note", "Adds a note: a row, and a line of notes/log.txt. Returns its id.", addNote)
	tool.Register("list_notes", "Lists the notes, read from notes/log.txt.", listNotes, tool.ReadOnly())
	tool.Register("read_file", "Reads a workspace file.", readFile, tool.ReadOnly())
	tool.Register("write_file", "Writes a workspace file (under notes/).", writeFile)
	tool.Register("list_files", "Lists a workspace directory.", listFiles, tool.ReadOnly())
	tool.Register("remove_file", "Removes a workspace file or empty directory.", removeFile)
}

func main() {}

// fileErr turns a workspace-file error into a tool error the agent reads
// ("not_found: ...").
func fileErr(err error) error {
	var fe *tool.FileError
	if errors.As(err, &fe) {
		return tool.Errorf("%s: %s", fe.Kind, fe.Message)
	}
	return err
}

type addNoteIn struct {
	Text string `json:"text" description:"the note, one line of at most 200 characters"`
}

type addNoteOut struct {
	ID int64 `json:"id"`
}

func addNote(ctx context.Context, in addNoteIn) (addNoteOut, error) {
	text := strings.TrimSpace(in.Text)
	if text == "" || len(text) > 200 || strings.ContainsAny(text, "\r\n") {
		return addNoteOut{}, tool.Errorf("a note is one non-empty line of at most 200 characters")
	}
	if err := tool.Files().AppendFile(logPath, []byte(text+"\n")); err != nil {
		return addNoteOut{}, fileErr(err)
	}
	res, err := tool.DB().ExecContext(ctx, "INSERT INTO notes (text) VALUES (?)", text)
	if err != nil {
		return addNoteOut{}, err
	}
	id, err := res.LastInsertId()
	return addNoteOut{ID: id}, err
}

type note struct {
	Text string `json:"text"`
}

type listNotesOut struct {
	Notes []note `json:"notes"`
}

func listNotes(ctx context.Context, _ struct{}) (listNotesOut, error) {
	out := listNotesOut{Notes: []note{}}
	b, err := tool.Files().ReadFile(logPath)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fileErr(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" {
			out.Notes = append(out.Notes, note{Text: l})
		}
	}
	return out, nil
}

type pathIn struct {
	Path string `json:"path" description:"workspace path, e.g. notes/todo.txt"`
}

type contentOut struct {
	Content string `json:"content"`
}

func readFile(ctx context.Context, in pathIn) (contentOut, error) {
	b, err := tool.Files().ReadFile(in.Path)
	return contentOut{Content: string(b)}, fileErr(err)
}

type writeIn struct {
	Path    string `json:"path" description:"workspace path under notes/"`
	Content string `json:"content"`
}

func writeFile(ctx context.Context, in writeIn) (struct{}, error) {
	return struct{}{}, fileErr(tool.Files().WriteFile(in.Path, []byte(in.Content)))
}

type entry struct {
	Name string `json:"name"`
	Dir  bool   `json:"dir,omitempty"`
	Size int64  `json:"size"`
}

type listOut struct {
	Entries []entry `json:"entries"`
}

func listFiles(ctx context.Context, in pathIn) (listOut, error) {
	ents, err := tool.Files().ReadDir(in.Path)
	if err != nil {
		return listOut{}, fileErr(err)
	}
	out := listOut{Entries: []entry{}}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return listOut{}, err
		}
		out.Entries = append(out.Entries, entry{Name: e.Name(), Dir: e.IsDir(), Size: fi.Size()})
	}
	return out, nil
}

func removeFile(ctx context.Context, in pathIn) (struct{}, error) {
	return struct{}{}, fileErr(tool.Files().Remove(in.Path))
}
