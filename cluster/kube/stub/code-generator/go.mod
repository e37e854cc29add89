module k8s.io/code-generator

go 1.24.0
