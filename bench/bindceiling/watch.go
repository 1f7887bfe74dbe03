package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

func typesUID(uid string) types.UID { return types.UID(uid) }

// watchAndBind is the end-to-end benchmarks' ceiling: every pod that appears pending is
// bound at once, round robin over the nodes, `concurrency` bindings in flight.
func watchAndBind(ctx context.Context, client kubernetes.Interface, nodes int, prefix string, concurrency, port int) error {
	listed, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	watcher, err := client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: listed.ResourceVersion})
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	defer watcher.Stop()
	todo := make(chan *v1.Pod, 1<<16)
	var next atomic.Int64
	for w := 0; w < concurrency; w++ {
		go func() {
			for pod := range todo {
				i := next.Add(1) - 1
				binding := &v1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
					Target:     v1.ObjectReference{Kind: "Node", Name: fmt.Sprintf("%s%d", prefix, int(i)%nodes)},
				}
				_ = client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
			}
		}()
	}
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	server := &http.Server{Handler: mux}
	go func() { _ = server.Serve(listener) }()
	defer server.Close()
	for {
		select {
		case <-ctx.Done():
			close(todo)
			return nil
		case event, ok := <-watcher.ResultChan():
			if !ok {
				close(todo)
				return fmt.Errorf("watch closed")
			}
			pod, isPod := event.Object.(*v1.Pod)
			if event.Type == watch.Added && isPod && pod.Spec.NodeName == "" {
				todo <- pod
			}
		}
	}
}
