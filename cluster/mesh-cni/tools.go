//go:build tools

// Package tools pins the meshes' CNI plugins that scripts/cluster/ensure-mesh-cni.sh builds.
package tools

import (
	_ "istio.io/istio/cni/cmd/istio-cni"
)
