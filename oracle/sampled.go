package main

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// SampledResult is one scheduling cycle as kube-scheduler runs it rather than as explain
// reports it: the search stops after numFeasibleNodesToFind feasible nodes
// (percentageOfNodesToScore, global or the profile's), starting at nextStartNodeIndex 0
// of a fresh scheduler, and a lone feasible node is taken unscored. Asked for with
// "sampled": true in a batch request. The cycle runs at parallelism 1, where upstream's
// search is deterministic (with more workers, which feasible nodes are found first
// depends on timing).
type SampledResult struct {
	// Feasible: the feasible nodes the search found, in the order it found them.
	Feasible []string `json:"feasible"`
	// SelectedNode: upstream's choice, framework.NewSortedScoredNodes over the scores in
	// Feasible order, then Pop; null when none fits.
	SelectedNode *string `json:"selectedNode"`
	// TiedNodes: the feasible nodes with the best total score, in Feasible order.
	TiedNodes []string `json:"tiedNodes"`
	// Message: the FitError (without PostFilter's part) or the error that ended the cycle.
	Message *string `json:"message"`
	// NodeOrderMatchesInput: the snapshot lists the nodes in input order (the cache's node
	// tree interleaves zones; another engine searching in input order needs this).
	NodeOrderMatchesInput bool `json:"nodeOrderMatchesInput"`
}

// runSampled schedules pod once with upstream's node search (see SampledResult) on a
// scheduler of its own (parallelism 1), with the same nominated pods.
func runSampled(ctx context.Context, cluster *Cluster, nominator *podNominator, pod *v1.Pod, cfg *config.KubeSchedulerConfiguration, prof *config.KubeSchedulerProfile) (*SampledResult, error) {
	if pod.Status.NominatedNodeName != "" {
		// Upstream first tries the nominated node alone (evaluateNominatedNode), which this
		// search does not do: refuse rather than answer for another search.
		return nil, errors.New("sampled: the incoming pod has status.nominatedNodeName, which the sampled search does not model")
	}
	one := *cfg
	one.Parallelism = 1
	h, stop, err := startScheduler(ctx, cluster, &one, prof)
	if err != nil {
		return nil, err
	}
	defer stop()
	if nominator != nil {
		h.fw.SetPodNominator(nominator)
	}
	out := &SampledResult{Feasible: []string{}, TiedNodes: []string{}}
	listed, err := h.snapshot.ListNodesInPlacement()
	if err != nil {
		return nil, err
	}
	out.NodeOrderMatchesInput = len(listed) == len(cluster.Nodes)
	for i := 0; out.NodeOrderMatchesInput && i < len(listed); i++ {
		out.NodeOrderMatchesInput = listed[i].Node().Name == cluster.Nodes[i].Name
	}
	sched := &benchScheduler{fw: h.fw, snapshot: h.snapshot, percentageOfNodesToScore: derefInt32(cfg.PercentageOfNodesToScore)}
	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	fail := func(err error) (*SampledResult, error) {
		out.Message = strPtr(err.Error())
		return out, nil
	}
	if h.snapshot.NumNodesInPlacement() == 0 {
		return fail(errors.New("no nodes available to schedule pods"))
	}
	feasible, diagnosis, err := sched.findNodesThatFitPod(ctx, state, pod)
	for _, ni := range feasible {
		out.Feasible = append(out.Feasible, ni.Node().Name)
	}
	if err != nil {
		return fail(err)
	}
	if len(feasible) == 0 {
		return fail(&framework.FitError{Pod: pod, NumAllNodes: h.snapshot.NumNodesInPlacement(), Diagnosis: diagnosis})
	}
	if len(feasible) == 1 {
		out.SelectedNode = strPtr(out.Feasible[0])
		out.TiedNodes = []string{out.Feasible[0]}
		return out, nil
	}
	scores, err := sched.prioritizeNodes(ctx, state, pod, feasible)
	if err != nil {
		return fail(err)
	}
	best := scores[0].TotalScore
	for _, s := range scores {
		if s.TotalScore > best {
			best = s.TotalScore
		}
	}
	for _, s := range scores {
		if s.TotalScore == best {
			out.TiedNodes = append(out.TiedNodes, s.Name)
		}
	}
	out.SelectedNode = strPtr(framework.NewSortedScoredNodes(scores).Pop().Name)
	return out, nil
}
