//go:build toyengine

package main

// A kubectl-drift with the toy engine of internal/enginetest registered next
// to Argo CD and Flux, for the e2e suite only (e2e/toy_engine_test.go):
//
//	go build -tags toyengine ./plugins/kubectl-drift
//
// This blank import is the engine's one registration line.
import _ "github.com/kubectl-drift/kubectl-drift/internal/enginetest"
