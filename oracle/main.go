// math/rand's global generator honours rand.Seed (Go 1.24 made it a no-op by default):
// `oracle batch --seed N` fixes upstream's own random choices (DefaultPreemption's
// candidate offset), so that a run can be repeated, or re-run with other seeds to
// tell upstream's randomness from a disagreement.

//go:debug randseednop=0

// Command oracle answers the question "where would kube-scheduler put this
// pod, and why?" by running the real upstream scheduler framework (imported
// as a Go module, see go.mod) on a cluster described by ordinary Kubernetes
// objects. It is the reference that topospread's `explain --output json` is
// compared against.
//
// Usage:
//
//	oracle explain --cluster FILE [--cluster FILE ...] --pod FILE [--config FILE]
//	oracle batch < requests.jsonl > results.jsonl
//	oracle bench [--input FILE] [--placements FILE] < workload.json
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"strings"
)

const usageText = `usage:
  oracle explain --cluster FILE [--cluster FILE ...] --pod FILE [--config FILE]
      Print, as JSON on stdout, how the upstream scheduler judges every node
      for the incoming pod. FILEs hold Kubernetes objects (YAML or JSON,
      multi-document, List kinds). Bad input: one line on stderr, exit 2.
  oracle version
      Print the upstream Kubernetes version and the effective feature gates.
  oracle batch [--seed N]
      Read one JSON request per line on stdin:
        {"id": ..., "cluster": [objects], "pod": {pod}, "config": {cfg} | null,
         "sampled": true (optional: also "sampled", the cycle with upstream's
         percentageOfNodesToScore search, at parallelism 1)}
      and write one JSON line per request on stdout:
        {"id": ..., "result": {...}} or {"id": ..., "error": "..."}
      --seed N seeds math/rand (upstream's random preemption offset) before
      the first request; without it the choice is random, as in kube-scheduler.
  oracle bench [--input FILE] [--placements FILE] [--parallelism N]
      Read one workload (JSON: {"name", "cluster": [objects], "pods": [pods
      to place], "config": {cfg} | null}) from FILE or stdin, schedule the
      pods one after the other with upstream's cycle (parallelism 1 unless
      given), assuming each into the cache; print pods/s and peak RSS as JSON
      and write "namespace/name<TAB>node<TAB>message" lines to --placements.
`

// Exit codes.
const (
	exitOK       = 0
	exitInternal = 1
	exitBadInput = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	quietLogs()
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitBadInput
	}
	switch args[0] {
	case "explain":
		return runExplain(args[1:], stdout, stderr)
	case "batch":
		rest := args[1:]
		if len(rest) == 2 && rest[0] == "--seed" {
			seed, err := strconv.ParseInt(rest[1], 10, 64)
			if err != nil {
				fmt.Fprintf(stderr, "oracle: batch: --seed: %v\n", err)
				return exitBadInput
			}
			rand.Seed(seed) //nolint:staticcheck // deliberately the global generator upstream draws from
			rest = nil
		}
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "oracle: batch: unexpected arguments %q\n", rest)
			return exitBadInput
		}
		if err := runBatch(stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "oracle: batch: %v\n", err)
			return exitInternal
		}
		return exitOK
	case "bench":
		return runBench(args[1:], stdin, stdout, stderr)
	case "version":
		out, err := json.MarshalIndent(versionInfo(), "", "  ")
		if err != nil {
			return reportError(stderr, err)
		}
		fmt.Fprintf(stdout, "%s\n", out)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	default:
		fmt.Fprintf(stderr, "oracle: unknown command %q\n%s", args[0], usageText)
		return exitBadInput
	}
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runExplain(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		// Go's own exit status for a panic is 2, which means "bad input" here.
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "oracle: internal: panic: %s\n", oneLine(fmt.Sprint(p)))
			code = exitInternal
		}
	}()
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var clusterFiles stringList
	var podFile, configFile string
	fs.Var(&clusterFiles, "cluster", "cluster objects file (repeatable)")
	fs.StringVar(&podFile, "pod", "", "incoming pod file")
	fs.StringVar(&configFile, "config", "", "KubeSchedulerConfiguration file")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "oracle: explain: %v\n", err)
		return exitBadInput
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "oracle: explain: unexpected arguments %q\n", fs.Args())
		return exitBadInput
	}
	if podFile == "" {
		fmt.Fprintln(stderr, "oracle: explain: --pod is required")
		return exitBadInput
	}

	in := scenarioInput{podSource: podFile, configSource: configFile}
	for _, f := range clusterFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return reportError(stderr, &inputError{source: f, err: errors.Unwrap(err)})
		}
		in.clusterDocs = append(in.clusterDocs, sourcedBytes{source: f, data: data})
	}
	data, err := os.ReadFile(podFile)
	if err != nil {
		return reportError(stderr, &inputError{source: podFile, err: errors.Unwrap(err)})
	}
	in.podData = data
	if configFile != "" {
		data, err := os.ReadFile(configFile)
		if err != nil {
			return reportError(stderr, &inputError{source: configFile, err: errors.Unwrap(err)})
		}
		in.configData = data
	}

	result, err := explainInput(in)
	if err != nil {
		return reportError(stderr, err)
	}
	out, err := json.MarshalIndent(result, "", "  ")
	if err != nil {
		return reportError(stderr, err)
	}
	out = append(out, '\n')
	if _, err := stdout.Write(out); err != nil {
		return exitInternal
	}
	return exitOK
}

func reportError(stderr io.Writer, err error) int {
	var ie *inputError
	if errors.As(err, &ie) {
		fmt.Fprintf(stderr, "oracle: %s\n", oneLine(ie.Error()))
		return exitBadInput
	}
	fmt.Fprintf(stderr, "oracle: internal: %s\n", oneLine(err.Error()))
	return exitInternal
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// batchRequest is one line of `oracle batch` input.
type batchRequest struct {
	ID      json.RawMessage   `json:"id"`
	Cluster []json.RawMessage `json:"cluster"`
	Pod     json.RawMessage   `json:"pod"`
	Config  json.RawMessage   `json:"config"`
	// Sampled asks for Result.Sampled as well.
	Sampled bool `json:"sampled"`
}

type batchResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *Result         `json:"result,omitempty"`
	Error  *string         `json:"error,omitempty"`
}

func runBatch(stdin io.Reader, stdout io.Writer) error {
	r := bufio.NewReaderSize(stdin, 1<<20)
	w := bufio.NewWriter(stdout)
	for {
		line, readErr := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			resp := handleBatchLine(line)
			out, err := json.Marshal(resp)
			if err != nil {
				return err
			}
			out = append(out, '\n')
			if _, err := w.Write(out); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if readErr == io.EOF {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
}

func handleBatchLine(line []byte) (resp batchResponse) {
	resp.ID = json.RawMessage("null")
	fail := func(err error) batchResponse {
		msg := oneLine(err.Error())
		resp.Result = nil
		resp.Error = &msg
		return resp
	}
	var req batchRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return fail(&inputError{source: "request", err: err})
	}
	if len(req.ID) > 0 {
		resp.ID = req.ID
	}
	in := scenarioInput{podSource: "pod", configSource: "config", sampled: req.Sampled}
	for i, obj := range req.Cluster {
		in.clusterDocs = append(in.clusterDocs, sourcedBytes{source: fmt.Sprintf("cluster[%d]", i), data: obj})
	}
	if isNullJSON(req.Pod) {
		return fail(&inputError{source: "pod", err: errors.New("missing")})
	}
	in.podData = req.Pod
	if !isNullJSON(req.Config) {
		in.configData = req.Config
	}
	defer func() {
		// A panic inside upstream code must not take down a whole batch.
		if p := recover(); p != nil {
			resp = fail(fmt.Errorf("internal: panic: %v", p))
		}
	}()
	result, err := explainInput(in)
	if err != nil {
		return fail(err)
	}
	resp.Result = result
	return resp
}

func isNullJSON(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}
