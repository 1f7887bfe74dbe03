#!/usr/bin/env bash
# Build the pinned control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler) from the Go module proxy into controlplane/bin. Does nothing when the
# binaries there already report the versions go.mod pins.
set -euo pipefail
cd "$(dirname "$0")"
# --if-go (make test): without Go >= 1.26, say so in one line and build nothing.
if [ "${1:-}" = "--if-go" ]; then
  have=$(go env GOVERSION 2>/dev/null || true)
  minor=${have#go1.}; minor=${minor%%.*}
  if [ -z "$have" ] || ! [ "$minor" -ge 26 ] 2>/dev/null; then
    echo "cluster tier skipped: Go >= 1.26 is not on PATH (found: ${have:-none}); it needs the real control plane built from controlplane/go.mod"
    exit 0
  fi
fi
k8s=$(awk '$1 == "k8s.io/kubernetes" {print $2}' go.mod)
etcd=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' go.mod)

reports() {  # reports BINARY TEXT: the binary exists and its --version mentions TEXT
  [ -x "bin/$1" ] && "bin/$1" --version 2>/dev/null | grep -qF -- "$2"
}
if reports etcd "${etcd#v}" && reports kube-apiserver "$k8s" \
  && reports kube-controller-manager "$k8s" && reports kube-scheduler "$k8s"; then
  echo "controlplane: kubernetes $k8s and etcd $etcd already built in controlplane/bin"
  exit 0
fi

start=$(date +%s)
version=k8s.io/component-base/version
minor=${k8s#v1.}; minor=${minor%%.*}
# Stamp the version as Kubernetes' own build does (hack/lib/version.sh); -s -w: no
# symbol tables, half the disk.
ldflags="-s -w -X $version.gitVersion=$k8s -X $version.gitMajor=1 -X $version.gitMinor=$minor"
ldflags="$ldflags -X $version.gitTreeState=clean"
mkdir -p bin
echo "controlplane: building kubernetes $k8s and etcd $etcd (first build: about 7 minutes on 2 cores)"
go build -trimpath -ldflags "$ldflags" -o bin/ \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler
go build -trimpath -ldflags "-s -w" -o bin/etcd go.etcd.io/etcd/server/v3
echo "controlplane: built in $(( $(date +%s) - start )) s: $(du -sh bin | cut -f1) in controlplane/bin"
