//go:build tools

// Package controlplane pins the real Kubernetes control plane that the cluster test
// tier and the side-by-side benchmark run against. Nothing here is compiled into the
// scheduler: `make controlplane` builds these commands from the module cache.
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
