//go:build tools

// Package tools pins the meshes' CNI plugins that scripts/ensure-istio-cni.sh builds.
package tools

import (
	_ "istio.io/istio/cni/cmd/istio-cni"
)
