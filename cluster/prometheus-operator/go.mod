// The Prometheus Operator's CRDs for the cluster tests (e2e/cluster/monitoring.test.ts): the
// module is only downloaded (its example/prometheus-operator-crd/ files), never built.
module interlock.local/prometheus-operator

go 1.26.0

require github.com/prometheus-operator/prometheus-operator v0.85.0
