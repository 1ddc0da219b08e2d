// Package devenv runs a real Cluster API on 127.0.0.1 without containers: etcd, kube-apiserver
// and Cluster API's managers built from the Go module proxy, a PKI made for the run, and the
// processes stopped by their PIDs. `capi-ext dev` and the conformance suite's e2e harness both
// start their clusters with it.
package devenv

import "fmt"

// must panics on an error the caller cannot recover from (a full disk, a missing binary); the
// commands built on this package recover the panic, stop every process and report it.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// Step prints the name of a step of a run.
func Step(name string) { fmt.Printf("== %s\n", name) }
