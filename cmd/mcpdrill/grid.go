package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// Tables of findings, probes, tools and servers are fitted to the width of
// the output:
//
//   - the width is the terminal's when stdout is one (its window size),
//     else $COLUMNS when that is a positive number, else defaultWidth;
//   - from compactWidth columns on, a table keeps its columns and its long
//     columns (messages, expectations, reasons) wrap inside themselves, at
//     word boundaries, so that the table fits;
//   - below compactWidth, each row is a record: its verdict line first (the
//     short columns: severity, rule, tool; probe, verdict, code), then each
//     long column on lines of its own, indented and wrapped.
const (
	defaultWidth = 200
	compactWidth = 120
)

// outputWidth is the width to fit tables to on w (see above).
func outputWidth(w io.Writer) int {
	if f, ok := outputFile(w); ok && isTerminal(f) {
		if n, ok := terminalWidth(f); ok {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}

// outputFile is the file w writes to, looking through a maskedWriter.
func outputFile(w io.Writer) (*os.File, bool) {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return f, ok
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// gridColumn is one column of a grid.
type gridColumn struct {
	name string
	// long: the column wraps inside the table and, in the compact layout,
	// goes below the verdict line.
	long bool
	// label: in the compact layout the value follows the column's name
	// ("conformant: no", "expected: …"); an unlabelled long column (a
	// message) stands alone.
	label bool
	// painted: the values are mcpdrill's own words, coloured by a painter;
	// every other cell may hold what a server said and is passed through
	// safetext.Text when added.
	painted bool
}

// grid is a table fitted to a width when rendered.
type grid struct {
	cols []gridColumn
	rows [][]string
}

func newGrid(cols ...gridColumn) *grid { return &grid{cols: cols} }

// add appends a row (one cell per column), each cell of a column that is
// not painted made one safe line: line feeds and tabs become spaces (as
// wrapping makes them), then safetext.Text.
func (g *grid) add(cells ...string) {
	row := make([]string, len(cells))
	for i, s := range cells {
		if i >= len(g.cols) || !g.cols[i].painted {
			s = safetext.Text(cellSpaces.Replace(s))
		}
		row[i] = s
	}
	g.rows = append(g.rows, row)
}

// cellSpaces turns the white space that breaks a cell's line into spaces.
var cellSpaces = strings.NewReplacer("\n", " ", "\t", " ")

// render writes the grid fitted to width: a table, or records below
// compactWidth.
func (g *grid) render(w io.Writer, width int) error {
	if width < compactWidth {
		g.renderCompact(w, width)
		return nil
	}
	widths := g.fit(width)
	header := make([]string, len(g.cols))
	for i, c := range g.cols {
		header[i] = c.name
	}
	t := newTable(w, header...)
	for _, row := range g.rows {
		cells := make([]any, len(row))
		for i, s := range row {
			if g.cols[i].long && widths[i] > 0 {
				s = strings.Join(wrapText(s, widths[i]), "\n")
			}
			cells[i] = s
		}
		if err := t.Append(cells...); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	if err := t.Render(); err != nil {
		return exitErr(exitInternal, err)
	}
	return nil
}

// newTable returns a table writing to w with the given header; only a
// grid renders one, so that every table is fitted to its width.
func newTable(w io.Writer, header ...string) *tablewriter.Table {
	t := tablewriter.NewWriter(w)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	return t
}

// minLong is the narrowest a long column is made.
const minLong = 16

// fit returns the width of each long column in a table that fits width
// (0: as wide as its content), sharing what the short columns leave among
// the long ones, the narrower content first. A table whose short columns
// alone are too wide overflows.
func (g *grid) fit(width int) []int {
	n := len(g.cols)
	natural := make([]int, n)
	for i, c := range g.cols {
		natural[i] = twwidth.Width(c.name)
		for _, row := range g.rows {
			for _, line := range strings.Split(row[i], "\n") {
				natural[i] = max(natural[i], twwidth.Width(line))
			}
		}
	}
	// Each column has a space either side and a rule on its left; the
	// table has one more rule on the right.
	avail := width - 3*n - 1
	var long []int
	for i, c := range g.cols {
		if c.long {
			long = append(long, i)
		}
		avail -= natural[i]
	}
	out := make([]int, n)
	if avail >= 0 {
		return out
	}
	for _, i := range long {
		avail += natural[i]
	}
	// Narrowest first: a column that needs less than an equal share keeps
	// its width and leaves the rest to the others.
	for left := len(long); left > 0; left-- {
		pick := 0
		for k := 1; k < len(long); k++ {
			if natural[long[k]] < natural[long[pick]] {
				pick = k
			}
		}
		i := long[pick]
		long = append(long[:pick], long[pick+1:]...)
		share := max(avail/left, minLong, twwidth.Width(g.cols[i].name))
		out[i] = min(natural[i], share)
		avail -= out[i]
	}
	return out
}

// renderCompact writes each row as a verdict line (the short cells) and
// then its long cells, indented, all wrapped to width.
func (g *grid) renderCompact(w io.Writer, width int) {
	var b strings.Builder
	labels := 0
	for _, c := range g.cols {
		if c.long {
			labels++
		}
	}
	for _, row := range g.rows {
		var lead []string
		for i, c := range g.cols {
			if c.long || row[i] == "" {
				continue
			}
			lead = append(lead, labelled(c, row[i], c.label))
		}
		writeWrapped(&b, strings.Join(lead, "  "), "", "    ", width)
		for i, c := range g.cols {
			if !c.long || row[i] == "" {
				continue
			}
			writeWrapped(&b, labelled(c, row[i], c.label || labels > 1), "  ", "    ", width)
		}
	}
	io.WriteString(w, b.String())
}

func labelled(c gridColumn, v string, label bool) string {
	if label {
		return c.name + ": " + v
	}
	return v
}

// writeWrapped writes s wrapped to width, its first line after indent and
// the others after more.
func writeWrapped(b *strings.Builder, s, indent, more string, width int) {
	for i, line := range wrapText(s, max(width-len(more), minLong)) {
		if i == 0 {
			b.WriteString(indent)
		} else {
			b.WriteString(more)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

// wrapText breaks s into lines no wider than width (display columns), at
// white space; a word wider than width is cut. Runs of white space become
// one space. Text with terminal escapes (colour) is left on one line. A
// break can bring a "::" from the middle of the text to the start of a
// line: each line goes through safetext.LineStart.
func wrapText(s string, width int) []string {
	if strings.ContainsRune(s, '\x1b') || twwidth.Width(s) <= width && !strings.ContainsAny(s, "\n\t") {
		return []string{safetext.LineStart(s)}
	}
	lines := breakText(s, width)
	for i, l := range lines {
		lines[i] = safetext.LineStart(l)
	}
	return lines
}

// breakText is wrapText's breaking of a text that does not fit.
func breakText(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	n := 0
	flush := func() {
		lines = append(lines, cur.String())
		cur.Reset()
		n = 0
	}
	for _, word := range strings.Fields(s) {
		ww := twwidth.Width(word)
		if n > 0 && n+1+ww <= width {
			cur.WriteByte(' ')
			cur.WriteString(word)
			n += 1 + ww
			continue
		}
		if n > 0 {
			flush()
		}
		for ww > width {
			// Cut the word at the last rune that fits.
			cut, cw := 0, 0
			for j, r := range word {
				rw := twwidth.Width(string(r))
				if cw+rw > width && cut > 0 {
					break
				}
				cut, cw = j+utf8.RuneLen(r), cw+rw
			}
			lines = append(lines, word[:cut])
			word = word[cut:]
			ww -= cw
		}
		cur.WriteString(word)
		n = ww
	}
	if n > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// writeItems writes items joined by " · ", as many to a line as fit width:
// the first line after indent, the others after more.
func writeItems(b *strings.Builder, width int, indent, more string, items ...string) {
	line := indent
	for i, it := range items {
		switch {
		case i == 0:
			line += it
		case twwidth.Width(line)+3+twwidth.Width(it) <= width:
			line += " · " + it
		default:
			b.WriteString(safetext.LineStart(line) + "\n")
			line = more + it
		}
	}
	b.WriteString(safetext.LineStart(line) + "\n")
}
