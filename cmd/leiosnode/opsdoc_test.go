package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// operationsDoc is docs/operations.md, from this package's directory.
const operationsDoc = "../../docs/operations.md"

// docBlock is a fenced block of a Markdown file.
type docBlock struct {
	line int    // of its opening fence, from 1
	info string // its info string: sh, console, text, …
	text string // its lines, without the fences
}

// sectionBlocks are the fenced blocks of the section headed heading (a
// whole line, e.g. "## Peers") of the Markdown file, its subsections
// included, in order.
func sectionBlocks(t *testing.T, file, heading string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	level := heading[:strings.Index(heading, " ")+1] // "## "
	var blocks []docBlock
	var open *docBlock
	var lines []string
	in, found := false, false
	for i, line := range strings.Split(string(b), "\n") {
		fence := strings.TrimSpace(line)
		switch {
		case open != nil && fence == "```":
			open.text = strings.Join(lines, "\n") + "\n"
			blocks = append(blocks, *open)
			open = nil
		case open != nil:
			lines = append(lines, line)
		case line == heading:
			in, found = true, true
		case in && strings.HasPrefix(line, level):
			in = false
		case in && strings.HasPrefix(fence, "```"):
			open, lines = &docBlock{line: i + 1, info: strings.TrimSpace(strings.TrimPrefix(fence, "```"))}, nil
		}
	}
	if !found {
		t.Fatalf("%s has no line %q", file, heading)
	}
	if open != nil {
		t.Fatalf("%s:%d: a block that is never closed", file, open.line)
	}
	return blocks
}

// TestDocTables: every table of the repository's Markdown is whole — each
// row follows the header or another row, with the header's number of
// cells — so no row renders as text after a paragraph that cut the table.
func TestDocTables(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs: %v, %v", docs, err)
	}
	for _, file := range append(docs, "../../README.md", "../../ARCHITECTURE.md", "../../configs/README.md") {
		checkTables(t, file)
	}
}

func checkTables(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	inFence, cells := false, 0 // cells: of the table the line before belongs to, else 0
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "|") {
			cells = 0
			continue
		}
		n := tableCells(line)
		switch {
		case cells > 0 && n != cells:
			t.Errorf("%s:%d: %d cells in a table of %d: %s", filepath.Base(file), i+1, n, cells, line)
		case cells == 0 && (i+1 == len(lines) || !isDelimiterRow(lines[i+1])):
			t.Errorf("%s:%d: a table row that follows no table (it renders as text): %s", filepath.Base(file), i+1, line)
		case cells == 0 && tableCells(lines[i+1]) != n:
			t.Errorf("%s:%d: a header of %d cells over a delimiter row of %d", filepath.Base(file), i+1, n, tableCells(lines[i+1]))
		}
		cells = n
	}
}

// tableCells counts the cells of a table row: GitHub splits a row at every
// pipe not escaped, code spans included.
func tableCells(row string) int {
	row = strings.TrimSpace(strings.ReplaceAll(row, `\|`, ""))
	return strings.Count(strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|"), "|") + 1
}

func isDelimiterRow(line string) bool {
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "|") && strings.Trim(line, "|-: ") == ""
}

// TestDevnetFlagsInTheTable: the flag table of docs/operations.md's "The
// devnet" names every flag of the devnet command, so a flag added to the
// command is never left out of its reference.
func TestDevnetFlagsInTheTable(t *testing.T) {
	b, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(b), "\n## The devnet\n")
	if !found {
		t.Fatalf("%s has no section \"## The devnet\"", operationsDoc)
	}
	section, _, _ = strings.Cut(section, "\n#") // up to its first subsection
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `--") {
			rows = append(rows, line)
		}
	}
	// Each line of the usage starts with a flag: "  -n, --name type  what".
	flags := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([\w-]+)`).FindAllStringSubmatch(newDevnetCommand().Flags().FlagUsages(), -1)
	if len(flags) < 10 {
		t.Fatalf("read %d flags of the devnet command from its usage", len(flags))
	}
	for _, flag := range flags {
		name := flag[1]
		if !slices.ContainsFunc(rows, func(row string) bool {
			cell, _, _ := strings.Cut(strings.TrimPrefix(row, "|"), "|") // the row's flag cell
			return regexp.MustCompile("`--" + regexp.QuoteMeta(name) + "[ `]").MatchString(cell)
		}) {
			t.Errorf("%s, \"The devnet\": no row of the table names --%s", operationsDoc, name)
		}
	}
}
