package main

import (
	"fmt"
	"os"
	"strconv"
)

// The environment variables `--shard auto` reads. Kubernetes sets
// JOB_COMPLETION_INDEX in each pod of an Indexed Job (0 to
// spec.completions-1); it does not set the number of completions, so the
// Job's manifest sets JOB_COMPLETIONS to spec.completions
// (deploy/kubernetes/job.yaml).
const (
	envShardIndex = "JOB_COMPLETION_INDEX"
	envShardCount = "JOB_COMPLETIONS"
)

// shardAuto is the shard of `--shard auto`: K from JOB_COMPLETION_INDEX and
// N from JOB_COMPLETIONS, read through getenv. The error names the variable
// that is missing or wrong.
func shardAuto(getenv func(string) string) (k, n int, err error) {
	ks, ns := getenv(envShardIndex), getenv(envShardCount)
	if ks == "" {
		return 0, 0, fmt.Errorf("auto: %s is not set (Kubernetes sets it in the pods of an Indexed Job; elsewhere give --shard K/N)", envShardIndex)
	}
	if ns == "" {
		return 0, 0, fmt.Errorf("auto: %s is not set: set it in the Job's pod template to spec.completions (Kubernetes does not set it)", envShardCount)
	}
	n, err = strconv.Atoi(ns)
	if err != nil || n < 1 {
		return 0, 0, fmt.Errorf("auto: %s=%q: want a whole number of at least 1 (the Job's spec.completions)", envShardCount, ns)
	}
	k, err = strconv.Atoi(ks)
	if err != nil || k < 0 {
		return 0, 0, fmt.Errorf("auto: %s=%q: want a whole number of at least 0", envShardIndex, ks)
	}
	if k >= n {
		return 0, 0, fmt.Errorf("auto: %s=%d is not below %s=%d: is %s the Job's spec.completions?", envShardIndex, k, envShardCount, n, envShardCount)
	}
	return k, n, nil
}

// shardFromEnv is shardAuto over the process's environment.
func shardFromEnv() (k, n int, err error) { return shardAuto(os.Getenv) }
