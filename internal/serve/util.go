package serve

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var getOptions = metav1.GetOptions{}

func listOptions(selector string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: selector}
}

// plural is the conventional resource name of a kind (lower-case plural),
// the fallback for kinds the cache has no mapping for.
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}
