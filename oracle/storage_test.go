package main

import (
	"fmt"
	"os"
	"sort"
	"testing"
)

// The storage fixture shared with topospread's tests: one object of every storage kind.
const (
	storageCluster = "../tests/data/storage/cluster.yaml"
	storagePod     = "../tests/data/storage/pod-with-claim.yaml"
)

func TestEveryStorageKindIsDecodedForTheInformers(t *testing.T) {
	data, err := os.ReadFile(storageCluster)
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeCluster([]sourcedBytes{{source: storageCluster, data: data}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range c.Storage {
		kinds[fmt.Sprintf("%T", o)]++
	}
	var got []string
	for k, n := range kinds {
		got = append(got, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(got)
	want := []string{
		"*v1.CSIDriver=1",
		"*v1.CSINode=2",
		"*v1.CSIStorageCapacity=1",
		"*v1.PersistentVolume=1",
		"*v1.PersistentVolumeClaim=3",
		"*v1.StorageClass=2",
		"*v1.VolumeAttachment=1",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("storage objects = %v, want %v", got, want)
	}
}

func TestAPodFollowsItsBoundVolumeToItsZone(t *testing.T) {
	r := explainJSON(t, "--cluster", storageCluster, "--pod", storagePod)
	if r.SelectedNode == nil || *r.SelectedNode != "node-b" {
		t.Fatalf("selected %v, want node-b", r.SelectedNode)
	}
	a := r.Nodes[0].Filter
	if a.Plugin == nil || *a.Plugin != "VolumeBinding" || a.Code != "UnschedulableAndUnresolvable" {
		t.Errorf("node-a: %+v, want VolumeBinding UnschedulableAndUnresolvable", a)
	}
}

func TestTheSameStorageObjectTwiceIsRefused(t *testing.T) {
	data, err := os.ReadFile(storageCluster)
	if err != nil {
		t.Fatal(err)
	}
	_, err = decodeCluster([]sourcedBytes{{"a.yaml", data}, {"b.yaml", data}})
	if err == nil {
		t.Fatal("no error for a cluster given twice")
	}
}
