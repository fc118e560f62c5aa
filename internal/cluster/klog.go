package cluster

import (
	"flag"
	"io"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// QuietClientLogs stops client-go from logging to stderr. client-go logs
// transport failures through klog ("Couldn't get current server API group
// list", several times per command) before the error reaches us; the
// command then reports the same failure as one clear line, so the klog
// copies are noise that breaks the one-line-error promise. Call it once,
// from main, before building clients (klog's state is process-wide).
func QuietClientLogs() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	klog.SetLogger(logr.Discard())
}
