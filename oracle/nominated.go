package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// nominatedPods are the cluster's pending pods (no spec.nodeName, not terminal) that
// carry status.nominatedNodeName, wherever they are in the inputs (Lists included): the
// pods kube-scheduler's queue holds with a nomination, which its nominator hands to
// RunFilterPluginsWithNominatedPods. The decoder keeps only assigned pods, so the
// documents are read again here. The incoming pod is left out however it is listed (a
// cluster holds one pod per namespace/name; upstream skips it by uid in
// addGENominatedPods).
func nominatedPods(docs []sourcedBytes, incoming *v1.Pod) ([]*v1.Pod, error) {
	var out []*v1.Pod
	for _, doc := range docs {
		objs, err := decodeObjects(doc.data)
		if err != nil {
			return nil, &inputError{source: doc.source, err: err}
		}
		for _, obj := range objs {
			pod, ok := obj.(*v1.Pod)
			if !ok || pod.Spec.NodeName != "" || pod.Status.NominatedNodeName == "" {
				continue
			}
			if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
				continue
			}
			defaultNamespace(&pod.Namespace)
			if pod.Spec.SchedulerName == "" {
				pod.Spec.SchedulerName = v1.DefaultSchedulerName
			}
			if pod.Namespace == incoming.Namespace && pod.Name == incoming.Name {
				continue
			}
			out = append(out, pod)
		}
	}
	return out, nil
}

// podNominator is the scheduling queue's nominator over a fixed set of pods: for each
// node the pods nominated to it, in input order (upstream: the order they were added).
// The scheduler never changes it during one explained attempt.
type podNominator struct {
	byNode map[string][]fwk.PodInfo
}

func newPodNominator(pods []*v1.Pod) (*podNominator, error) {
	n := &podNominator{byNode: map[string][]fwk.PodInfo{}}
	seen := map[string]bool{}
	for _, p := range pods {
		if seen[string(p.UID)] {
			continue // the nominator stores each pod once
		}
		seen[string(p.UID)] = true
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			return nil, fmt.Errorf("nominated pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		node := p.Status.NominatedNodeName
		n.byNode[node] = append(n.byNode[node], pi)
	}
	return n, nil
}

func (*podNominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (*podNominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (*podNominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (n *podNominator) NominatedPodsForNode(node string) []fwk.PodInfo {
	return n.byNode[node]
}
