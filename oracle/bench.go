package main

// `oracle bench`: upstream's scheduling cycle, run sequentially over a list of
// pods, timed. See runBench and README.md ("bench").

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Constants of pkg/scheduler/scheduler.go (unexported upstream).
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// benchInput is the workload `oracle bench` reads (one JSON document).
type benchInput struct {
	// Name labels the output only.
	Name string `json:"name"`
	// Cluster holds Nodes, assigned Pods (spec.nodeName set) and workload
	// objects (Services, ...), as for `oracle batch`.
	Cluster []json.RawMessage `json:"cluster"`
	// Pods are the pods to place, scheduled one after the other in this order.
	Pods []json.RawMessage `json:"pods"`
	// Config is a KubeSchedulerConfiguration; null: the default one.
	Config json.RawMessage `json:"config"`
}

// BenchOutput is what `oracle bench` prints on stdout.
type BenchOutput struct {
	Name              string `json:"name"`
	KubernetesVersion string `json:"kubernetesVersion"`
	GoVersion         string `json:"goVersion"`
	GOMAXPROCS        int    `json:"gomaxprocs"`
	Parallelism       int    `json:"parallelism"`
	Nodes             int    `json:"nodes"`
	ExistingPods      int    `json:"existingPods"`
	Pods              int    `json:"pods"`
	Scheduled         int    `json:"scheduled"`
	// Seconds is the wall time of the scheduling loop alone (setup excluded).
	Seconds float64 `json:"seconds"`
	// PodsPerSecond is pods (one cycle each, scheduled or not) per second of Seconds.
	PodsPerSecond float64 `json:"podsPerSecond"`
	// CPUSeconds is the process's user and system CPU time over the same loop: every
	// goroutine's (the parallel Filter/Score workers, informers, GC).
	CPUSeconds float64 `json:"cpuSeconds"`
	PeakRSSMiB float64 `json:"peakRssMiB"`
	// NodeOrderMatchesInput: the scheduler's snapshot lists the nodes in the
	// order they were given (the cache's node tree interleaves zones, so the
	// input must already be in that order for another engine to search alike).
	NodeOrderMatchesInput bool `json:"nodeOrderMatchesInput"`
	// NodeOrderDifference describes the first difference, if any.
	NodeOrderDifference *string `json:"nodeOrderDifference"`
}

// Placement is one pod's outcome.
type Placement struct {
	Pod     string // namespace/name
	Node    string // "" when unschedulable
	Message string // why not, when Node is ""
}

// benchScheduler is the part of kube-scheduler's Scheduler that one
// scheduling cycle reads and writes: the node search state.
type benchScheduler struct {
	fw                       framework.Framework
	snapshot                 snapshotLister
	percentageOfNodesToScore int32
	nextStartNodeIndex       int
}

// snapshotLister is what the cycle needs of *internalcache.Snapshot.
type snapshotLister interface {
	NumNodesInPlacement() int
	ListNodesInPlacement() ([]fwk.NodeInfo, error)
	GetNodeInPlacement(nodeName string) (fwk.NodeInfo, error)
}

func runBench(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "oracle: internal: panic: %s\n", oneLine(fmt.Sprint(p)))
			code = exitInternal
		}
	}()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var inputFile, placementsFile string
	var parallelism int
	fs.StringVar(&inputFile, "input", "-", "workload JSON file (- for stdin)")
	fs.StringVar(&placementsFile, "placements", "", "write one line per pod: namespace/name<TAB>node<TAB>message")
	fs.IntVar(&parallelism, "parallelism", 1, "the scheduler's parallelism")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "oracle: bench: %v\n", err)
		return exitBadInput
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "oracle: bench: unexpected arguments %q\n", fs.Args())
		return exitBadInput
	}
	if parallelism < 1 {
		fmt.Fprintln(stderr, "oracle: bench: --parallelism must be at least 1")
		return exitBadInput
	}
	var data []byte
	var err error
	if inputFile == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(inputFile)
	}
	if err != nil {
		return reportError(stderr, &inputError{source: inputFile, err: err})
	}
	var in benchInput
	if err := json.Unmarshal(data, &in); err != nil {
		return reportError(stderr, &inputError{source: inputFile, err: err})
	}
	data = nil
	out, placements, err := benchWorkload(&in, parallelism)
	if err != nil {
		return reportError(stderr, err)
	}
	if placementsFile != "" {
		if err := writePlacements(placementsFile, placements); err != nil {
			return reportError(stderr, err)
		}
	}
	text, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return reportError(stderr, err)
	}
	fmt.Fprintf(stdout, "%s\n", text)
	return exitOK
}

func writePlacements(path string, placements []Placement) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, p := range placements {
		node := p.Node
		if node == "" {
			node = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", p.Pod, node, oneLine(p.Message))
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// benchWorkload decodes the workload, sets up the scheduler (not timed), then
// schedules every pod in order (timed).
func benchWorkload(in *benchInput, parallelism int) (*BenchOutput, []Placement, error) {
	quietLogs()
	docs := make([]sourcedBytes, len(in.Cluster))
	for i, obj := range in.Cluster {
		docs[i] = sourcedBytes{source: fmt.Sprintf("cluster[%d]", i), data: obj}
	}
	cluster, err := decodeCluster(docs)
	if err != nil {
		return nil, nil, err
	}
	// The pods as the API server stores them (admission.go), like explain's.
	if err := admitCluster(cluster, nil, ""); err != nil {
		return nil, nil, err
	}
	admitter, err := newAdmitter(cluster)
	if err != nil {
		return nil, nil, err
	}
	defer admitter.close()
	pods := make([]*v1.Pod, len(in.Pods))
	for i, raw := range in.Pods {
		pod, err := decodeIncomingPod(sourcedBytes{source: fmt.Sprintf("pods[%d]", i), data: raw})
		if err != nil {
			return nil, nil, err
		}
		if err := admitter.admitPod(context.Background(), pod); err != nil {
			return nil, nil, &inputError{source: fmt.Sprintf("pods[%d]", i), err: err}
		}
		if pod.Status.NominatedNodeName != "" {
			return nil, nil, &inputError{source: fmt.Sprintf("pods[%d]", i), err: errors.New("status.nominatedNodeName is not supported by bench")}
		}
		if pod.UID == "" {
			pod.UID = types.UID(fmt.Sprintf("oracle-bench-%d", i))
		}
		pods[i] = pod
	}
	for i, p := range cluster.Pods {
		if p.UID == "" {
			p.UID = types.UID(fmt.Sprintf("oracle-pod-%d", i))
		}
	}
	var configData []byte
	configSource := "default configuration"
	if !isNullJSON(in.Config) {
		configData, configSource = in.Config, "config"
	}
	cfg, err := loadSchedulerConfig(configData)
	if err != nil {
		return nil, nil, &inputError{source: configSource, err: err}
	}
	cfg.Parallelism = int32(parallelism)
	schedulerName := v1.DefaultSchedulerName
	if len(pods) > 0 {
		schedulerName = pods[0].Spec.SchedulerName
	}
	for i, p := range pods {
		if p.Spec.SchedulerName != schedulerName {
			return nil, nil, &inputError{source: fmt.Sprintf("pods[%d]", i), err: fmt.Errorf("schedulerName %q: every pod must use the profile of the first (%q)", p.Spec.SchedulerName, schedulerName)}
		}
	}
	prof, err := profileFor(cfg, schedulerName)
	if err != nil {
		return nil, nil, &inputError{source: "pods", err: err}
	}

	logger := contextLogger()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()
	h, stop, err := startScheduler(ctx, cluster, cfg, prof)
	if err != nil {
		var pe *profileError
		if errors.As(err, &pe) {
			return nil, nil, &inputError{source: configSource, err: pe.err}
		}
		return nil, nil, err
	}
	defer stop()

	if err := publishPods(ctx, h.fw, pods); err != nil {
		return nil, nil, err
	}

	out := &BenchOutput{
		Name:              in.Name,
		KubernetesVersion: kubernetesVersion(),
		GoVersion:         runtime.Version(),
		GOMAXPROCS:        runtime.GOMAXPROCS(0),
		Parallelism:       parallelism,
		Nodes:             len(cluster.Nodes),
		ExistingPods:      len(cluster.Pods),
		Pods:              len(pods),
	}
	// The snapshot's node order (the cache's node tree) against the input order.
	listed, err := h.snapshot.ListNodesInPlacement()
	if err != nil {
		return nil, nil, err
	}
	out.NodeOrderMatchesInput = len(listed) == len(cluster.Nodes)
	for i := 0; i < len(listed) && i < len(cluster.Nodes); i++ {
		if listed[i].Node().Name != cluster.Nodes[i].Name {
			out.NodeOrderMatchesInput = false
			out.NodeOrderDifference = strPtr(fmt.Sprintf("position %d: snapshot has %s, input has %s", i, listed[i].Node().Name, cluster.Nodes[i].Name))
			break
		}
	}

	sched := &benchScheduler{fw: h.fw, snapshot: h.snapshot, percentageOfNodesToScore: derefInt32(cfg.PercentageOfNodesToScore)}
	placements := make([]Placement, len(pods))
	cpuBefore := cpuSeconds()
	start := time.Now()
	for i, pod := range pods {
		placements[i] = Placement{Pod: pod.Namespace + "/" + pod.Name}
		// schedulingCycle: refresh the snapshot from the cache, then run the algorithm.
		if err := h.cache.UpdateSnapshot(logger, h.snapshot); err != nil {
			return nil, nil, fmt.Errorf("updating snapshot: %w", err)
		}
		state := framework.NewCycleState()
		state.SetRecordPluginMetrics(false)
		state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
		host, err := sched.schedulePod(ctx, state, pod)
		if err != nil {
			placements[i].Message = sched.postFilter(ctx, state, pod, err)
			continue
		}
		// assumeAndReserve, then Permit (prepareForBindingCycle); no binding cycle.
		assumed := pod.DeepCopy()
		assumed.Spec.NodeName = host
		if err := h.cache.AssumePod(logger, assumed); err != nil {
			return nil, nil, fmt.Errorf("assuming pod %s: %w", placements[i].Pod, err)
		}
		if st := h.fw.RunReservePluginsReserve(ctx, state, assumed, host); !st.IsSuccess() {
			h.fw.RunReservePluginsUnreserve(ctx, state, assumed, host)
			if err := h.cache.ForgetPod(logger, assumed); err != nil {
				return nil, nil, err
			}
			placements[i].Message = st.Message()
			continue
		}
		if _, st := h.fw.RunPermitPlugins(ctx, state, assumed, host); !st.IsSuccess() {
			h.fw.RunReservePluginsUnreserve(ctx, state, assumed, host)
			if err := h.cache.ForgetPod(logger, assumed); err != nil {
				return nil, nil, err
			}
			placements[i].Message = st.Message()
			continue
		}
		placements[i].Node = host
		out.Scheduled++
	}
	elapsed := time.Since(start).Seconds()
	out.CPUSeconds = cpuSeconds() - cpuBefore
	out.Seconds = elapsed
	if elapsed > 0 {
		// Every pod went through one cycle, scheduled or not.
		out.PodsPerSecond = float64(len(pods)) / elapsed
	}
	out.PeakRSSMiB = peakRSSMiB()
	return out, placements, nil
}

// publishPods creates the pods to place in the (fake) API server and waits
// until the pod informer lists them all: DefaultPreemption re-reads the
// preemptor through the pod lister, as it finds it in a real cluster.
func publishPods(ctx context.Context, fh framework.Framework, pods []*v1.Pod) error {
	if !fh.HasPostFilterPlugins() {
		return nil
	}
	factory := fh.SharedInformerFactory()
	lister := factory.Core().V1().Pods().Lister()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for _, pod := range pods {
		if _, err := fh.ClientSet().CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s/%s in the fake API server: %w", pod.Namespace, pod.Name, err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, pod := range pods {
		for {
			if _, err := lister.Pods(pod.Namespace).Get(pod.Name); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the pod informer does not list pod %s/%s", pod.Namespace, pod.Name)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

func derefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// peakRSSMiB is the process's peak resident set size (Linux reports KiB).
// cpuSeconds is this process's user plus system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

// schedulePod mirrors Scheduler.schedulePod (pkg/scheduler/schedule_one.go)
// without extenders and without the nominated-node / batching-hint shortcut.
// The node is upstream's own choice: framework.NewSortedScoredNodes over the scores in
// feasible order (at parallelism 1, the order the search visited the nodes in), then
// Pop. Without extenders no Randomizer is set, so equal totals go by the heap's order.
func (s *benchScheduler) schedulePod(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (string, error) {
	if s.snapshot.NumNodesInPlacement() == 0 {
		return "", scheduler.ErrNoNodesAvailable
	}
	feasible, diagnosis, err := s.findNodesThatFitPod(ctx, state, pod)
	if err != nil {
		return "", err
	}
	if len(feasible) == 0 {
		return "", &framework.FitError{Pod: pod, NumAllNodes: s.snapshot.NumNodesInPlacement(), Diagnosis: diagnosis}
	}
	// When only one node after predicate, just use it.
	if len(feasible) == 1 {
		return feasible[0].Node().Name, nil
	}
	scores, err := s.prioritizeNodes(ctx, state, pod, feasible)
	if err != nil {
		return "", err
	}
	return framework.NewSortedScoredNodes(scores).Pop().Name, nil
}

// postFilter mirrors the failure path of Scheduler.schedulingAlgorithm: after a
// FitError the PostFilter plugins (DefaultPreemption) run and their message
// ends the FitError's. It returns the FailedScheduling message. A nomination
// is not acted upon (the bench never retries a pod); with pods of equal
// priority preemption finds no victims anyway.
func (s *benchScheduler) postFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, err error) string {
	var fitError *framework.FitError
	if !errors.As(err, &fitError) || !s.fw.HasPostFilterPlugins() {
		return err.Error()
	}
	_, status := s.fw.RunPostFilterPlugins(ctx, state, pod, fitError.Diagnosis.NodeToStatus)
	fitError.Diagnosis.PostFilterMsg = status.Message()
	return fitError.Error()
}

// findNodesThatFitPod mirrors Scheduler.findNodesThatFitPod, except that a
// PreFilterResult's node set is walked in snapshot order (upstream ranges
// over a Go map, so its order is random).
func (s *benchScheduler) findNodesThatFitPod(ctx context.Context, state fwk.CycleState, pod *v1.Pod) ([]fwk.NodeInfo, framework.Diagnosis, error) {
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	allNodes, err := s.snapshot.ListNodesInPlacement()
	if err != nil {
		return nil, diagnosis, err
	}
	preRes, st, unscheduledPlugins := s.fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unscheduledPlugins
	if !st.IsSuccess() {
		if !st.IsRejected() {
			return nil, diagnosis, st.AsError()
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(st)
		diagnosis.PreFilterMsg = st.Message()
		diagnosis.AddPluginStatus(st)
		return nil, diagnosis, nil
	}
	nodes := allNodes
	if !preRes.AllNodes() {
		nodes = make([]fwk.NodeInfo, 0, len(preRes.NodeNames))
		for _, ni := range allNodes {
			if preRes.NodeNames.Has(ni.Node().Name) {
				nodes = append(nodes, ni)
			}
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduledPlugins))))
	}
	feasible, err := s.findNodesThatPassFilters(ctx, state, pod, &diagnosis, nodes)
	processedNodes := len(feasible) + diagnosis.NodeToStatus.Len()
	s.nextStartNodeIndex = (s.nextStartNodeIndex + processedNodes) % len(allNodes)
	if err != nil {
		return nil, diagnosis, err
	}
	return feasible, diagnosis, nil
}

// findNodesThatPassFilters mirrors Scheduler.findNodesThatPassFilters (no
// extenders). With parallelism 1 the parallelizer checks the nodes one by
// one from nextStartNodeIndex and stops at the piece after the one that
// found numNodesToFind+1 feasible nodes.
func (s *benchScheduler) findNodesThatPassFilters(ctx context.Context, state fwk.CycleState, pod *v1.Pod, diagnosis *framework.Diagnosis, nodes []fwk.NodeInfo) ([]fwk.NodeInfo, error) {
	numAllNodes := len(nodes)
	numNodesToFind := s.numFeasibleNodesToFind(s.fw.PercentageOfNodesToScore(), int32(numAllNodes))
	if !s.fw.HasScorePlugins() {
		numNodesToFind = 1
	}
	feasibleNodes := make([]fwk.NodeInfo, numNodesToFind)
	if !s.fw.HasFilterPlugins() {
		for i := range feasibleNodes {
			feasibleNodes[i] = nodes[(s.nextStartNodeIndex+i)%numAllNodes]
		}
		return feasibleNodes, nil
	}
	errCh := parallelize.NewResultChannel[error]()
	var feasibleNodesLen int32
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(errors.New("findNodesThatPassFilters has completed"))
	type nodeStatus struct {
		node   string
		status *fwk.Status
	}
	result := make([]*nodeStatus, numAllNodes)
	checkNode := func(i int) {
		nodeInfo := nodes[(s.nextStartNodeIndex+i)%numAllNodes]
		status := s.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo)
		if status.Code() == fwk.Error {
			errCh.SendWithCancel(status.AsError(), func() {
				cancel(errors.New("some other Filter operation failed"))
			})
			return
		}
		if status.IsSuccess() {
			length := atomic.AddInt32(&feasibleNodesLen, 1)
			if length > numNodesToFind {
				cancel(errors.New("findNodesThatPassFilters has found enough nodes"))
				atomic.AddInt32(&feasibleNodesLen, -1)
			} else {
				feasibleNodes[length-1] = nodeInfo
			}
		} else {
			result[i] = &nodeStatus{node: nodeInfo.Node().Name, status: status}
		}
	}
	s.fw.Parallelizer().Until(ctx, numAllNodes, checkNode, metrics.Filter)
	feasibleNodes = feasibleNodes[:feasibleNodesLen]
	for _, item := range result {
		if item == nil {
			continue
		}
		diagnosis.NodeToStatus.Set(item.node, item.status)
		diagnosis.AddPluginStatus(item.status)
	}
	if err := errCh.Receive(); err != nil {
		return feasibleNodes, err
	}
	return feasibleNodes, nil
}

// numFeasibleNodesToFind is Scheduler.numFeasibleNodesToFind.
func (s *benchScheduler) numFeasibleNodesToFind(percentageOfNodesToScore *int32, numAllNodes int32) int32 {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	var percentage int32
	if percentageOfNodesToScore != nil {
		percentage = *percentageOfNodesToScore
	} else {
		percentage = s.percentageOfNodesToScore
	}
	if percentage == 0 {
		percentage = int32(50) - numAllNodes/125
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	numNodes := numAllNodes * percentage / 100
	if numNodes < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return numNodes
}

// prioritizeNodes mirrors prioritizeNodes (no extenders).
func (s *benchScheduler) prioritizeNodes(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, error) {
	if !s.fw.HasScorePlugins() {
		result := make([]fwk.NodePluginScores, 0, len(nodes))
		for i := range nodes {
			result = append(result, fwk.NodePluginScores{Name: nodes[i].Node().Name, TotalScore: 1})
		}
		return result, nil
	}
	if st := s.fw.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() {
		return nil, st.AsError()
	}
	nodesScores, st := s.fw.RunScorePlugins(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	return nodesScores, nil
}
