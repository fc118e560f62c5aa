package scan

import (
	"bytes"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
)

// TestPrintJSONStreamsTheSameBytes: the item-at-a-time printer writes what
// output.PrintObject writes for the whole document, byte for byte: with
// reports, with none, and with warnings and notes after the items.
func TestPrintJSONStreamsTheSameBytes(t *testing.T) {
	shop := runShop(t, shopSource(), bothEngines(t))
	if len(shop.Items) < 2 {
		t.Fatalf("only %d items", len(shop.Items))
	}
	empty := newResult(Options{Kinds: []Kind{kindConfigMaps}, Engine: "auto"}, fixedNow())
	noted := *shop
	noted.Warnings = []string{`a warning quoting "items": null`, "<b>&</b>"}
	noted.Notes = []model.Note{{Engine: "flux", Level: model.NoteInfo, Reason: "r", Message: "m"}}
	for name, res := range map[string]*Result{"shop": shop, "empty": empty, "warnings and notes": &noted} {
		var want, got bytes.Buffer
		if err := output.PrintObject(&want, output.JSON, res); err != nil {
			t.Fatal(err)
		}
		if err := Print(&got, OutputJSON, res, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Errorf("%s: streamed JSON differs:\n%s\nwant:\n%s", name, got.String(), want.String())
		}
	}
}
