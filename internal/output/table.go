package output

import (
	"strings"
	"unicode/utf8"
)

// Shrink says how a column's cells are shortened to fit a width.
type Shrink int

// How cells shrink.
const (
	// Keep never shortens the column.
	Keep Shrink = iota
	// CutEnd keeps the start of a cell and ends it with "…" (values).
	CutEnd
	// CutMiddle keeps both ends of a cell and puts "…" in the middle
	// (field paths and names: their ends say the most).
	CutMiddle
)

// Column describes how one column of a Table gives way when the table is
// wider than the terminal. FitTable shortens the CutEnd columns to their
// Min, then the CutMiddle ones to theirs; when that is not enough it drops
// columns by Drop (1 first, 0 never) and starts again from the full cells;
// with every droppable column gone, CutMiddle columns shorten below Min
// down to 8 runes. The columns a reader needs to answer the question go
// last.
type Column struct {
	Name   string
	Shrink Shrink
	// Min is the width a column shortens to before any column is dropped.
	Min int
	// Drop orders the dropped columns: 1 is dropped first; 0 is kept.
	Drop int
}

// lastResort is how narrow a CutMiddle column gets when dropping every
// droppable column was not enough.
const lastResort = 8

// FitTable shortens and drops columns of rows (rows[0] is the header)
// until no line of the table (cells joined by two spaces) is wider than
// width, in the order Column documents. Width <= 0 keeps everything
// (-o wide, or not a terminal: kubectl get does not cut either). It
// returns the columns kept, in order, and the rows reduced to them.
func FitTable(cols []Column, rows [][]string, width int) ([]Column, [][]string) {
	if width <= 0 || len(rows) == 0 {
		return cols, rows
	}
	maxRank := 0
	for _, c := range cols {
		maxRank = max(maxRank, c.Drop)
	}
	for rank := 0; ; rank++ {
		keep := make([]int, 0, len(cols))
		for i, c := range cols {
			if c.Drop == 0 || c.Drop > rank {
				keep = append(keep, i)
			}
		}
		kc, kr := project(cols, rows, keep)
		widths := colWidths(kr)
		over := -width - 2
		for _, w := range widths {
			over += w + 2
		}
		last := rank >= maxRank
		for _, pass := range []Shrink{CutEnd, CutMiddle, lastResortPass} {
			for i, c := range kc {
				if over <= 0 {
					break
				}
				floor := c.Min
				switch {
				case pass == lastResortPass && last && c.Shrink == CutMiddle:
					floor = lastResort
				case pass != c.Shrink:
					continue
				}
				head := utf8.RuneCountInString(kr[0][i])
				to := max(floor, head, widths[i]-over)
				if to >= widths[i] {
					continue
				}
				over -= widths[i] - to
				widths[i] = to
				for _, row := range kr[1:] {
					row[i] = Shorten(row[i], to, c.Shrink)
				}
			}
		}
		if over <= 0 || last {
			return kc, kr
		}
	}
}

// lastResortPass is FitTable's third pass, below the columns' Min.
const lastResortPass Shrink = -1

// project copies the columns keep of rows (the caller's rows are not
// changed, so FitTable can start again from the full cells).
func project(cols []Column, rows [][]string, keep []int) ([]Column, [][]string) {
	kc := make([]Column, len(keep))
	for j, i := range keep {
		kc[j] = cols[i]
	}
	kr := make([][]string, len(rows))
	for r, row := range rows {
		kr[r] = make([]string, len(keep))
		for j, i := range keep {
			kr[r][j] = row[i]
		}
	}
	return kc, kr
}

func colWidth(rows [][]string, i int) int {
	w := 0
	for _, row := range rows {
		w = max(w, utf8.RuneCountInString(row[i]))
	}
	return w
}

func colWidths(rows [][]string) []int {
	widths := make([]int, len(rows[0]))
	for i := range widths {
		widths[i] = colWidth(rows, i)
	}
	return widths
}

// Shorten cuts s to at most n runes the way shrink says, marking the cut
// with "…".
func Shorten(s string, n int, how Shrink) string {
	r := []rune(s)
	if len(r) <= n || how == Keep {
		return s
	}
	if n <= 1 {
		return "…"
	}
	if how == CutMiddle {
		// The end of a path names the field; keep a little more of it.
		tail := n / 2
		head := n - 1 - tail
		return string(r[:head]) + "…" + string(r[len(r)-tail:])
	}
	return string(r[:n-1]) + "…"
}

// FormatTable pads the cells of rows into aligned columns two spaces apart,
// trailing spaces trimmed; style, when not nil, colours a cell after
// padding (so escape codes never break the alignment).
func FormatTable(rows [][]string, style func(row, col int, padded string) string) []string {
	if len(rows) == 0 {
		return nil
	}
	widths := colWidths(rows)
	lines := make([]string, 0, len(rows))
	for ri, row := range rows {
		var b strings.Builder
		for i, c := range row {
			cell := c
			if i < len(row)-1 {
				cell += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2)
			}
			if style != nil {
				cell = style(ri, i, cell)
			}
			b.WriteString(cell)
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return lines
}
