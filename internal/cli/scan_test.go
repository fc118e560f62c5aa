package cli

import (
	"strings"
	"testing"
	"time"
)

func TestScanOptionsValidate(t *testing.T) {
	g := &GlobalOptions{Frontend: KubectlFrontend, Engine: "auto"}
	tests := []struct {
		name    string
		mutate  func(o *ScanOptions)
		wantErr string
	}{
		{"defaults", func(*ScanOptions) {}, ""},
		{"json", func(o *ScanOptions) { o.Output = "json" }, ""},
		{"prometheus", func(o *ScanOptions) { o.Output = "prometheus" }, ""},
		{"watch json", func(o *ScanOptions) { o.Watch, o.Output, o.WatchTimeout = true, "json", time.Minute }, ""},
		{"unknown output", func(o *ScanOptions) { o.Output = "xml" }, `invalid -o "xml"`},
		{"watch prometheus", func(o *ScanOptions) { o.Watch, o.Output = true, "prometheus" }, "-o prometheus"},
		{"timeout without watch", func(o *ScanOptions) { o.WatchTimeout = time.Second }, "--watch-timeout needs --watch"},
		{"interval without watch", func(o *ScanOptions) { o.ReconcileInterval = time.Minute }, "--reconcile-interval needs --watch"},
		{"negative timeout", func(o *ScanOptions) { o.Watch, o.WatchTimeout = true, -time.Second }, "negative"},
		{"zero qps", func(o *ScanOptions) { o.QPS = 0 }, "--qps"},
		{"zero burst", func(o *ScanOptions) { o.Burst = 0 }, "--burst"},
		{"zero chunk", func(o *ScanOptions) { o.ChunkSize = 0 }, "--chunk-size"},
		{"zero concurrency", func(o *ScanOptions) { o.Concurrency = 0 }, "--concurrency"},
		{"bad engine", func(o *ScanOptions) { o.Engine = "jenkins" }, "invalid --engine"},
		{"text means table", func(o *ScanOptions) { o.Output = "text" }, ""},
		{"wide is not a scan format", func(o *ScanOptions) { o.Output = "wide" }, `invalid -o "wide"`},
		{"bad selector", func(o *ScanOptions) { o.LabelSelector = "app=(" }, `invalid --selector "app=("`},
		{"good selector", func(o *ScanOptions) { o.LabelSelector = "app in (a,b),!tier" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gg := *g
			o := NewScanOptions(&gg)
			tt.mutate(o)
			err := o.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestScanBadFlagsExitTwoWithoutCluster(t *testing.T) {
	for _, args := range [][]string{
		{"scan", "-o", "xml"},
		{"scan", "--chunk-size", "-1"},
		{"scan", "--watch", "-o", "prometheus"},
		{"scan", "extra-arg"},
		{"scan", "--no-such-flag"},
	} {
		_, stderr, code, _ := run(t, KubectlFrontend, args...)
		if code != ExitFailure {
			t.Errorf("%v: exit %d, want %d", args, code, ExitFailure)
		}
		if strings.Count(stderr, "error: ") != 1 {
			t.Errorf("%v: want one error line, got %q", args, stderr)
		}
	}
}

func TestScanHelpDocumentsExitCodesAndCost(t *testing.T) {
	stdout, _, code, _ := run(t, HostFrontend("flux"), "scan", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Exit codes: 0 no drift, 1 drift, 2 error", "one paginated LIST per kind", "flux drift scan", "--kinds", "--watch", "--qps", "--chunk-size"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if strings.Contains(stdout, "--stats") {
		t.Errorf("hidden --stats shown in help")
	}
}
