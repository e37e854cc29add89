//go:build tools

// Package tools pins Multus's binaries that scripts/ensure-multus.sh builds: the thin plugin, and
// the thick plugin's shim and daemon (k8snetworkplumbingwg/multus-cni v4.2.2, cmd/).
package tools

import (
	_ "gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus"
	_ "gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus-daemon"
	_ "gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus-shim"
)
