// Command goext is a Runtime Extension built with Cluster API's own server library
// (sigs.k8s.io/cluster-api/exp/runtime/server), serving the benchmark handlers.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	runtimecatalog "sigs.k8s.io/cluster-api/api/runtime/catalog"
	hooks "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	"sigs.k8s.io/cluster-api/exp/runtime/server"

	"capi-ext.local/conformance/bench/handlers"
)

func main() {
	port := flag.Int("webhook-port", 9443, "port")
	certDir := flag.String("webhook-cert-dir", "", "directory with tls.crt and tls.key")
	flag.Parse()
	cat := runtimecatalog.New()
	if err := hooks.AddToCatalog(cat); err != nil {
		panic(err)
	}
	srv, err := server.New(server.Options{Catalog: cat, Host: "127.0.0.1", Port: *port, CertDir: *certDir})
	if err != nil {
		panic(err)
	}
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(srv.AddExtensionHandler(server.ExtensionHandler{Hook: hooks.BeforeClusterCreate, Name: "before-cluster-create", HandlerFunc: handlers.BeforeClusterCreate}))
	must(srv.AddExtensionHandler(server.ExtensionHandler{Hook: hooks.GeneratePatches, Name: "generate-patches", HandlerFunc: handlers.GeneratePatches}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		panic(err)
	}
}
