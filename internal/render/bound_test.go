package render

import (
	"context"
	"errors"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
)

// TestRenderingGiveUpIsSticky: once a bounded function has failed at its
// bound, or bound.Run has given the rendering up, every bounded function
// fails at its next call, so a rendering left running ends at its next
// loop instead of spending the rest of the budget.
func TestRenderingGiveUpIsSticky(t *testing.T) {
	calls := map[string]func(template.FuncMap) error{
		"until": func(f template.FuncMap) error { _, err := f["until"].(func(int) ([]int, error))(1); return err },
		"untilStep": func(f template.FuncMap) error {
			_, err := f["untilStep"].(func(int, int, int) ([]int, error))(0, 1, 1)
			return err
		},
		"seq": func(f template.FuncMap) error { _, err := f["seq"].(func(...int) (string, error))(1); return err },
		"repeat": func(f template.FuncMap) error {
			_, err := f["repeat"].(func(int, string) (string, error))(1, "x")
			return err
		},
		"indent": func(f template.FuncMap) error {
			_, err := f["indent"].(func(int, string) (string, error))(1, "x")
			return err
		},
		"nindent": func(f template.FuncMap) error {
			_, err := f["nindent"].(func(int, string) (string, error))(1, "x")
			return err
		},
	}
	for name, call := range calls {
		// Past the loop budget: until fails, then everything does.
		r := NewRendering()
		f := r.Funcs()
		if err := call(f); err != nil {
			t.Fatalf("%s within bounds: %v", name, err)
		}
		if _, err := f["until"].(func(int) ([]int, error))(MaxLoopItems + 1); !errors.Is(err, ErrBound) {
			t.Fatalf("until past the budget: %v", err)
		}
		if err := call(f); !errors.Is(err, ErrBound) {
			t.Errorf("%s after the loop budget was spent: %v, want it to fail", name, err)
		}
		// Given up by bound.Run's time bound.
		r = NewRendering()
		f = r.Funcs()
		release := make(chan struct{})
		_, err := bound.Run(context.Background(), "chart c", r.Limits(bound.Limits{Timeout: time.Millisecond}), func(context.Context) (int, error) {
			<-release
			return 0, nil
		})
		close(release)
		if !errors.Is(err, ErrBound) {
			t.Fatalf("bound.Run: %v", err)
		}
		if err := call(f); err == nil || !strings.Contains(err.Error(), "given up") {
			t.Errorf("%s after bound.Run gave the rendering up: %v, want it to fail", name, err)
		}
	}
}
