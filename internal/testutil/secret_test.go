package testutil

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestSecretMarkerDetectorCatchesLeaks guards the detector itself: each
// form a leak can take is found.
func TestSecretMarkerDetectorCatchesLeaks(t *testing.T) {
	forms := MarkerForms("pw-" + LeakMarker)
	for _, s := range []string{
		"x " + LeakMarker,
		base64.StdEncoding.EncodeToString([]byte("pw-" + LeakMarker)),
		base64.StdEncoding.EncodeToString([]byte("a longer prefix " + LeakMarker + " and suffix")),
		base64.StdEncoding.EncodeToString([]byte("ab" + LeakMarker)),
		base64.StdEncoding.EncodeToString([]byte("abc" + LeakMarker)),
	} {
		if len(Leaks(s, forms)) == 0 {
			t.Errorf("leak not detected in %q", s)
		}
	}
	if l := Leaks(string(bytes.Repeat([]byte("*** "), 10)), forms); len(l) > 0 {
		t.Errorf("masked text reported as a leak: %v", l)
	}
}
