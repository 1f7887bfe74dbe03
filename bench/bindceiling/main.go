// Command bindceiling measures how many pod bindings per second an API server takes, and
// stands in as the "ceiling" scheduler of the end-to-end benchmarks: a client with no
// decisions and no rate limit.
//
//	bindceiling sweep --kubeconfig F --nodes 500 [--pods 3000] [--concurrency 1,2,...,256]
//	bindceiling watch --kubeconfig F --nodes N --port P [--concurrency 64]
//
// sweep: the limit. The nodes exist as objects (made when missing); for each concurrency,
// --pods pending pods are created first (not timed), then bound, C bindings in flight
// (POST pods/{name}/binding, round robin over the nodes), and the rate is bound pods over
// the seconds from the first binding sent to the last answered. Pods are deleted between
// steps (not timed). client-go with no client-side rate limit (QPS -1) over one HTTP/2
// connection, as kube-scheduler's client talks to a TLS API server. One JSON line per step,
// then the best one.
//
// watch: what `python -m bench.e2e ceiling` did in Python: watch pods, bind each new
// pending one round robin over node-0..node-(N-1) with C in flight, 200 on
// 127.0.0.1:P/readyz once the watch is open; until SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	namespace     = "bind-ceiling"
	schedulerName = "bind-ceiling" // no scheduler takes these pods
	createWorkers = 64
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "sweep" && os.Args[1] != "watch") {
		fmt.Fprintln(os.Stderr, "usage: bindceiling sweep|watch --kubeconfig FILE [flags]")
		os.Exit(2)
	}
	mode := os.Args[1]
	flags := flag.NewFlagSet(mode, flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the API server: the identity that binds")
	setupKubeconfig := flags.String("setup-kubeconfig", "", "sweep: identity that creates nodes and pods and deletes them (default --kubeconfig)")
	nodes := flags.Int("nodes", 500, "node objects to bind to")
	pods := flags.Int("pods", 3000, "sweep: pods bound per concurrency step")
	sweepList := flags.String("concurrency", "", "sweep: comma-separated bindings in flight (default 1..256 by doubling); watch: one number (default 64)")
	repeats := flags.Int("repeats", 1, "sweep: runs of each step (the best counts)")
	port := flags.Int("port", 0, "watch: port of /readyz on 127.0.0.1")
	nodePrefix := flags.String("node-prefix", "", "node names: PREFIX0..; default ceiling-node- (sweep), node- (watch)")
	cpuPids := flags.String("cpu-pids", "", "sweep: name=pid,... of processes whose CPU per binding to report (the API server, etcd)")
	clockTicks := flags.Float64("clock-ticks", 100, "sweep: the kernel's clock ticks per second (getconf CLK_TCK)")
	_ = flags.Parse(os.Args[2:])
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "--kubeconfig is required")
		os.Exit(2)
	}
	client, err := newClient(*kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		os.Exit(1)
	}
	setup := client
	if *setupKubeconfig != "" {
		if setup, err = newClient(*setupKubeconfig); err != nil {
			fmt.Fprintf(os.Stderr, "setup client: %v\n", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if mode == "watch" {
		prefix := *nodePrefix
		if prefix == "" {
			prefix = "node-"
		}
		concurrency := 64
		if *sweepList != "" {
			if concurrency, err = strconv.Atoi(*sweepList); err != nil {
				fmt.Fprintf(os.Stderr, "--concurrency: %v\n", err)
				os.Exit(2)
			}
		}
		err = watchAndBind(ctx, client, *nodes, prefix, concurrency, *port)
	} else {
		prefix := *nodePrefix
		if prefix == "" {
			prefix = "ceiling-node-"
		}
		steps, perr := parseSteps(*sweepList)
		if perr != nil {
			fmt.Fprintf(os.Stderr, "--concurrency: %v\n", perr)
			os.Exit(2)
		}
		watched, perr := parsePids(*cpuPids)
		if perr != nil {
			fmt.Fprintf(os.Stderr, "--cpu-pids: %v\n", perr)
			os.Exit(2)
		}
		probe := cpuProbe{pids: watched, ticks: *clockTicks}
		err = sweep(ctx, setup, client, *nodes, prefix, *pods, steps, *repeats, probe)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", mode, err)
		os.Exit(1)
	}
}

func newClient(kubeconfig string) (*kubernetes.Clientset, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	config.QPS = -1 // no client-side rate limiter (client-go: only qps > 0 makes one)
	config.Burst = 1 << 20
	if strings.HasPrefix(config.Host, "https://") {
		// kube-scheduler's encoding; the emulator (plain http) speaks JSON only.
		config.ContentType = "application/vnd.kubernetes.protobuf"
		config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	config.UserAgent = "bindceiling"
	return kubernetes.NewForConfig(config)
}

func parseSteps(text string) ([]int, error) {
	if text == "" {
		return []int{1, 2, 4, 8, 16, 32, 64, 128, 256}, nil
	}
	var steps []int
	for _, part := range strings.Split(text, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", part)
		}
		steps = append(steps, n)
	}
	return steps, nil
}

// parallel runs work(i) for i in [0, n) with `workers` goroutines; the first error wins.
func parallel(ctx context.Context, n, workers int, work func(int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := work(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

func ensureNodes(ctx context.Context, client kubernetes.Interface, count int, prefix string) error {
	quantities := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return parallel(ctx, count, createWorkers, func(i int) error {
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%d", prefix, i)},
			Status: v1.NodeStatus{
				Capacity:    quantities,
				Allocatable: quantities,
				Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
			},
		}
		_, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

func pendingPod(i int) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ceiling-%d", i)},
		Spec: v1.PodSpec{
			SchedulerName:                 schedulerName,
			TerminationGracePeriodSeconds: new(int64(0)),
			Containers:                    []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.2"}},
		},
	}
}

type step struct {
	Concurrency int     `json:"concurrency"`
	Nodes       int     `json:"nodes"`
	Binds       int     `json:"binds"`
	Errors      int64   `json:"errors"`
	Seconds     float64 `json:"seconds"`
	BindsPerS   float64 `json:"binds_per_s"`
	Repeat      int     `json:"repeat"`
	// CPU of the watched processes (--cpu-pids) while binding, per binding, ms.
	CPUMsPerBind map[string]float64 `json:"cpu_ms_per_bind,omitempty"`
}

func sweep(ctx context.Context, setup, binder kubernetes.Interface, nodes int, prefix string, pods int, steps []int, repeats int, probe cpuProbe) error {
	if err := ensureNodes(ctx, setup, nodes, prefix); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := setup.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace: %w", err)
	}
	// The ServiceAccount admission plugin wants it; no controller-manager may be there to make it.
	account := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := setup.CoreV1().ServiceAccounts(namespace).Create(ctx, account, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("service account: %w", err)
	}
	var results []step
	for repeat := 0; repeat < repeats; repeat++ {
		for _, concurrency := range steps {
			result, err := bindStep(ctx, setup, binder, nodes, prefix, pods, concurrency, probe)
			if err != nil {
				return err
			}
			result.Repeat = repeat
			line, _ := json.Marshal(result)
			fmt.Println(string(line))
			results = append(results, result)
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].BindsPerS > results[j].BindsPerS })
	best, _ := json.Marshal(map[string]any{"best": results[0]})
	fmt.Println(string(best))
	return nil
}

func bindStep(ctx context.Context, setup, binder kubernetes.Interface, nodes int, prefix string, pods, concurrency int, probe cpuProbe) (step, error) {
	podsAPI := setup.CoreV1().Pods(namespace)
	bindAPI := binder.CoreV1().Pods(namespace)
	uids := make([]string, pods)
	err := parallel(ctx, pods, createWorkers, func(i int) error {
		made, err := podsAPI.Create(ctx, pendingPod(i), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create pod: %w", err)
		}
		uids[i] = string(made.UID)
		return nil
	})
	if err != nil {
		return step{}, err
	}
	var failed atomic.Int64
	cpuBefore := probe.read()
	started := time.Now()
	err = parallel(ctx, pods, concurrency, func(i int) error {
		binding := &v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ceiling-%d", i), UID: typesUID(uids[i])},
			Target:     v1.ObjectReference{Kind: "Node", Name: fmt.Sprintf("%s%d", prefix, i%nodes)},
		}
		if err := bindAPI.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
			failed.Add(1)
		}
		return nil
	})
	elapsed := time.Since(started).Seconds()
	cpuAfter := probe.read()
	if err != nil {
		return step{}, err
	}
	// Not timed: make room for the next step (bound pods without a kubelet need grace 0).
	zero := int64(0)
	err = parallel(ctx, pods, createWorkers, func(i int) error {
		err := podsAPI.Delete(ctx, fmt.Sprintf("ceiling-%d", i), metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod: %w", err)
		}
		return nil
	})
	if err != nil {
		return step{}, err
	}
	bound := pods - int(failed.Load())
	cpu := map[string]float64{}
	for name, before := range cpuBefore {
		if bound > 0 {
			cpu[name] = (cpuAfter[name] - before) * 1000 / float64(bound)
		}
	}
	return step{
		CPUMsPerBind: cpu,
		Concurrency:  concurrency,
		Nodes:        nodes,
		Binds:        bound,
		Errors:       failed.Load(),
		Seconds:      elapsed,
		BindsPerS:    float64(bound) / elapsed,
	}, nil
}

// cpuProbe reads the user+system CPU seconds of a few processes from /proc.
type cpuProbe struct {
	pids  map[string]int
	ticks float64
}

func parsePids(text string) (map[string]int, error) {
	pids := map[string]int{}
	for _, part := range strings.Split(text, ",") {
		if part == "" {
			continue
		}
		name, pid, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil {
			return nil, fmt.Errorf("%q is not name=pid", part)
		}
		pids[name] = n
	}
	return pids, nil
}

func (p cpuProbe) read() map[string]float64 {
	out := map[string]float64{}
	for name, pid := range p.pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command (which may hold spaces) start at state: utime, stime are
		// the 12th and 13th of them.
		text := string(data)
		fields := strings.Fields(text[strings.LastIndex(text, ")")+1:])
		if len(fields) < 13 {
			continue
		}
		user, _ := strconv.ParseFloat(fields[11], 64)
		system, _ := strconv.ParseFloat(fields[12], 64)
		out[name] = (user + system) / p.ticks
	}
	return out
}
