package audit

import (
	"strings"
	"testing"
)

// TestEveryCheckIsExplained: each check has a reason and an example
// (audit --explain CODE, issue 33), found by ID or by name, and the text
// holds its summary, why, an example naming the check, and its hint.
func TestEveryCheckIsExplained(t *testing.T) {
	for _, c := range Checks() {
		e, ok := explanationOf(c.ID)
		if !ok || len(e.why) < 80 || e.example == "" {
			t.Errorf("%s: no explanation (%+v)", c.ID, e)
			continue
		}
		for _, key := range []string{string(c.ID), strings.ToLower(string(c.ID)), c.Name} {
			text, err := Explain(key)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			for _, want := range []string{string(c.ID) + " " + c.Name + " (" + string(c.Severity), c.Summary, "Why:\n  ", "Example:\n", "Fix:\n  " + c.Hint} {
				if !strings.Contains(text, want) {
					t.Errorf("%s: explanation lacks %q:\n%s", key, want, text)
				}
			}
		}
		if c.ID != "DRIFT009" && c.ID != "DRIFT013" && !strings.Contains(e.example, string(c.ID)) {
			t.Errorf("%s: the example does not show where the check fires:\n%s", c.ID, e.example)
		}
	}
	if _, err := Explain("DRIFT099"); err == nil || !strings.Contains(err.Error(), "DRIFT001, DRIFT002") {
		t.Errorf("unknown check: %v", err)
	}
}
