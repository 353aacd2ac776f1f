package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"sigs.k8s.io/yaml"
)

const engineProfile = "testdata/engine-profile.yaml"

// runCLI runs the oracle in-process and returns exit code, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func explainJSON(t *testing.T, args ...string) *Result {
	t.Helper()
	code, out, errOut := runCLI(t, "", append([]string{"explain"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("unexpected stderr: %q", errOut)
	}
	var r Result
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("bad JSON output: %v\n%s", err, out)
	}
	return &r
}

type wantNode struct {
	code, plugin, reason string
	feasible             bool
}

func checkNodes(t *testing.T, r *Result, want map[string]wantNode, order []string) {
	t.Helper()
	var got []string
	for _, n := range r.Nodes {
		got = append(got, n.Name)
		w, ok := want[n.Name]
		if !ok {
			t.Errorf("unexpected node %q", n.Name)
			continue
		}
		if n.Filter.Code != w.code {
			t.Errorf("%s: code %q, want %q", n.Name, n.Filter.Code, w.code)
		}
		gotPlugin := ""
		if n.Filter.Plugin != nil {
			gotPlugin = *n.Filter.Plugin
		}
		if gotPlugin != w.plugin {
			t.Errorf("%s: plugin %q, want %q", n.Name, gotPlugin, w.plugin)
		}
		var wantReasons []string
		if w.reason != "" {
			wantReasons = []string{w.reason}
		}
		if len(n.Filter.Reasons) != len(wantReasons) || (len(wantReasons) > 0 && n.Filter.Reasons[0] != w.reason) {
			t.Errorf("%s: reasons %q, want %q", n.Name, n.Filter.Reasons, wantReasons)
		}
		if (n.TotalScore != nil) != w.feasible {
			t.Errorf("%s: totalScore %v, feasible %v", n.Name, n.TotalScore, w.feasible)
		}
		if !w.feasible && len(n.Scores) != 0 {
			t.Errorf("%s: infeasible node has scores %v", n.Name, n.Scores)
		}
	}
	if !reflect.DeepEqual(got, order) {
		t.Errorf("node order %q, want %q", got, order)
	}
}

const (
	notMatch     = "node(s) didn't match pod topology spread constraints"
	missingLabel = "node(s) didn't match pod topology spread constraints (missing required label)"
	pts          = "PodTopologySpread"
)

func TestDocsExample(t *testing.T) {
	r := explainJSON(t, "--cluster", "testdata/docs-example-cluster.yaml",
		"--pod", "testdata/docs-example-pod.yaml", "--config", engineProfile)
	if r.Pod != "default/mypod" {
		t.Errorf("pod %q", r.Pod)
	}
	if r.KubernetesVersion != kubernetesVersion() || !strings.HasPrefix(r.KubernetesVersion, "v1.") {
		t.Errorf("kubernetesVersion %q", r.KubernetesVersion)
	}
	checkNodes(t, r, map[string]wantNode{
		"node1": {"Unschedulable", pts, notMatch, false},
		"node2": {"Unschedulable", pts, notMatch, false},
		"node3": {"Success", "", "", true},
		"node4": {"Success", "", "", true},
	}, []string{"node1", "node2", "node3", "node4"})
	// No soft constraints: PodTopologySpread skips at PreScore, nothing scores.
	for _, n := range r.Nodes[2:] {
		if len(n.Scores) != 0 || *n.TotalScore != 0 {
			t.Errorf("%s: scores %v total %d", n.Name, n.Scores, *n.TotalScore)
		}
	}
	if r.SelectedNode == nil || *r.SelectedNode != "node3" {
		t.Errorf("selected %v, want node3", r.SelectedNode)
	}
	if !reflect.DeepEqual(r.TiedNodes, []string{"node3", "node4"}) {
		t.Errorf("tied %q", r.TiedNodes)
	}
	if r.Message != nil {
		t.Errorf("message %q", *r.Message)
	}
}

func TestNodeMissingTopologyKey(t *testing.T) {
	r := explainJSON(t, "--cluster", "testdata/docs-example-cluster.yaml",
		"--cluster", "testdata/extra-node-without-zone.yaml",
		"--pod", "testdata/docs-example-pod.yaml", "--config", engineProfile)
	checkNodes(t, r, map[string]wantNode{
		"node1": {"Unschedulable", pts, notMatch, false},
		"node2": {"Unschedulable", pts, notMatch, false},
		"node3": {"Success", "", "", true},
		"node4": {"Success", "", "", true},
		"node5": {"UnschedulableAndUnresolvable", pts, missingLabel, false},
	}, []string{"node1", "node2", "node3", "node4", "node5"})
}

func TestNoFeasibleNodeFitErrorMessage(t *testing.T) {
	r := explainJSON(t, "--cluster", "testdata/mindomains-cluster.json",
		"--pod", "testdata/mindomains-pod.yaml", "--config", engineProfile)
	checkNodes(t, r, map[string]wantNode{
		"a1":     {"Unschedulable", pts, notMatch, false},
		"a2":     {"Unschedulable", pts, notMatch, false},
		"b1":     {"Unschedulable", pts, notMatch, false},
		"nozone": {"UnschedulableAndUnresolvable", pts, missingLabel, false},
	}, []string{"a1", "a2", "b1", "nozone"})
	want := "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), 3 node(s) didn't match pod topology spread constraints."
	if r.Message == nil || *r.Message != want {
		t.Errorf("message %v\nwant %q", r.Message, want)
	}
	if r.SelectedNode != nil || len(r.TiedNodes) != 0 {
		t.Errorf("selected %v tied %q", r.SelectedNode, r.TiedNodes)
	}
}

func TestDefaultProfileScoresEveryFeasibleNode(t *testing.T) {
	r := explainJSON(t, "--cluster", "testdata/docs-example-cluster.yaml",
		"--pod", "testdata/docs-example-pod.yaml")
	for _, n := range r.Nodes[2:] {
		if _, ok := n.Scores["NodeResourcesFit"]; !ok {
			t.Errorf("%s: default profile should score with NodeResourcesFit: %v", n.Name, n.Scores)
		}
	}
	// node4 is empty, so the least-allocated strategy prefers it.
	if r.SelectedNode == nil || *r.SelectedNode != "node4" {
		t.Errorf("selected %v, want node4", r.SelectedNode)
	}
}

func TestBadInput(t *testing.T) {
	bad := t.TempDir() + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Pod\nmetadata: [oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dup := t.TempDir() + "/dup.yaml"
	twoServices := "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n" +
		"apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: default}\n"
	if err := os.WriteFile(dup, []byte(twoServices), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"duplicate":    {"--cluster", dup, "--pod", "testdata/docs-example-pod.yaml"},
		"missing file": {"--cluster", "testdata/nope.yaml", "--pod", "testdata/docs-example-pod.yaml"},
		"bad yaml":     {"--cluster", bad, "--pod", "testdata/docs-example-pod.yaml"},
		"no pod":       {"--cluster", "testdata/docs-example-cluster.yaml"},
		"three pods":   {"--pod", "testdata/docs-example-cluster.yaml"},
		"not a config": {"--pod", "testdata/docs-example-pod.yaml", "--config", "testdata/docs-example-pod.yaml"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"explain"}, args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "oracle: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d stdout %q stderr %q", name, code, out, errOut)
		}
	}
}

func yamlFileToJSON(t *testing.T, path string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestBatchRoundTrip(t *testing.T) {
	// Same scenario as TestNodeMissingTopologyKey, as one batch line.
	var clusterList struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(yamlFileToJSON(t, "testdata/docs-example-cluster.yaml"), &clusterList); err != nil {
		t.Fatal(err)
	}
	docsPods := `[
	  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod1","namespace":"default","labels":{"foo":"bar"}},"spec":{"nodeName":"node1","containers":[{"name":"c","image":"pause"}]}},
	  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod2","namespace":"default","labels":{"foo":"bar"}},"spec":{"nodeName":"node2","containers":[{"name":"c","image":"pause"}]}},
	  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod3","namespace":"default","labels":{"foo":"bar"}},"spec":{"nodeName":"node3","containers":[{"name":"c","image":"pause"}]}}]`
	var pods []json.RawMessage
	if err := json.Unmarshal([]byte(docsPods), &pods); err != nil {
		t.Fatal(err)
	}
	cluster := append(append(clusterList.Items, pods...), yamlFileToJSON(t, "testdata/extra-node-without-zone.yaml"))

	lines := []any{
		map[string]any{"id": "with-config", "cluster": cluster,
			"pod": yamlFileToJSON(t, "testdata/docs-example-pod.yaml"), "config": yamlFileToJSON(t, engineProfile)},
		map[string]any{"id": 7, "cluster": cluster,
			"pod": yamlFileToJSON(t, "testdata/docs-example-pod.yaml"), "config": nil},
		map[string]any{"id": "bad-pod", "cluster": cluster, "pod": map[string]any{"kind": "Pod", "apiVersion": "v9"}},
	}
	var in strings.Builder
	for _, l := range lines {
		b, _ := json.Marshal(l)
		in.Write(b)
		in.WriteString("\n\n") // blank lines are skipped
	}
	in.WriteString("not json\n")

	code, out, errOut := runCLI(t, in.String(), "batch")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	outLines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(outLines) != 4 {
		t.Fatalf("got %d output lines, want 4:\n%s", len(outLines), out)
	}
	var resps []struct {
		ID     json.RawMessage `json:"id"`
		Result *Result         `json:"result"`
		Error  *string         `json:"error"`
	}
	for _, l := range outLines {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result *Result         `json:"result"`
			Error  *string         `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		resps = append(resps, r)
	}

	// The batch answer must equal the explain answer for the same files.
	want := explainJSON(t, "--cluster", "testdata/docs-example-cluster.yaml",
		"--cluster", "testdata/extra-node-without-zone.yaml",
		"--pod", "testdata/docs-example-pod.yaml", "--config", engineProfile)
	if string(resps[0].ID) != `"with-config"` || resps[0].Error != nil || !reflect.DeepEqual(resps[0].Result, want) {
		t.Errorf("line 1: id %s error %v\n got %+v\nwant %+v", resps[0].ID, resps[0].Error, resps[0].Result, want)
	}
	wantDefault := explainJSON(t, "--cluster", "testdata/docs-example-cluster.yaml",
		"--cluster", "testdata/extra-node-without-zone.yaml",
		"--pod", "testdata/docs-example-pod.yaml")
	if string(resps[1].ID) != "7" || resps[1].Error != nil || !reflect.DeepEqual(resps[1].Result, wantDefault) {
		t.Errorf("line 2: id %s error %v\n got %+v\nwant %+v", resps[1].ID, resps[1].Error, resps[1].Result, wantDefault)
	}
	if string(resps[2].ID) != `"bad-pod"` || resps[2].Error == nil || resps[2].Result != nil ||
		!strings.HasPrefix(*resps[2].Error, "pod: ") {
		t.Errorf("line 3: %s %v", resps[2].ID, resps[2].Error)
	}
	if string(resps[3].ID) != "null" || resps[3].Error == nil {
		t.Errorf("line 4: %s %v", resps[3].ID, resps[3].Error)
	}
}

func TestIgnoredPods(t *testing.T) {
	// Were the finished pod on node4 counted, both zones would hold two
	// matching pods and every node would fit.
	r := explainJSON(t, "--cluster", "testdata/docs-example-cluster.yaml",
		"--cluster", "testdata/ignored-pods.yaml",
		"--pod", "testdata/docs-example-pod.yaml", "--config", engineProfile)
	checkNodes(t, r, map[string]wantNode{
		"node1": {"Unschedulable", pts, notMatch, false},
		"node2": {"Unschedulable", pts, notMatch, false},
		"node3": {"Success", "", "", true},
		"node4": {"Success", "", "", true},
	}, []string{"node1", "node2", "node3", "node4"})
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "version")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var v VersionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.KubernetesVersion != kubernetesVersion() {
		t.Errorf("version %q", v.KubernetesVersion)
	}
	// The gates PodTopologySpread reads, at their v1.37 defaults.
	for gate, want := range map[string]bool{
		"NodeInclusionPolicyInPodTopologySpread": true,
		"MatchLabelKeysInPodTopologySpread":      true,
		"TaintTolerationComparisonOperators":     false,
	} {
		if got, ok := v.FeatureGates[gate]; !ok || got != want {
			t.Errorf("feature gate %s = %v (known %v), want %v", gate, got, ok, want)
		}
	}
}

// pluginOrder lists the plugins of one extension point, keeping only names in keep.
func pluginOrder(plugins []config.Plugin, keep map[string]bool) []string {
	var names []string
	for _, p := range plugins {
		if keep[p.Name] {
			names = append(names, p.Name)
		}
	}
	return names
}

// The engine profile must run its six filter plugins exactly where and in
// the order the default profile runs them, and PodTopologySpread alone at
// PreScore and Score.
func TestEngineProfileMatchesDefaultProfile(t *testing.T) {
	listPlugins := func(data []byte) *config.Plugins {
		t.Helper()
		cfg, err := loadSchedulerConfig(data)
		if err != nil {
			t.Fatal(err)
		}
		prof, err := profileFor(cfg, "default-scheduler")
		if err != nil {
			t.Fatal(err)
		}
		h, stop, err := startScheduler(context.Background(), &Cluster{}, cfg, prof)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		return h.fw.ListPlugins()
	}
	engineData, err := os.ReadFile(engineProfile)
	if err != nil {
		t.Fatal(err)
	}
	engine, def := listPlugins(engineData), listPlugins(nil)

	filters := map[string]bool{}
	for _, p := range engine.Filter.Enabled {
		filters[p.Name] = true
	}
	want := []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread"}
	if got := pluginOrder(engine.Filter.Enabled, filters); !reflect.DeepEqual(got, want) {
		t.Errorf("engine filters %q, want %q", got, want)
	}
	for name, ep := range map[string][2][]config.Plugin{
		"PreFilter": {engine.PreFilter.Enabled, def.PreFilter.Enabled},
		"Filter":    {engine.Filter.Enabled, def.Filter.Enabled},
	} {
		got, wantOrder := pluginOrder(ep[0], filters), pluginOrder(ep[1], filters)
		if !reflect.DeepEqual(got, wantOrder) || len(got) != len(ep[0]) {
			t.Errorf("%s: engine %q, default profile %q", name, got, wantOrder)
		}
	}
	pts := map[string]bool{"PodTopologySpread": true}
	if len(engine.PreScore.Enabled) != 1 || len(pluginOrder(engine.PreScore.Enabled, pts)) != 1 {
		t.Errorf("PreScore: %v", engine.PreScore.Enabled)
	}
	if len(engine.Score.Enabled) != 1 || engine.Score.Enabled[0].Name != "PodTopologySpread" || engine.Score.Enabled[0].Weight != 2 {
		t.Errorf("Score: %v", engine.Score.Enabled)
	}
}

// Raw API list responses (a JSON stream here) carry no kind on their items.
func TestRawAPILists(t *testing.T) {
	r := explainJSON(t, "--cluster", "testdata/raw-api-lists.json",
		"--pod", "testdata/docs-example-pod.yaml", "--config", engineProfile)
	checkNodes(t, r, map[string]wantNode{
		"a": {"Unschedulable", pts, notMatch, false},
		"b": {"Success", "", "", true},
	}, []string{"a", "b"})
}

func TestNamespaceSelectorSeesNamespaces(t *testing.T) {
	// The Namespace objects reach InterPodAffinity's namespace lister: the
	// selector team=x picks namespace "shop", whose web pod is on node1.
	r := explainJSON(t, "--cluster", "testdata/namespace-selector-cluster.yaml",
		"--pod", "testdata/namespace-selector-pod.yaml")
	checkNodes(t, r, map[string]wantNode{
		"node1": {"Success", "", "", true},
		"node2": {"UnschedulableAndUnresolvable", "InterPodAffinity", "node(s) didn't match pod affinity rules", false},
	}, []string{"node1", "node2"})

	// Defaulting labels every namespace with kubernetes.io/metadata.name.
	cluster := yamlFileToJSON(t, "testdata/namespace-selector-cluster.yaml")
	pod := strings.Replace(string(yamlFileToJSON(t, "testdata/namespace-selector-pod.yaml")),
		`"team":"x"`, `"kubernetes.io/metadata.name":"shop"`, 1)
	line, _ := json.Marshal(map[string]any{"id": "ns", "cluster": []json.RawMessage{cluster}, "pod": json.RawMessage(pod)})
	code, out, errOut := runCLI(t, string(line)+"\n", "batch")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	var resp struct{ Result *Result }
	if err := json.Unmarshal([]byte(out), &resp); err != nil || resp.Result == nil {
		t.Fatalf("bad answer %q: %v", out, err)
	}
	if resp.Result.SelectedNode == nil || *resp.Result.SelectedNode != "node1" || resp.Result.Nodes[1].Filter.Code == "Success" {
		t.Errorf("metadata.name selector: selected %v, node2 %+v", resp.Result.SelectedNode, resp.Result.Nodes[1].Filter)
	}

	// One Namespace per name.
	dup := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}]}`
	line, _ = json.Marshal(map[string]any{"id": "dup", "cluster": []json.RawMessage{json.RawMessage(dup)}, "pod": json.RawMessage(pod)})
	_, out, _ = runCLI(t, string(line)+"\n", "batch")
	if !strings.Contains(out, "duplicate Namespace a") {
		t.Errorf("duplicate namespaces: %s", out)
	}
}

// TestDefaultPreemptionDryRun: with the default profile, a pod that fits nowhere runs
// upstream's PostFilter; DefaultPreemption nominates the node with the lower-priority
// victims (the PDB is violated on both nodes), reports every candidate's victims and
// evicts nothing (the fake API server still has the victims).
func TestDefaultPreemptionDryRun(t *testing.T) {
	r := explainJSON(t, "--cluster", "testdata/preemption-cluster.yaml",
		"--pod", "testdata/preemption-pod.yaml")
	wantMsg := "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential " +
		"placement for pod on node node2, preempting 2 victims"
	if r.Message == nil || *r.Message != wantMsg {
		t.Fatalf("message %v, want %q", r.Message, wantMsg)
	}
	if r.Preemption == nil || r.Preemption.NominatedNode == nil || *r.Preemption.NominatedNode != "node2" {
		t.Fatalf("preemption %+v, want node2 nominated", r.Preemption)
	}
	want := map[string][]string{
		"node1": {"default/low1"},
		"node2": {"default/low2", "default/low3"},
	}
	if !reflect.DeepEqual(r.Preemption.Victims, want) {
		t.Errorf("victims %v, want %v", r.Preemption.Victims, want)
	}
}
