#!/usr/bin/env bash
# The cluster's certificates: one CA; the API server's serving certificate (its Service IP, the
# node address and the names in-cluster clients use); client certificates for the admin (the
# components and kubectl) and the node; the service-account signing key pair.
set -euo pipefail
. "$(dirname "$0")/cluster-env.sh"
pki=$1/pki
cd "$pki"
openssl genrsa -out ca.key 2048 2>/dev/null
openssl req -x509 -new -key ca.key -days 30 -subj "/CN=interlock-cluster-ca" -out ca.crt 2>/dev/null
# cert NAME SUBJECT [SANS]
cert() {
  openssl genrsa -out "$1.key" 2048 2>/dev/null
  openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
  local ext
  ext=$(mktemp "${TMPDIR:-/tmp}/interlock-cluster-ext-XXXXXX")
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n' "$4" >"$ext"
  [ -n "$3" ] && printf 'subjectAltName=%s\n' "$3" >>"$ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile "$ext" -out "$1.crt" 2>/dev/null
  rm -f "$ext" "$1.csr"
}
cert apiserver "/CN=kube-apiserver" \
  "IP:$CLUSTER_KUBERNETES_SERVICE_IP,IP:$CLUSTER_NODE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
  serverAuth
cert kubelet-serving "/CN=$CLUSTER_NODE" "IP:$CLUSTER_NODE_IP,DNS:$CLUSTER_NODE" serverAuth
cert admin "/O=system:masters/CN=interlock-cluster-admin" "" clientAuth
cert node "/O=system:nodes/CN=system:node:$CLUSTER_NODE" "" clientAuth
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
chmod 600 ./*.key
