package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func benchNode(name, zone string) map[string]any {
	res := map[string]any{"pods": "110", "cpu": "4", "memory": "32Gi"}
	return map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "labels": map[string]any{
			"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
		"status": map[string]any{"capacity": res, "allocatable": res},
	}
}

func benchPod(name string, spread bool) map[string]any {
	spec := map[string]any{"containers": []any{map[string]any{
		"name": "c", "image": "pause",
		"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "500Mi"}},
	}}}
	if spread {
		spec["topologySpreadConstraints"] = []any{map[string]any{
			"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
			"whenUnsatisfiable": "DoNotSchedule",
			"labelSelector":     map[string]any{"matchLabels": map[string]any{"app": "web"}},
		}}
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec":     spec,
	}
}

func benchWorkloadJSON(t *testing.T, nodes []map[string]any, pods []map[string]any) string {
	t.Helper()
	in := map[string]any{"name": "test", "cluster": nodes, "pods": pods, "config": nil}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func runBenchCLI(t *testing.T, workload string) (*BenchOutput, []string) {
	t.Helper()
	placements := filepath.Join(t.TempDir(), "placements.tsv")
	code, out, errOut := runCLI(t, workload, "bench", "--placements", placements)
	if code != exitOK {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	var got BenchOutput
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("bad JSON output: %v\n%s", err, out)
	}
	data, err := os.ReadFile(placements)
	if err != nil {
		t.Fatal(err)
	}
	return &got, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// Identical nodes, pods without constraints: every cycle visits all nodes
// (fewer than 100) from the rotating start index, and the best score is
// shared by every node that has the fewest pods; the tie goes to the node
// upstream's score heap pops over them in visit order: with n0 and n1 loaded,
// the heap of totals [lower, lower, top, top] pops n3, not n2.
func TestBenchTiesGoAsUpstreamsScoreHeapPopsThem(t *testing.T) {
	var nodes, pods []map[string]any
	for i := range 4 {
		nodes = append(nodes, benchNode(fmt.Sprintf("n%d", i), "z"))
	}
	for i := range 6 {
		pods = append(pods, benchPod(fmt.Sprintf("p%d", i), false))
	}
	out, lines := runBenchCLI(t, benchWorkloadJSON(t, nodes, pods))
	want := []string{"n0", "n1", "n3", "n2", "n0", "n1"}
	if len(lines) != len(want) {
		t.Fatalf("placements: %q", lines)
	}
	for i, line := range lines {
		fields := strings.Split(line, "\t")
		if fields[0] != fmt.Sprintf("default/p%d", i) || fields[1] != want[i] {
			t.Errorf("line %d = %q, want default/p%d on %s", i, line, i, want[i])
		}
	}
	if out.Pods != 6 || out.Scheduled != 6 || out.Nodes != 4 || out.Parallelism != 1 {
		t.Errorf("counts: %+v", out)
	}
	if !out.NodeOrderMatchesInput || out.NodeOrderDifference != nil {
		t.Errorf("node order: %+v", out)
	}
	if out.PodsPerSecond <= 0 || out.Seconds <= 0 || out.PeakRSSMiB <= 0 {
		t.Errorf("measurements: %+v", out)
	}
	if out.KubernetesVersion != kubernetesVersion() {
		t.Errorf("kubernetesVersion %q", out.KubernetesVersion)
	}
}

// A hard zone constraint spreads the pods; a pod nothing fits is reported
// with upstream's FailedScheduling message (PostFilter's included) and the
// loop goes on.
func TestBenchSpreadsAndReportsUnschedulablePods(t *testing.T) {
	nodes := []map[string]any{benchNode("a1", "a"), benchNode("b1", "b"), benchNode("a2", "a"), benchNode("b2", "b")}
	var pods []map[string]any
	for i := range 4 {
		pods = append(pods, benchPod(fmt.Sprintf("p%d", i), true))
	}
	big := benchPod("big", false)
	big["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"cpu": "64"}}
	pods = append(pods, big)
	out, lines := runBenchCLI(t, benchWorkloadJSON(t, nodes, pods))
	zones := map[byte]int{}
	for _, line := range lines[:4] {
		node := strings.Split(line, "\t")[1]
		zones[node[0]]++
	}
	if zones['a'] != 2 || zones['b'] != 2 {
		t.Errorf("zones %v from %q", zones, lines)
	}
	last := strings.Split(lines[4], "\t")
	if last[1] != "-" || !strings.HasPrefix(last[2], "0/4 nodes are available: 4 Insufficient cpu.") ||
		!strings.Contains(last[2], "preemption:") {
		t.Errorf("unschedulable pod: %q", lines[4])
	}
	if out.Scheduled != 4 || out.Pods != 5 {
		t.Errorf("counts: %+v", out)
	}
}

// The cache lists nodes zone by zone in turn; a workload listing them
// otherwise is flagged (another engine searching in input order would differ).
func TestBenchReportsNodeOrder(t *testing.T) {
	nodes := []map[string]any{benchNode("a1", "a"), benchNode("a2", "a"), benchNode("b1", "b")}
	out, _ := runBenchCLI(t, benchWorkloadJSON(t, nodes, []map[string]any{benchPod("p", false)}))
	if out.NodeOrderMatchesInput || out.NodeOrderDifference == nil ||
		*out.NodeOrderDifference != "position 1: snapshot has b1, input has a2" {
		t.Errorf("node order: %v %v", out.NodeOrderMatchesInput, out.NodeOrderDifference)
	}
}

func TestBenchBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		stdin string
		args  []string
		want  string
	}{
		"not JSON":    {"{", nil, "oracle: -: "},
		"parallelism": {"{}", []string{"--parallelism", "0"}, "--parallelism must be at least 1"},
		"stray args":  {"{}", []string{"x"}, "unexpected arguments"},
		"bad pod":     {`{"pods": [{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}, "status": {"nominatedNodeName": "n"}}]}`, nil, "pods[0]: status.nominatedNodeName is not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.stdin, append([]string{"bench"}, tc.args...)...)
			if code != exitBadInput || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q, want %q", code, errOut, tc.want)
			}
		})
	}
}
