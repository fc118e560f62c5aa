// Package output prints the drift model: a table a person scans in a
// terminal (-o text, the default), or the model itself as JSON or YAML
// (-o json|yaml, the stable machine interface documented in README.md).
//
// Printers never print a Secret's values, whatever the report holds: they
// mask them again on the way out (see MaskSecrets).
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// Format is an -o value.
type Format string

// Output formats.
const (
	Text Format = "text"
	JSON Format = "json"
	YAML Format = "yaml"
)

// Formats lists the formats every printer here supports, for flag help
// and shell completion. A function, so no caller can change the list.
func Formats() []string { return []string{string(Text), string(JSON), string(YAML)} }

// ParseFormat validates an -o value ("" means text; "wide" is text with
// nothing cut, see Options.Wide).
func ParseFormat(s string) (Format, error) {
	switch s {
	case "", "text", "table", "wide":
		return Text, nil
	case "json":
		return JSON, nil
	case "yaml":
		return YAML, nil
	}
	return "", fmt.Errorf("unknown output format %q: must be one of %s", s, strings.Join(Formats(), ", "))
}

// Options control how a document is printed.
type Options struct {
	Format Format
	// Color enables ANSI colours in text output; see ColorEnabled.
	Color bool
	// Now is the clock relative times ("5m ago") are computed against;
	// nil means time.Now. Tests inject a fixed clock.
	Now func() time.Time
	// Width fits text output to this many columns: lines wrap, paths
	// shorten from the middle, table columns give way (see Column); 0
	// fits nothing (not a terminal, as kubectl get). See TextWidth.
	Width int
	// Wide is -o wide: nothing fitted or cut, times with their timestamp.
	Wide bool
	// Why prints every reason whole (--why); the default view cuts a
	// reason to three lines.
	Why bool
}

// TextWidth is the width text output is fitted to: none for -o wide; the
// terminal's when out is one; else $COLUMNS when set (tests, and a
// user who wants a width in a pipe); else none: like kubectl get, which
// cuts nothing when its output is not a terminal, so a pipe or a file
// gets every byte.
func TextWidth(output string, out io.Writer, getenv func(string) string) int {
	if output == "wide" {
		return 0
	}
	if f, ok := Terminal(out); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// ColorEnabled says whether text output to w may use colour: only when w
// is a terminal, and never when NO_COLOR is set to anything
// (https://no-color.org) or TERM is "dumb".
func ColorEnabled(w io.Writer, getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if _, set := lookup(getenv, "NO_COLOR"); set {
		return false
	}
	if getenv("TERM") == "dumb" {
		return false
	}
	f, ok := Terminal(w)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Terminal finds the file under w, looking through writers that wrap
// another (the commands' stdout is a redact.Writer), for terminal checks.
func Terminal(w io.Writer) (*os.File, bool) {
	for i := 0; i < 8; i++ {
		if f, ok := w.(*os.File); ok {
			return f, true
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return nil, false
		}
		w = u.Unwrap()
	}
	return nil, false
}

// lookup treats an empty value as unset, as no-color.org asks
// ("when present and not an empty string").
func lookup(getenv func(string) string, key string) (string, bool) {
	v := getenv(key)
	return v, v != ""
}

// PrintReport prints one resource's drift report in the chosen format.
func PrintReport(w io.Writer, r *model.Report, opts Options) error {
	MaskSecrets(r)
	return printAs(w, r, opts, func() error { return printText(w, r, opts) })
}

// PrintList prints a list of reports. Text output prints each report in
// turn; JSON and YAML print the List document.
func PrintList(w io.Writer, l *model.List, opts Options) error {
	for _, r := range l.Items {
		MaskSecrets(r)
	}
	return printAs(w, l, opts, func() error {
		if len(l.Items) == 0 {
			_, err := fmt.Fprintln(w, "No drifted resources found.")
			return err
		}
		for i, r := range l.Items {
			if i > 0 {
				if _, err := fmt.Fprintln(w); err != nil {
					return err
				}
			}
			if err := printText(w, r, opts); err != nil {
				return err
			}
		}
		return nil
	})
}

// printAs prints the document v as JSON or YAML, or runs text for the text
// format (the default).
func printAs(w io.Writer, v any, opts Options, text func() error) error {
	switch opts.Format {
	case JSON:
		return printJSON(w, v)
	case YAML:
		return printYAML(w, v)
	case Text, "":
		return text()
	}
	return fmt.Errorf("unknown output format %q", opts.Format)
}

// NewList wraps reports in the List document.
func NewList(items []*model.Report) *model.List {
	if items == nil {
		items = []*model.Report{}
	}
	return &model.List{APIVersion: model.APIVersion, Kind: "DriftReportList", Items: items}
}

// PrintObject is the one JSON/YAML printer of every command's -o json|yaml:
// JSON indented by two spaces and ended by a newline, YAML as
// sigs.k8s.io/yaml writes it (kubectl's). Any other format is an error:
// callers print their human view themselves.
func PrintObject(w io.Writer, format Format, v any) error {
	switch format {
	case JSON:
		return printJSON(w, v)
	case YAML:
		return printYAML(w, v)
	}
	return fmt.Errorf("unknown structured output format %q", format)
}

// PrintStreamItem prints one item of a stream (watch events, rendered
// objects): a JSON line, or a YAML document opened by "---".
func PrintStreamItem(w io.Writer, format Format, v any) error {
	switch format {
	case JSON:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case YAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(append([]byte("---\n"), b...))
		return err
	}
	return fmt.Errorf("unknown structured output format %q", format)
}

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func printYAML(w io.Writer, v any) error {
	return writeYAML(w, v)
}

// Masked replaces every Secret value in output.
const Masked = redact.Mask

// MaskSecrets masks a Secret's values in a report (redact.Drifts). The
// commands mask earlier, when they build the report; this is the last
// structural line of defence in the printers, so no printer can leak a
// value whatever path produced the report.
func MaskSecrets(r *model.Report) {
	if r != nil {
		redact.Drifts(r.Resource, r.Drifts)
	}
}
