package argocd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFetchManagedResources(t *testing.T) {
	var gotPath, gotQuery, gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery, gotAuth = r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, `{"error":"invalid session"}`, http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"items":[{"group":"apps","kind":"Deployment","namespace":"shop","name":"web","modified":true}]}`))
	}))
	defer srv.Close()

	o := ArgoDiffOptions{Server: srv.URL, Token: "t0ken"}
	mr, err := o.fetch(context.Background(), "team-a", "shop", &ResourceDiff{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if gotPath != "/api/v1/applications/shop/managed-resources" || !strings.Contains(gotQuery, "appNamespace=team-a") ||
		!strings.Contains(gotQuery, "kind=Deployment") || gotAuth != "Bearer t0ken" {
		t.Fatalf("request %s?%s auth %q", gotPath, gotQuery, gotAuth)
	}
	if it := mr.Find("apps", "Deployment", "shop", "web"); it == nil || !it.Modified {
		t.Fatalf("items = %+v", mr.Items)
	}

	o.Token = "wrong"
	_, err = o.fetch(context.Background(), "", "shop", nil)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("err = %v (must name the status, never echo the token)", err)
	}
}
