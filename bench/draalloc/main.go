// Command draalloc is scheduler_perf's allocResourceClaims op for a runner that is not the
// Go test: it allocates every unallocated ResourceClaim of a namespace with kube's own
// structured allocator (k8s.io/dynamic-resource-allocation/structured), one claim at a time
// on randomly shuffled nodes, and writes each allocation to the claim's status, as
// allocResourceClaimsOp.run in test/integration/scheduler_perf/dra.go does.
//
//	draalloc --kubeconfig F --namespace NS [--features PartitionableDevices,...]
//
// --features names the allocator features to turn on (structured.Features fields: the
// feature gates of the workload). DeviceTaintRules are not applied to the slices (kube's
// op does when DRADeviceTaintRules is on; no performance workload that allocates claims
// uses them).
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(l))
	for _, class := range l {
		out = append(out, class)
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if class, ok := l[name]; ok {
		return class, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "resource.k8s.io", Resource: "deviceclasses"}, name)
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server (an admin)")
	namespace := flag.String("namespace", "", "namespace of the claims to allocate (all when empty)")
	featureList := flag.String("features", "", "comma-separated structured.Features fields to enable")
	flag.Parse()
	if err := run(context.Background(), *kubeconfig, *namespace, *featureList); err != nil {
		fmt.Fprintf(os.Stderr, "draalloc: %v\n", err)
		os.Exit(1)
	}
}

func features(list string) (structured.Features, cel.Features, error) {
	var f structured.Features
	fields := map[string]*bool{
		"AdminAccess":          &f.AdminAccess,
		"CompatibilityGroups":  &f.CompatibilityGroups,
		"ConsumableCapacity":   &f.ConsumableCapacity,
		"DeviceTaints":         &f.DeviceTaints,
		"ListTypeAttributes":   &f.ListTypeAttributes,
		"PartitionableDevices": &f.PartitionableDevices,
		"PrioritizedList":      &f.PrioritizedList,
	}
	for _, name := range strings.Split(list, ",") {
		if name == "" {
			continue
		}
		field, ok := fields[name]
		if !ok {
			return f, cel.Features{}, fmt.Errorf("unknown feature %q", name)
		}
		*field = true
	}
	return f, cel.Features{EnableConsumableCapacity: f.ConsumableCapacity, EnableListTypeAttributes: f.ListTypeAttributes}, nil
}

func run(ctx context.Context, kubeconfig, namespace, featureList string) error {
	allocatorFeatures, celFeatures, err := features(featureList)
	if err != nil {
		return err
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = -1, 1<<20
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	resource := client.ResourceV1()
	todo, err := resource.ResourceClaims(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list claims: %w", err)
	}
	everyClaim, err := resource.ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list claims: %w", err)
	}
	nodeList, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	sliceList, err := resource.ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list slices: %w", err)
	}
	classList, err := resource.DeviceClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list classes: %w", err)
	}
	classes := classLister{}
	for i := range classList.Items {
		classes[classList.Items[i].Name] = &classList.Items[i]
	}
	slices := make([]*resourceapi.ResourceSlice, len(sliceList.Items))
	for i := range sliceList.Items {
		slices[i] = &sliceList.Items[i]
	}
	nodes := make([]*v1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		nodes[i] = &nodeList.Items[i]
	}
	// Every claim's allocation as last written, the ones made here included (kube keeps
	// them in its assume cache for the same reason: the informer lags the status updates).
	current := map[string]*resourceapi.ResourceClaim{}
	for i := range everyClaim.Items {
		claim := &everyClaim.Items[i]
		current[claim.Namespace+"/"+claim.Name] = claim
	}
	celCache := cel.NewCache(10, celFeatures)
	allocated := 0
claims:
	for i := range todo.Items {
		claim := current[todo.Items[i].Namespace+"/"+todo.Items[i].Name]
		if claim == nil || claim.Status.Allocation != nil {
			continue
		}
		allocator, err := structured.NewAllocator(ctx, allocatorFeatures, allocatedState(current), classes, slices, celCache)
		if err != nil {
			return fmt.Errorf("create allocator: %w", err)
		}
		rand.Shuffle(len(nodes), func(a, b int) { nodes[a], nodes[b] = nodes[b], nodes[a] })
		for _, node := range nodes {
			result, err := allocator.Allocate(ctx, node, []*resourceapi.ResourceClaim{claim})
			if err != nil {
				return fmt.Errorf("allocate claim %s: %w", claim.Name, err)
			}
			if result == nil {
				continue
			}
			update := claim.DeepCopy()
			update.Status.Allocation = &result[0]
			written, err := resource.ResourceClaims(update.Namespace).UpdateStatus(ctx, update, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("update claim status with allocation: %w", err)
			}
			current[written.Namespace+"/"+written.Name] = written
			allocated++
			continue claims
		}
		return fmt.Errorf("could not allocate claim %d out of %d", i, len(todo.Items))
	}
	fmt.Printf("allocated %d ResourceClaims\n", allocated)
	return nil
}

// allocatedState is what the claims' allocations hold (dra.go builds it the same way).
func allocatedState(claims map[string]*resourceapi.ResourceClaim) structured.AllocatedState {
	devices := sets.New[structured.DeviceID]()
	shared := sets.New[structured.SharedDeviceID]()
	capacity := structured.NewConsumedCapacityCollection()
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			id := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			devices.Insert(id)
			if result.ShareID == nil {
				continue
			}
			shared.Insert(structured.MakeSharedDeviceID(id, result.ShareID))
			if result.ConsumedCapacity != nil {
				capacity.Insert(structured.NewDeviceConsumedCapacity(id, result.ConsumedCapacity))
			}
		}
	}
	return structured.AllocatedState{AllocatedDevices: devices, AllocatedSharedDeviceIDs: shared, AggregatedCapacity: capacity}
}
