#!/usr/bin/env bash
# Rebuilds the example snapshots the README's and docs/simulate.md's simulate and explain
# examples read, the way the README tells users to take one: objects made on a real
# kube-apiserver and kube-controller-manager v1.37.2 (`make cluster`), then
# `kubectl get ... -A -o json`.
#
#   make cluster                     # in another terminal; prints the admin kubeconfig
#   KUBECONFIG=<admin kubeconfig> bash examples/snapshots/make-snapshots.sh [spread|mixed|gang]
#
# gang.json needs a cluster that serves PodGroups:
#   .venv/bin/python -m controlplane --feature-gates GenericWorkload=true
#
# Only against that throwaway cluster: it deletes every node and the namespaces it uses.
# No scheduler runs: the ReplicaSet, StatefulSet and Job controllers create the pods with
# their owner references, and they stay pending; the pods a snapshot shows as running are
# bound here through the binding subresource (as a scheduler binds) and marked Running
# (as a kubelet would). Uids, names and timestamps change with every rebuild, so the README's
# examples and tests/deploy/test_readme_examples.py must be updated with it.
set -euo pipefail
cd "$(dirname "$0")"
ONLY=${1:-all}
want() { [ "$ONLY" = all ] || [ "$ONLY" = "$1" ]; }

KINDS=nodes,pods,namespaces,services,replicasets,statefulsets,replicationcontrollers,pv,pvc,storageclasses,csinodes,pdb

node_ips=0
node() {  # name zone cpu memory [labels json] [taints json] [extended resources json] [unschedulable]
  local labels=${5:-'{}'} taints=${6:-'[]'} extended=${7:-'{}'} unschedulable=${8:-false} now
  node_ips=$((node_ips + 1))
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  jq -n --arg name "$1" --arg zone "$2" --arg cpu "$3" --arg memory "$4" --arg now "$now" \
    --arg ip "10.0.0.$node_ips" --argjson labels "$labels" --argjson taints "$taints" \
    --argjson extended "$extended" --argjson unschedulable "$unschedulable" '
    ({cpu: $cpu, memory: $memory, pods: "110", "ephemeral-storage": "100Gi"} + $extended) as $room |
    {apiVersion: "v1", kind: "Node",
     metadata: {name: $name, labels: ({"kubernetes.io/hostname": $name, "kubernetes.io/os": "linux",
       "kubernetes.io/arch": "amd64", "topology.kubernetes.io/region": "eu-west-1",
       "topology.kubernetes.io/zone": $zone} + $labels)},
     spec: ({taints: $taints} + (if $unschedulable then {unschedulable: true} else {} end)),
     status: {capacity: $room, allocatable: $room,
       addresses: [{type: "InternalIP", address: $ip}, {type: "Hostname", address: $name}],
       conditions: [{type: "Ready", status: "True", reason: "KubeletReady",
                     message: "kubelet is posting ready status", lastHeartbeatTime: $now,
                     lastTransitionTime: $now}],
       nodeInfo: {architecture: "amd64", operatingSystem: "linux", kubeletVersion: "v1.37.2",
                  containerRuntimeVersion: "containerd://2.1.4", kernelVersion: "6.8.0",
                  osImage: "Ubuntu 24.04.3 LTS", kubeProxyVersion: "", machineID: "",
                  systemUUID: "", bootID: ""}}}' | kubectl create -f - >/dev/null
}

run_on() {  # namespace pod node: bind the pod as a scheduler would, then mark it Running
  kubectl create --raw "/api/v1/namespaces/$1/pods/$2/binding" -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "$2"},
 "target": {"apiVersion": "v1", "kind": "Node", "name": "$3"}}
JSON
  local now containers host
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  host=$(kubectl get node "$3" -o jsonpath='{.status.addresses[0].address}')
  containers=$(kubectl -n "$1" get pod "$2" -o json | jq -c --arg now "$now" '[.spec.containers[] |
    {name, image, imageID: "", ready: true, started: true, restartCount: 0,
     state: {running: {startedAt: $now}}}]')
  pod_ips=$((pod_ips + 1))
  kubectl -n "$1" patch pod "$2" --subresource=status --type=merge -p "{\"status\": {
    \"phase\": \"Running\", \"hostIP\": \"$host\", \"podIP\": \"10.244.0.$pod_ips\",
    \"startTime\": \"$now\", \"containerStatuses\": $containers,
    \"conditions\": [{\"type\": \"PodScheduled\", \"status\": \"True\", \"lastTransitionTime\": \"$now\"},
                     {\"type\": \"Initialized\", \"status\": \"True\", \"lastTransitionTime\": \"$now\"},
                     {\"type\": \"ContainersReady\", \"status\": \"True\", \"lastTransitionTime\": \"$now\"},
                     {\"type\": \"Ready\", \"status\": \"True\", \"lastTransitionTime\": \"$now\"}]}}" >/dev/null
}
pod_ips=0

pods_of() {  # namespace selector: the pod names, oldest first
  kubectl -n "$1" get pods -l "$2" --sort-by=.metadata.creationTimestamp -o jsonpath='{.items[*].metadata.name}'
}

wait_pods() {  # namespace selector count
  for _ in $(seq 100); do
    [ "$(kubectl -n "$1" get pods -l "$2" -o name | wc -l)" -ge "$3" ] && return
    sleep 0.2
  done
  echo "timed out waiting for $3 pods $2 in $1" >&2; exit 1
}

reset() {  # remove what the previous snapshot made (its namespaces, every node)
  local ns
  kubectl -n kube-system delete deployment,service -l k8s-app=kube-dns --wait=true >/dev/null
  kubectl -n kube-system delete pods -l k8s-app=kube-dns --grace-period=0 --force >/dev/null 2>&1
  for ns in "$@"; do  # bound pods wait for a kubelet that never comes: forced
    kubectl -n "$ns" delete deployments,statefulsets,jobs --all --wait=true >/dev/null 2>&1 || true
    kubectl -n "$ns" delete pods --all --grace-period=0 --force >/dev/null 2>&1 || true
  done
  kubectl delete namespace "$@" --ignore-not-found --wait=true >/dev/null
  kubectl delete nodes --all --wait=true >/dev/null
}

if want spread; then
# -- 1. spread.json: a Deployment spread over zones, scaled up after two zones joined -------
# web: 3 replicas ran in zone a alone; zones b and c joined; scaled to 9, the 6 new replicas
# must go to b and c (maxSkew 1 over zones, DoNotSchedule). api: no constraints of its own,
# so kube's default spreading applies to it (a Service and a ReplicaSet select its pods).
reset shop
for zone in a b c; do
  for i in 1 2; do node "$zone-$i" "eu-west-1$zone" 4 16Gi '{"node.kubernetes.io/instance-type": "m5.xlarge"}'; done
done
kubectl create namespace shop >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {batch-scheduler.io/batching: "true"}
    spec:
      schedulerName: batch-scheduler
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: web}}}
        - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
           labelSelector: {matchLabels: {app: web}}}
      containers:
        - name: web
          image: nginx:1.27
          ports: [{containerPort: 80}]
          resources: {requests: {cpu: 500m, memory: 512Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop, labels: {app: api}}
spec:
  replicas: 4
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api}
      annotations: {batch-scheduler.io/batching: "true"}
    spec:
      schedulerName: batch-scheduler
      containers:
        - name: api
          image: registry.example.com/shop/api:2.4.1
          resources: {requests: {cpu: 250m, memory: 256Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec:
  selector: {app: api}
  ports: [{port: 8080}]
YAML
wait_pods shop app=web 3
read -r -a web <<<"$(pods_of shop app=web)"
run_on shop "${web[0]}" a-1
run_on shop "${web[1]}" a-2
run_on shop "${web[2]}" a-1
kubectl -n shop scale deployment web --replicas=9 >/dev/null
wait_pods shop app=web 9
wait_pods shop app=api 4
kubectl get "$KINDS" -A -o json > spread.json
echo "spread.json: $(jq '.items | length' spread.json) objects"
fi

if want mixed; then
# -- 2. mixed.json: several teams' workloads on nodes of several shapes ---------------------
# general-1..3 (8 CPU), big-1 (32 CPU), gpu-1 (tainted, 4 GPUs), general-4 (cordoned).
# Running: coredns (default-scheduler), cruncher (6 CPU each), db-0 and db-1. Pending: db-2
# (anti-affinity), frontend (default spreading), train (a GPU), report (more CPU than any
# node has: unschedulable), finetune (gated until a quota controller lets it go).
reset shop ml analytics
node general-1 eu-west-1a 8 32Gi '{"node.kubernetes.io/instance-type": "m5.2xlarge"}'
node general-2 eu-west-1b 8 32Gi '{"node.kubernetes.io/instance-type": "m5.2xlarge"}'
node general-3 eu-west-1c 8 32Gi '{"node.kubernetes.io/instance-type": "m5.2xlarge"}'
node big-1 eu-west-1a 32 128Gi '{"node.kubernetes.io/instance-type": "m5.8xlarge"}'
node gpu-1 eu-west-1b 16 64Gi '{"node.kubernetes.io/instance-type": "g5.4xlarge", "nvidia.com/gpu.product": "A10G"}' \
  '[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]' '{"nvidia.com/gpu": "4"}'
node general-4 eu-west-1c 8 32Gi '{"node.kubernetes.io/instance-type": "m5.2xlarge"}' \
  '[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-12-01T08:00:00Z"}]' '{}' true
for ns in shop ml analytics; do kubectl create namespace "$ns" >/dev/null; done
kubectl label namespace shop team=storefront >/dev/null
kubectl label namespace ml analytics team=data >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: shop-critical}
value: 100000
description: Customer-facing services; may preempt batch work.
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch-low}
value: 100
preemptionPolicy: Never
description: Batch jobs; never preempt.
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 2
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      priorityClassName: system-cluster-critical
      tolerations: [{key: CriticalAddonsOnly, operator: Exists}]
      containers:
        - name: coredns
          image: registry.k8s.io/coredns/coredns:v1.12.1
          resources: {requests: {cpu: 100m, memory: 70Mi}, limits: {memory: 170Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  selector: {k8s-app: kube-dns}
  ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cruncher, namespace: analytics}
spec:
  replicas: 2
  selector: {matchLabels: {app: cruncher}}
  template:
    metadata: {labels: {app: cruncher}}
    spec:
      schedulerName: batch-scheduler
      priorityClassName: batch-low
      containers:
        - name: cruncher
          image: registry.example.com/analytics/cruncher:5.0
          resources: {requests: {cpu: "6", memory: 12Gi}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 3
  serviceName: db
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      schedulerName: batch-scheduler
      priorityClassName: shop-critical
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}
      containers:
        - name: postgres
          image: postgres:17
          ports: [{containerPort: 5432}]
          resources: {requests: {cpu: "1", memory: 4Gi}}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: shop}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{port: 5432}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: shop}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: db}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: frontend, namespace: shop, labels: {app: frontend}}
spec:
  replicas: 4
  selector: {matchLabels: {app: frontend}}
  template:
    metadata:
      labels: {app: frontend}
      annotations: {batch-scheduler.io/batching: "true"}
    spec:
      schedulerName: batch-scheduler
      priorityClassName: shop-critical
      containers:
        - name: frontend
          image: registry.example.com/shop/frontend:3.2.0
          ports: [{containerPort: 8080}]
          resources: {requests: {cpu: 1500m, memory: 2Gi}}
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: shop}
spec:
  selector: {app: frontend}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  backoffLimit: 2
  template:
    metadata: {labels: {app: train}}
    spec:
      schedulerName: batch-scheduler
      priorityClassName: batch-low
      restartPolicy: Never
      nodeSelector: {nvidia.com/gpu.product: A10G}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
        - name: train
          image: registry.example.com/ml/train:0.9
          resources: {requests: {cpu: "4", memory: 24Gi}, limits: {nvidia.com/gpu: "1"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: finetune, namespace: ml}
spec:
  template:
    metadata: {labels: {app: finetune}}
    spec:
      schedulerName: batch-scheduler
      priorityClassName: batch-low
      schedulingGates: [{name: example.com/gpu-quota}]
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
        - name: finetune
          image: registry.example.com/ml/train:0.9
          resources: {requests: {cpu: "8", memory: 48Gi}, limits: {nvidia.com/gpu: "4"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: report, namespace: analytics}
spec:
  template:
    metadata: {labels: {app: report}}
    spec:
      schedulerName: batch-scheduler
      priorityClassName: batch-low
      restartPolicy: Never
      containers:
        - name: report
          image: registry.example.com/analytics/report:1.3
          resources: {requests: {cpu: "40", memory: 64Gi}}
YAML
wait_pods kube-system k8s-app=kube-dns 2
wait_pods analytics app=cruncher 2
wait_pods shop app=db 3
wait_pods shop app=frontend 4
wait_pods ml app=train 1
wait_pods ml app=finetune 1
wait_pods analytics app=report 1
read -r -a dns <<<"$(pods_of kube-system k8s-app=kube-dns)"
run_on kube-system "${dns[0]}" general-1
run_on kube-system "${dns[1]}" general-3
read -r -a cruncher <<<"$(pods_of analytics app=cruncher)"
run_on analytics "${cruncher[0]}" general-1
run_on analytics "${cruncher[1]}" general-2
run_on shop db-0 general-1
run_on shop db-1 general-2
# The disruption controller writes the budget's status once it sees the pods Ready.
for _ in $(seq 100); do
  [ "$(kubectl -n shop get pdb db -o jsonpath='{.status.currentHealthy}')" = 2 ] && break
  sleep 0.2
done
kubectl get "$KINDS,deployments,jobs,priorityclasses" -A -o json > mixed.json
echo "mixed.json: $(jq '.items | length' mixed.json) objects"
fi

if want gang; then
# -- 3. gang.json: Jobs whose pods form PodGroups (GenericWorkload) --------------------------
# gpu-1..4 (8 CPU, 2 GPUs each) and cpu-1 (8 CPU). train: a 4-pod gang, each pod 6 CPU and
# 2 GPUs: it fits, one pod per GPU node. sweep: a 3-pod gang of 4 CPU each: two fit on cpu-1
# and the third nowhere, so, all or nothing, it gets no node (pod by pod, two would hold
# cpu-1 for a job that cannot run). etl: a Job whose pods name PodGroup etl, not created.
# notebook: a plain pod.
reset research
for i in 1 2 3 4; do
  node "gpu-$i" "eu-west-1a" 8 64Gi '{"node.kubernetes.io/instance-type": "g5.2xlarge"}' '[]' '{"nvidia.com/gpu": "2"}'
done
node cpu-1 eu-west-1a 8 32Gi '{"node.kubernetes.io/instance-type": "m5.2xlarge"}'
kubectl create namespace research >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: research}
spec: {schedulingPolicy: {gang: {minCount: 4}}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: sweep, namespace: research}
spec: {schedulingPolicy: {gang: {minCount: 3}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: research}
spec:
  parallelism: 4
  completions: 4
  completionMode: Indexed
  template:
    metadata: {labels: {app: train}, annotations: {batch-scheduler.io/batching: "true"}}
    spec:
      schedulerName: batch-scheduler
      schedulingGroup: {podGroupName: train}
      restartPolicy: Never
      containers:
        - name: worker
          image: registry.example.com/research/train:1.0
          resources: {requests: {cpu: "6", memory: 32Gi}, limits: {nvidia.com/gpu: "2"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: sweep, namespace: research}
spec:
  parallelism: 3
  completions: 3
  completionMode: Indexed
  template:
    metadata: {labels: {app: sweep}}
    spec:
      schedulerName: batch-scheduler
      schedulingGroup: {podGroupName: sweep}
      restartPolicy: Never
      containers:
        - name: trial
          image: registry.example.com/research/sweep:1.0
          resources: {requests: {cpu: "4", memory: 8Gi}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: etl, namespace: research}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata: {labels: {app: etl}}
    spec:
      schedulerName: batch-scheduler
      schedulingGroup: {podGroupName: etl}
      restartPolicy: Never
      containers:
        - name: etl
          image: registry.example.com/research/etl:1.0
          resources: {requests: {cpu: "1", memory: 2Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: notebook, namespace: research}
spec:
  schedulerName: batch-scheduler
  containers:
    - name: notebook
      image: registry.example.com/research/notebook:1.0
      resources: {requests: {cpu: "1", memory: 4Gi}}
YAML
wait_pods research app=train 4
wait_pods research app=sweep 3
wait_pods research app=etl 2
kubectl get "$KINDS,podgroups,jobs" -A -o json > gang.json
echo "gang.json: $(jq '.items | length' gang.json) objects"
fi
