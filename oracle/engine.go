package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// Result is the JSON answer of `oracle explain` (and the "result" of a batch line).
type Result struct {
	Pod               string       `json:"pod"`
	KubernetesVersion string       `json:"kubernetesVersion"`
	SchedulerName     string       `json:"schedulerName"`
	Nodes             []NodeResult `json:"nodes"`
	SelectedNode      *string      `json:"selectedNode"`
	TiedNodes         []string     `json:"tiedNodes"`
	Message           *string      `json:"message"`
	// Preemption is what DefaultPreemption (PostFilter) decided when no node fits;
	// null when PostFilter did not run.
	Preemption *PreemptionResult `json:"preemption"`
	// NominatedNodeShortcut: the pod's status.nominatedNodeName passed the filters first
	// (evaluateNominatedNode), so the scheduler took it without searching or scoring.
	NominatedNodeShortcut bool `json:"nominatedNodeShortcut"`
	// Sampled is the same attempt with upstream's node search (see SampledResult), when
	// the request asked for it.
	Sampled *SampledResult `json:"sampled,omitempty"`

	postFilter *postFilterInput // set when the cycle ended in a FitError
}

// PreemptionResult: the nominated node (from RunPostFilterPlugins; null if none) and
// the victims of every candidate node of a dry run over the same nodes (offset 0).
type PreemptionResult struct {
	NominatedNode *string             `json:"nominatedNode"`
	Victims       map[string][]string `json:"victims"`
}

// NodeResult is the verdict for one Node of the cluster, in input order.
type NodeResult struct {
	Name   string       `json:"name"`
	Filter FilterResult `json:"filter"`
	// Scores holds each non-skipped score plugin's normalized score, before weighting.
	Scores map[string]int64 `json:"scores"`
	// TotalScore is the weighted sum the scheduler ranks by; null if not scored.
	TotalScore *int64 `json:"totalScore"`
}

// postFilterInput is what schedulingAlgorithm hands to PostFilter after a FitError.
type postFilterInput struct {
	state    fwk.CycleState
	fitError *framework.FitError
}

// FilterResult is the status of PreFilter/Filter for one node.
type FilterResult struct {
	Code    string   `json:"code"`
	Plugin  *string  `json:"plugin"`
	Reasons []string `json:"reasons"`
}

type scenarioInput struct {
	clusterDocs  []sourcedBytes
	podSource    string
	podData      []byte
	configSource string
	configData   []byte // nil: the default v1 configuration
	sampled      bool   // also run the cycle with upstream's node search (Result.Sampled)
}

// kubernetesVersion is the version of k8s.io/kubernetes this binary was built
// against, read from the build info so that go.mod stays the only place it is written.
var kubernetesVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				if dep.Replace != nil {
					return dep.Replace.Version
				}
				return dep.Version
			}
		}
	}
	return "unknown"
})

var setupOnce sync.Once

// quietLogs silences klog: upstream logs (informers, plugin setup) must not
// pollute stdout/stderr. Set ORACLE_KLOG=1 to keep them.
func quietLogs() {
	setupOnce.Do(func() {
		metrics.Register()
		if os.Getenv("ORACLE_KLOG") == "" {
			klog.SetOutput(io.Discard)
			klog.LogToStderr(false)
		}
	})
}

func contextLogger() logr.Logger {
	if os.Getenv("ORACLE_KLOG") != "" {
		return klog.Background()
	}
	return logr.Discard()
}

// explainInput decodes everything, then runs the scheduler.
func explainInput(in scenarioInput) (*Result, error) {
	quietLogs()
	cluster, err := decodeCluster(in.clusterDocs)
	if err != nil {
		return nil, err
	}
	pod, err := decodeIncomingPod(sourcedBytes{source: in.podSource, data: in.podData})
	if err != nil {
		return nil, err
	}
	if err := admitCluster(cluster, pod, in.podSource); err != nil {
		return nil, err
	}
	nominated, err := nominatedPods(in.clusterDocs, pod)
	if err != nil {
		return nil, err
	}
	configSource := in.configSource
	if in.configData == nil {
		configSource = "default configuration"
	}
	cfg, err := loadSchedulerConfig(in.configData)
	if err != nil {
		return nil, &inputError{source: configSource, err: err}
	}
	// Only the pods of this scheduler's profiles reach its queue (responsibleForPod).
	served := nominated[:0]
	for _, p := range nominated {
		if _, err := profileFor(cfg, p.Spec.SchedulerName); err == nil {
			served = append(served, p)
		}
	}
	nominated = served
	if err := admitPods(cluster, nominated); err != nil {
		return nil, &inputError{source: "cluster", err: err}
	}
	prof, err := profileFor(cfg, pod.Spec.SchedulerName)
	if err != nil {
		return nil, &inputError{source: in.podSource, err: err}
	}
	res, err := explain(cluster, nominated, pod, cfg, prof, configSource)
	if err != nil || !in.sampled {
		return res, err
	}
	// The pod and cluster as explain left them (uids given); a scheduler of its own.
	nominator, err := newPodNominator(nominated)
	if err != nil {
		return nil, err
	}
	if len(nominated) == 0 {
		nominator = nil
	}
	res.Sampled, err = runSampled(context.Background(), cluster, nominator, pod, cfg, prof)
	return res, err
}

// noActivation is the scheduling queue's Activate for a scheduler without a queue:
// DefaultPreemption's asynchronous part calls it when clearing lower-priority nominations
// fails (their pods are not in the fake API server) or the last victim goes in memory.
type noActivation struct{}

func (noActivation) Activate(klog.Logger, map[string]*v1.Pod) {}

// noNominatedPods is the scheduling queue's view of nominated pods when there are none.
type noNominatedPods struct{}

func (noNominatedPods) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (noNominatedPods) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (noNominatedPods) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (noNominatedPods) NominatedPodsForNode(string) []fwk.PodInfo                     { return nil }

// explain runs one scheduling attempt for pod on cluster with the given profile,
// evaluating every node, and reports per-node verdicts. nominated are the pending
// pods the scheduling queue's nominator holds. configSource names the configuration
// in error messages.
func explain(cluster *Cluster, nominated []*v1.Pod, pod *v1.Pod, cfg *config.KubeSchedulerConfiguration, prof *config.KubeSchedulerProfile, configSource string) (*Result, error) {
	logger := contextLogger()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()

	// The cache keys pods by UID; objects written by hand often have none.
	if pod.UID == "" {
		pod.UID = types.UID("oracle-incoming-" + pod.Namespace + "-" + pod.Name)
	}
	for i, p := range cluster.Pods {
		if p.UID == "" {
			p.UID = types.UID(fmt.Sprintf("oracle-pod-%d", i))
		}
	}
	for i, p := range nominated {
		if p.UID == "" {
			p.UID = types.UID(fmt.Sprintf("oracle-nominated-%d", i))
		}
	}
	nominator, err := newPodNominator(nominated)
	if err != nil {
		return nil, &inputError{source: "cluster", err: err}
	}

	cluster.Incoming = pod
	h, stop, err := startScheduler(ctx, cluster, cfg, prof)
	if err != nil {
		var pe *profileError
		if errors.As(err, &pe) {
			return nil, &inputError{source: configSource, err: pe.err}
		}
		return nil, err
	}
	defer stop()
	if len(nominated) > 0 {
		h.fw.SetPodNominator(nominator)
	}

	res := &Result{
		Pod:               pod.Namespace + "/" + pod.Name,
		KubernetesVersion: kubernetesVersion(),
		SchedulerName:     prof.SchedulerName,
		Nodes:             make([]NodeResult, len(cluster.Nodes)),
		TiedNodes:         []string{},
	}
	runCycle(ctx, h.fw, h.snapshot, pod, cluster.Nodes, res)
	if res.postFilter != nil {
		runPostFilter(ctx, h, pod, res)
	}
	return res, nil
}

// profileError: the profile could not be turned into a framework.
type profileError struct{ err error }

func (e *profileError) Error() string { return e.err.Error() }

// schedulerHarness is one profile's framework over a snapshot of the cluster.
type schedulerHarness struct {
	fw       framework.Framework
	snapshot *internalcache.Snapshot
	cache    internalcache.Cache // the cache behind snapshot (bench assumes pods into it)
	// preemption is the profile's DefaultPreemption instance (nil if not enabled), its
	// eviction replaced by a no-op so that PostFilter decides without side effects.
	preemption *defaultpreemption.DefaultPreemption
}

// dryRunPreemptionRegistry is the in-tree registry whose DefaultPreemption is upstream's,
// built by upstream's New, with Executor.PreemptPod (the DisruptionTarget patch and the
// delete call) replaced by a no-op; the instance is recorded in *captured.
func dryRunPreemptionRegistry(captured **defaultpreemption.DefaultPreemption) frameworkruntime.Registry {
	r := frameworkplugins.NewInTreeRegistry()
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	r[defaultpreemption.Name] = func(ctx context.Context, args runtime.Object, fh fwk.Handle) (fwk.Plugin, error) {
		pl, err := defaultpreemption.New(ctx, args, fh, fts)
		if err != nil {
			return nil, err
		}
		pl.Executor.PreemptPod = func(context.Context, preemption.Candidate, preemption.ExecutorPreemptor, *v1.Pod, string) (bool, error) {
			return false, nil
		}
		*captured = pl
		return pl, nil
	}
	return r
}

// startScheduler sets up what kube-scheduler's scheduler.New sets up for one
// profile: informers over a (fake) API server, the shared DRA and CSI
// managers, the cache fed with the nodes and assigned pods, its snapshot, and
// the framework. stop releases everything (its goroutines end).
func startScheduler(ctx context.Context, cluster *Cluster, cfg *config.KubeSchedulerConfiguration, prof *config.KubeSchedulerProfile) (_ *schedulerHarness, stop func(), _ error) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	var cleanups []func()
	stop = func() {
		cancel() // informers, cache and metrics goroutines stop with ctx
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	fail := func(err error) (*schedulerHarness, func(), error) {
		stop()
		return nil, func() {}, err
	}

	// The workload objects PodTopologySpread's default constraints look up.
	var objs []runtime.Object
	for _, o := range cluster.Services {
		objs = append(objs, o)
	}
	for _, o := range cluster.RCs {
		objs = append(objs, o)
	}
	for _, o := range cluster.ReplicaSets {
		objs = append(objs, o)
	}
	for _, o := range cluster.StatefulSets {
		objs = append(objs, o)
	}
	// InterPodAffinity resolves namespaceSelectors through the Namespace lister.
	for _, o := range cluster.Namespaces {
		objs = append(objs, o)
	}
	// DefaultPreemption lists PDBs and re-reads the preemptor through the pod lister.
	for _, o := range cluster.PDBs {
		objs = append(objs, o)
	}
	// The volume plugins list and get claims, volumes, classes and CSI objects.
	objs = append(objs, cluster.Storage...)
	objs = append(objs, cluster.DRA...)
	if cluster.Incoming != nil {
		objs = append(objs, cluster.Incoming)
	}
	client := fake.NewClientset(objs...)
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	cleanups = append(cleanups, informerFactory.Shutdown)

	var draManager fwk.SharedDRAManager
	if utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		claimCache := assumecache.NewAssumeCache(logger, informerFactory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
		trackerOpts := resourceslicetracker.Options{
			EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
			EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
			SliceInformer:            informerFactory.Resource().V1().ResourceSlices(),
			KubeClient:               client,
		}
		if trackerOpts.EnableDeviceTaintRules {
			trackerOpts.TaintInformer = informerFactory.Resource().V1().DeviceTaintRules()
		}
		tracker, err := resourceslicetracker.StartTracker(ctx, trackerOpts)
		if err != nil {
			return fail(fmt.Errorf("starting resource slice tracker: %w", err))
		}
		draManager = dynamicresources.NewDRAManager(ctx, claimCache, tracker, informerFactory)
	}
	csiManager := nodevolumelimits.NewCSIManager(informerFactory.Storage().V1().CSINodes().Lister())

	// Nodes and assigned pods go through the scheduler cache, as the
	// scheduler's event handlers would add them, then into a snapshot.
	schedCache := internalcache.New(ctx, nil,
		utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup))
	for _, n := range cluster.Nodes {
		schedCache.AddNode(logger, n)
	}
	for _, p := range cluster.Pods {
		// kube-scheduler's pod informer never sees terminated pods.
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if err := schedCache.AddPod(logger, p); err != nil {
			return fail(&inputError{source: "cluster", err: fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)})
		}
	}
	snapshot := internalcache.NewEmptySnapshot()
	if err := schedCache.UpdateSnapshot(logger, snapshot); err != nil {
		return fail(fmt.Errorf("updating snapshot: %w", err))
	}

	var preemptionPlugin *defaultpreemption.DefaultPreemption
	fw, err := frameworkruntime.NewFramework(ctx, dryRunPreemptionRegistry(&preemptionPlugin), prof,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(informerFactory),
		frameworkruntime.WithSharedDRAManager(draManager),
		frameworkruntime.WithSharedCSIManager(csiManager),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithParallelism(int(cfg.Parallelism)),
		frameworkruntime.WithPodGroupManager(schedCache),
		frameworkruntime.WithPodActivator(noActivation{}),
		frameworkruntime.WithLogger(logger),
	)
	if err != nil {
		return fail(&profileError{err: fmt.Errorf("profile %q: %w", prof.SchedulerName, err)})
	}
	cleanups = append(cleanups, func() { _ = fw.Close() })
	fw.SetPodNominator(noNominatedPods{})

	informerFactory.Start(ctx.Done())
	for typ, ok := range informerFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fail(fmt.Errorf("informer for %v did not sync", typ))
		}
	}
	if err := waitForDRA(ctx, draManager, cluster); err != nil {
		return fail(err)
	}
	return &schedulerHarness{fw: fw, snapshot: snapshot, cache: schedCache, preemption: preemptionPlugin}, stop, nil
}

func strPtr(s string) *string { return &s }

func statusResult(s *fwk.Status) FilterResult {
	r := FilterResult{Code: s.Code().String(), Reasons: []string{}}
	if s == nil {
		return r
	}
	if p := s.Plugin(); p != "" {
		r.Plugin = strPtr(p)
	}
	r.Reasons = append(r.Reasons, s.Reasons()...)
	return r
}

// runCycle mirrors Scheduler.schedulePod / findNodesThatFitPod /
// findNodesThatPassFilters / prioritizeNodes, except that every node is
// evaluated, scoring always runs when something fits, and ties are broken
// by input order instead of at random.
func runCycle(ctx context.Context, fw framework.Framework, snapshot *internalcache.Snapshot, pod *v1.Pod, inputNodes []*v1.Node, res *Result) {
	for i, n := range inputNodes {
		res.Nodes[i] = NodeResult{Name: n.Name, Filter: statusResult(nil), Scores: map[string]int64{}}
	}
	setAll := func(s *fwk.Status) {
		for i := range res.Nodes {
			res.Nodes[i].Filter = statusResult(s)
		}
	}

	numAllNodes := snapshot.NumNodesInPlacement()
	if numAllNodes == 0 {
		res.Message = strPtr(scheduler.ErrNoNodesAvailable.Error())
		return
	}
	nodeInfos := make([]fwk.NodeInfo, len(inputNodes))
	for i, n := range inputNodes {
		ni, err := snapshot.GetNodeInPlacement(n.Name)
		if err != nil {
			// Cannot happen: every input node is in the snapshot.
			res.Message = strPtr(fmt.Sprintf("node %q missing from snapshot: %v", n.Name, err))
			setAll(fwk.AsStatus(errors.New(*res.Message)))
			return
		}
		nodeInfos[i] = ni
	}

	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())

	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	fitError := func() {
		fe := &framework.FitError{Pod: pod, NumAllNodes: numAllNodes, Diagnosis: diagnosis}
		res.Message = strPtr(fe.Error())
		res.postFilter = &postFilterInput{state: state, fitError: fe}
	}

	// PreFilter.
	preRes, s, unscheduledPlugins := fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unscheduledPlugins
	if !s.IsSuccess() {
		if !s.IsRejected() {
			msg := s.AsError().Error()
			setAll(fwk.AsStatus(errors.New(msg)).WithPlugin(s.Plugin()))
			res.Message = strPtr(msg)
			return
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
		diagnosis.AddPluginStatus(s)
		setAll(s)
		fitError()
		return
	}

	// findNodesThatFitPod tries a nominated node first (evaluateNominatedNode): only that
	// node is filtered, whatever PreFilter's node set; if it passes, schedulePod takes it
	// as the lone feasible node, unscored. The rest of the nodes are still evaluated below
	// for the report (explain evaluates every node) but decide nothing.
	nominated := -1
	if nnn := pod.Status.NominatedNodeName; nnn != "" {
		for i, n := range inputNodes {
			if n.Name == nnn {
				st := (*fwk.Status)(nil)
				if fw.HasFilterPlugins() {
					st = fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfos[i])
				}
				if st.IsSuccess() {
					nominated = i
				} else if st.Code() != fwk.Error {
					diagnosis.NodeToStatus.Set(nnn, st)
					diagnosis.AddPluginStatus(st)
				}
			}
		}
	}
	takeNominated := func() bool {
		if nominated < 0 {
			return false
		}
		res.Nodes[nominated].Filter = statusResult(nil)
		res.SelectedNode = strPtr(inputNodes[nominated].Name)
		res.TiedNodes = []string{inputNodes[nominated].Name}
		res.NominatedNodeShortcut = true
		return true
	}

	// Nodes a PreFilterResult leaves out are UnschedulableAndUnresolvable.
	candidates := make([]int, 0, len(nodeInfos))
	if preRes.AllNodes() {
		for i := range nodeInfos {
			candidates = append(candidates, i)
		}
	} else {
		absent := fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduledPlugins)))
		diagnosis.NodeToStatus.SetAbsentNodesStatus(absent)
		for i, ni := range nodeInfos {
			if preRes.NodeNames.Has(ni.Node().Name) {
				candidates = append(candidates, i)
			} else {
				res.Nodes[i].Filter = statusResult(absent)
			}
		}
	}

	// Filter, on every candidate.
	statuses := make([]*fwk.Status, len(candidates))
	if fw.HasFilterPlugins() {
		fw.Parallelizer().Until(ctx, len(candidates), func(k int) {
			statuses[k] = fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfos[candidates[k]])
		}, metrics.Filter)
	}
	var feasible []int // indexes into inputNodes, in input order
	var filterErr error
	for k, i := range candidates {
		st := statuses[k]
		res.Nodes[i].Filter = statusResult(st)
		switch {
		case st.IsSuccess():
			feasible = append(feasible, i)
		case st.Code() == fwk.Error:
			if filterErr == nil {
				filterErr = st.AsError()
			}
		default:
			diagnosis.NodeToStatus.Set(inputNodes[i].Name, st)
			diagnosis.AddPluginStatus(st)
		}
	}
	if takeNominated() {
		return
	}
	if filterErr != nil {
		res.Message = strPtr(filterErr.Error())
		return
	}
	if len(feasible) == 0 {
		fitError()
		return
	}

	// Score every feasible node, even a lone one.
	totals := make([]int64, len(feasible))
	if !fw.HasScorePlugins() {
		for k := range feasible {
			totals[k] = 1
		}
	} else {
		feasibleInfos := make([]fwk.NodeInfo, len(feasible))
		for k, i := range feasible {
			feasibleInfos[k] = nodeInfos[i]
		}
		if st := fw.RunPreScorePlugins(ctx, state, pod, feasibleInfos); !st.IsSuccess() {
			res.Message = strPtr(st.AsError().Error())
			return
		}
		nodeScores, st := fw.RunScorePlugins(ctx, state, pod, feasibleInfos)
		if !st.IsSuccess() {
			res.Message = strPtr(st.AsError().Error())
			return
		}
		weights := map[string]int64{}
		for _, p := range fw.ListPlugins().Score.Enabled {
			weights[p.Name] = int64(p.Weight)
		}
		for k, i := range feasible {
			ns := nodeScores[k]
			for _, ps := range ns.Scores {
				w := weights[ps.Name]
				if w == 0 {
					w = 1
				}
				res.Nodes[i].Scores[ps.Name] = ps.Score / w
			}
			totals[k] = ns.TotalScore
		}
	}
	best := totals[0]
	for _, t := range totals {
		if t > best {
			best = t
		}
	}
	scored := make([]fwk.NodePluginScores, len(feasible))
	for k, i := range feasible {
		t := totals[k]
		res.Nodes[i].TotalScore = &t
		if t == best {
			res.TiedNodes = append(res.TiedNodes, inputNodes[i].Name)
		}
		scored[k] = fwk.NodePluginScores{Name: inputNodes[i].Name, TotalScore: t}
	}
	// Upstream's own choice over the scores in (input) order: NewSortedScoredNodes, Pop.
	// Without extenders no Randomizer is set, so equal totals go by the heap's order.
	res.SelectedNode = strPtr(framework.NewSortedScoredNodes(scored).Pop().Name)
}

// runPostFilter mirrors schedulingAlgorithm after a FitError: RunPostFilterPlugins with
// the diagnosis' NodeToStatus, the PostFilter message appended to the FitError. The
// victims come from upstream's DryRunPreemption over the nodes findCandidates would
// pick, at offset 0 (upstream: a random offset), on a clone of the cycle state.
func runPostFilter(ctx context.Context, h *schedulerHarness, pod *v1.Pod, res *Result) {
	in := res.postFilter
	if !h.fw.HasPostFilterPlugins() {
		return
	}
	// RunPostFilterPlugins first, as schedulingAlgorithm's caller does: the report's own
	// dry run below filters on a clone of the cycle state, and some plugins' Clone returns
	// the same object (DynamicResources' stateData), so running it first would leak its
	// Filter calls (unavailable claims) into DynamicResources' PostFilter.
	result, status := h.fw.RunPostFilterPlugins(ctx, in.state, pod, in.fitError.Diagnosis.NodeToStatus)
	in.fitError.Diagnosis.PostFilterMsg = status.Message()
	res.Message = strPtr(in.fitError.Error())
	pr := &PreemptionResult{Victims: map[string][]string{}}
	// The instance exists whenever the profile enables DefaultPreemption anywhere
	// (PreEnqueue too); its victims are reported only where it runs as a PostFilter.
	if pl := h.preemption; pl != nil && postFilterEnabled(h.fw, defaultpreemption.Name) {
		m := in.fitError.Diagnosis.NodeToStatus
		if ok, _ := pl.PodEligibleToPreemptOthers(ctx, pod, m.Get(pod.Status.NominatedNodeName)); ok {
			nodes, err := m.NodesForStatusCode(h.snapshot.NodeInfos(), fwk.Unschedulable)
			if err == nil && len(nodes) > 0 {
				var pdbs []*policyv1.PodDisruptionBudget
				if pl.Evaluator.PdbLister != nil {
					pdbs, _ = pl.Evaluator.PdbLister.List(labels.Everything())
				}
				_, num := pl.GetOffsetAndNumCandidates(int32(len(nodes)))
				candidates, _, _ := pl.Evaluator.DryRunPreemption(ctx, in.state.Clone(), pod, nodes, pdbs, 0, num)
				for _, c := range candidates {
					keys := []string{}
					for _, p := range c.Victims().Pods {
						keys = append(keys, p.Namespace+"/"+p.Name)
					}
					pr.Victims[c.Name()] = keys
				}
			}
		}
	}
	if result != nil && result.NominatingInfo != nil && result.NominatedNodeName != "" {
		pr.NominatedNode = strPtr(result.NominatedNodeName)
	}
	res.Preemption = pr
}

// postFilterEnabled: the profile runs the named plugin at PostFilter.
func postFilterEnabled(fw framework.Framework, name string) bool {
	for _, p := range fw.ListPlugins().PostFilter.Enabled {
		if p.Name == name {
			return true
		}
	}
	return false
}

// VersionInfo is what `oracle version` prints.
type VersionInfo struct {
	KubernetesVersion string          `json:"kubernetesVersion"`
	FeatureGates      map[string]bool `json:"featureGates"`
}

// versionInfo reports the effective state of every feature gate known to
// the default feature gate (the scheduler's defaults at this version).
func versionInfo() VersionInfo {
	v := VersionInfo{KubernetesVersion: kubernetesVersion(), FeatureGates: map[string]bool{}}
	for f := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		v.FeatureGates[string(f)] = utilfeature.DefaultFeatureGate.Enabled(f)
	}
	return v
}
