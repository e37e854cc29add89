//go:build tools

// The real helm, pinned by this module's go.mod and go.sum: scripts/ensure-helm.sh builds
// helm.sh/helm/v3/cmd/helm from here once into a cache, for the chart's tests.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
