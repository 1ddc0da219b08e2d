package main

import "capi-ext.local/devenv"

// The cluster of a run (processes, PKI, API server, managers) is started by package devenv,
// which `capi-ext dev` shares; these names keep the scenarios' spelling.
type (
	Process   = devenv.Process
	Processes = devenv.Processes
	PKI       = devenv.PKI
	Kube      = devenv.Kube
)

var (
	FreePort            = devenv.FreePort
	HTTPClient          = devenv.HTTPClient
	WaitHTTP            = devenv.WaitHTTP
	NewPKI              = devenv.NewPKI
	NewKube             = devenv.NewKube
	WriteKubeconfig     = devenv.WriteKubeconfig
	WriteExecKubeconfig = devenv.WriteExecKubeconfig
	Docs                = devenv.Docs
	Condition           = devenv.Condition
	Eventually          = devenv.Eventually
	FakeCRD             = devenv.FakeCRD
	step                = devenv.Step
)
