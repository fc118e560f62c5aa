package scan

import (
	"context"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
)

// StreamSource lists kinds through a cluster.Streamer and watches them
// through the cluster.Client. It implements WatchSource.
type StreamSource struct {
	Client   *cluster.Client
	Streamer *cluster.Streamer
	// ChunkSize is the LIST page size (limit).
	ChunkSize int64
	// Consistent asks for a quorum read from etcd (resourceVersion unset)
	// instead of the watch cache (resourceVersion=0).
	Consistent bool
}

// List implements Source. Built-in kinds come as protobuf (see
// cluster.StreamOptions.Protobuf), the others as JSON.
func (s *StreamSource) List(ctx context.Context, kind Kind, namespace, labelSelector string, fn func(raw []byte) error) (string, error) {
	return s.list(ctx, kind, namespace, labelSelector, true, fn)
}

// ListJSON implements JSONLister.
func (s *StreamSource) ListJSON(ctx context.Context, kind Kind, namespace, labelSelector string, fn func(raw []byte) error) (string, error) {
	return s.list(ctx, kind, namespace, labelSelector, false, fn)
}

func (s *StreamSource) list(ctx context.Context, kind Kind, namespace, labelSelector string, proto bool, fn func(raw []byte) error) (string, error) {
	return s.Streamer.List(ctx, kind.Mapping(), namespace, cluster.StreamOptions{
		LabelSelector:       labelSelector,
		Limit:               s.ChunkSize,
		ResourceVersionZero: !s.Consistent,
		Protobuf:            proto,
	}, fn)
}

// Watch implements WatchSource.
func (s *StreamSource) Watch(ctx context.Context, kind Kind, namespace, labelSelector, resourceVersion string) (watch.Interface, error) {
	return s.Client.Watch(ctx, kind.Mapping(), namespace, labelSelector, resourceVersion)
}
