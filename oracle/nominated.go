package main

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// nominatedPods are the cluster's pending pods (no spec.nodeName, not terminal) that
// carry status.nominatedNodeName: the pods kube-scheduler's queue holds with a
// nomination, which its nominator hands to RunFilterPluginsWithNominatedPods. The
// decoder keeps only assigned pods, so the documents are read again here; only a
// document that is one Pod is considered (a List's pods are not).
func nominatedPods(docs []sourcedBytes) ([]*v1.Pod, error) {
	var out []*v1.Pod
	for _, doc := range docs {
		var peek struct {
			Kind string `json:"kind"`
			Spec struct {
				NodeName string `json:"nodeName"`
			} `json:"spec"`
			Status struct {
				Phase             string `json:"phase"`
				NominatedNodeName string `json:"nominatedNodeName"`
			} `json:"status"`
		}
		if json.Unmarshal(doc.data, &peek) != nil || peek.Kind != "Pod" {
			continue
		}
		if peek.Spec.NodeName != "" || peek.Status.NominatedNodeName == "" {
			continue
		}
		if peek.Status.Phase == string(v1.PodSucceeded) || peek.Status.Phase == string(v1.PodFailed) {
			continue
		}
		pod, err := decodeIncomingPod(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, pod)
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
