package kube_test

import (
	"fmt"
	"os"
	"time"

	"github.com/mongobench/mongobench/internal/lab/kube"
)

// A two-shard run of a small workload whose connection string is in the
// Secret bench-uri and whose results go to an existing claim.
func ExampleManifests_WriteYAML() {
	m, err := kube.Build(&kube.Options{
		Name:         "bench",
		Image:        "registry.example.com/mongobench:1.0",
		Shards:       2,
		RunID:        "20261123-120000",
		WorkloadFile: "reads.yaml",
		WorkloadText: "name: reads\ndatabase: reads\ncollections: [{name: c}]\noperations:\n  - {name: get, op: findOne, collection: c, filter: {_id: 1}}\n",
		URISecret:    "bench-uri",
		URIKey:       "uri",
		ResultsClaim: "shared-results",
		MergeTimeout: 2 * time.Hour,
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	if err := m.WriteYAML(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// apiVersion: v1
	// data:
	//   reads.yaml: |
	//     name: reads
	//     database: reads
	//     collections: [{name: c}]
	//     operations:
	//       - {name: get, op: findOne, collection: c, filter: {_id: 1}}
	// kind: ConfigMap
	// metadata:
	//   labels:
	//     app.kubernetes.io/component: workload
	//     app.kubernetes.io/instance: bench
	//     app.kubernetes.io/name: mongobench
	//     mongobench.io/run: 20261123-120000
	//   name: bench-workload
	// ---
	// apiVersion: batch/v1
	// kind: Job
	// metadata:
	//   labels:
	//     app.kubernetes.io/component: shard
	//     app.kubernetes.io/instance: bench
	//     app.kubernetes.io/name: mongobench
	//     mongobench.io/run: 20261123-120000
	//   name: bench-shards
	// spec:
	//   backoffLimitPerIndex: 0
	//   completionMode: Indexed
	//   completions: 2
	//   parallelism: 2
	//   template:
	//     metadata:
	//       labels:
	//         app.kubernetes.io/component: shard
	//         app.kubernetes.io/instance: bench
	//         app.kubernetes.io/name: mongobench
	//         mongobench.io/run: 20261123-120000
	//     spec:
	//       containers:
	//       - args:
	//         - run
	//         - /workload/reads.yaml
	//         - --start-at
	//         - auto
	//         - --quiet
	//         - -o
	//         - /results/20261123-120000/shard-$(JOB_COMPLETION_INDEX).json
	//         env:
	//         - name: TMPDIR
	//           value: /tmp
	//         - name: MONGOBENCH_OWNER_KEY_FILE
	//           value: /tmp/mongobench-owner.key
	//         - name: MONGOBENCH_SHARDS
	//           value: "2"
	//         - name: JOB_COMPLETION_INDEX
	//           valueFrom:
	//             fieldRef:
	//               fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
	//         - name: MONGOBENCH_URI
	//           valueFrom:
	//             secretKeyRef:
	//               key: uri
	//               name: bench-uri
	//         image: registry.example.com/mongobench:1.0
	//         imagePullPolicy: IfNotPresent
	//         name: mongobench
	//         securityContext:
	//           allowPrivilegeEscalation: false
	//           capabilities:
	//             drop:
	//             - ALL
	//           readOnlyRootFilesystem: true
	//         volumeMounts:
	//         - mountPath: /results
	//           name: results
	//         - mountPath: /tmp
	//           name: tmp
	//         - mountPath: /workload
	//           name: workload
	//           readOnly: true
	//       restartPolicy: Never
	//       securityContext:
	//         fsGroup: 65532
	//         runAsGroup: 65532
	//         runAsNonRoot: true
	//         runAsUser: 65532
	//         seccompProfile:
	//           type: RuntimeDefault
	//       volumes:
	//       - name: results
	//         persistentVolumeClaim:
	//           claimName: shared-results
	//       - emptyDir: {}
	//         name: tmp
	//       - configMap:
	//           name: bench-workload
	//         name: workload
	// ---
	// apiVersion: batch/v1
	// kind: Job
	// metadata:
	//   labels:
	//     app.kubernetes.io/component: merge
	//     app.kubernetes.io/instance: bench
	//     app.kubernetes.io/name: mongobench
	//     mongobench.io/run: 20261123-120000
	//   name: bench-merge
	// spec:
	//   activeDeadlineSeconds: 7800
	//   backoffLimit: 0
	//   completions: 1
	//   parallelism: 1
	//   template:
	//     metadata:
	//       labels:
	//         app.kubernetes.io/component: merge
	//         app.kubernetes.io/instance: bench
	//         app.kubernetes.io/name: mongobench
	//         mongobench.io/run: 20261123-120000
	//     spec:
	//       containers:
	//       - args:
	//         - merge
	//         - /results/20261123-120000/shard-0.json
	//         - /results/20261123-120000/shard-1.json
	//         - -o
	//         - /results/20261123-120000/merged.json
	//         env:
	//         - name: TMPDIR
	//           value: /tmp
	//         - name: MONGOBENCH_OWNER_KEY_FILE
	//           value: /tmp/mongobench-owner.key
	//         image: registry.example.com/mongobench:1.0
	//         imagePullPolicy: IfNotPresent
	//         name: merge
	//         securityContext:
	//           allowPrivilegeEscalation: false
	//           capabilities:
	//             drop:
	//             - ALL
	//           readOnlyRootFilesystem: true
	//         volumeMounts:
	//         - mountPath: /results
	//           name: results
	//         - mountPath: /tmp
	//           name: tmp
	//       initContainers:
	//       - args:
	//         - kube
	//         - wait
	//         - --timeout
	//         - 2h0m0s
	//         - /results/20261123-120000/shard-0.json
	//         - /results/20261123-120000/shard-1.json
	//         env:
	//         - name: TMPDIR
	//           value: /tmp
	//         - name: MONGOBENCH_OWNER_KEY_FILE
	//           value: /tmp/mongobench-owner.key
	//         image: registry.example.com/mongobench:1.0
	//         imagePullPolicy: IfNotPresent
	//         name: wait
	//         securityContext:
	//           allowPrivilegeEscalation: false
	//           capabilities:
	//             drop:
	//             - ALL
	//           readOnlyRootFilesystem: true
	//         volumeMounts:
	//         - mountPath: /results
	//           name: results
	//         - mountPath: /tmp
	//           name: tmp
	//       restartPolicy: Never
	//       securityContext:
	//         fsGroup: 65532
	//         runAsGroup: 65532
	//         runAsNonRoot: true
	//         runAsUser: 65532
	//         seccompProfile:
	//           type: RuntimeDefault
	//       volumes:
	//       - name: results
	//         persistentVolumeClaim:
	//           claimName: shared-results
	//       - emptyDir: {}
	//         name: tmp
}
