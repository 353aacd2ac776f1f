package main

import (
	"context"
	"fmt"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"
)

// waitForDRA waits until the DRA manager sees every input ResourceClaim, DeviceClass
// and ResourceSlice and every device the allocated claims hold. Its claim cache, its
// allocated-devices tracker and the slice tracker are fed by informer event handlers,
// which run after WaitForCacheSync returns; a cycle started earlier could miss objects.
func waitForDRA(ctx context.Context, draManager fwk.SharedDRAManager, cluster *Cluster) error {
	if draManager == nil {
		return nil
	}
	var claims, classes, slices int
	held := map[string]bool{}
	for _, o := range cluster.DRA {
		switch o := o.(type) {
		case *resourcev1.ResourceClaim:
			claims++
			if o.Status.Allocation == nil {
				continue
			}
			for _, r := range o.Status.Allocation.Devices.Results {
				// Admin-access and shared results do not hold their device.
				if ptr.Deref(r.AdminAccess, false) || r.ShareID != nil {
					continue
				}
				held[r.Driver+"/"+r.Pool+"/"+r.Device] = true
			}
		case *resourcev1.DeviceClass:
			classes++
		case *resourcev1.ResourceSlice:
			slices++
		}
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		gotClaims, err := draManager.ResourceClaims().List()
		if err != nil {
			return false, err
		}
		gotClasses, err := draManager.DeviceClasses().List()
		if err != nil {
			return false, err
		}
		gotSlices, err := draManager.ResourceSlices().ListWithDeviceTaintRules()
		if err != nil {
			return false, err
		}
		state, err := draManager.ResourceClaims().GatherAllocatedState()
		if err != nil {
			return false, nil // a concurrent update: try again
		}
		last = fmt.Sprintf("claims %d/%d, classes %d/%d, slices %d/%d, held devices %d/%d",
			len(gotClaims), claims, len(gotClasses), classes, len(gotSlices), slices, state.AllocatedDevices.Len(), len(held))
		return len(gotClaims) == claims && len(gotClasses) == classes && len(gotSlices) == slices &&
			state.AllocatedDevices.Len() == len(held), nil
	})
	if err != nil {
		return fmt.Errorf("DRA objects not seen by the scheduler (%s): %w", last, err)
	}
	return nil
}
