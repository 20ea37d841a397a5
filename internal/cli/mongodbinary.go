package cli

import "github.com/mongobench/mongobench/internal/targets"

// useMongodBinary gives the mongod targets that name no binary the one from
// --mongod-binary or MONGOBENCH_MONGOD (binary, empty for mongod from
// PATH). Workload files cannot name a program, so the binary of a mongod
// target comes from the command line (this, or --target
// mongod:binary=...), the environment or PATH. It runs after the targets
// are named, so that labels do not depend on where mongod was found.
func useMongodBinary(targetList []targets.TargetSpec, binary string) {
	if binary == "" {
		return
	}

	for i := range targetList {
		t := &targetList[i]
		if t.Kind != targets.KindMongod {
			continue
		}

		if t.Mongod == nil {
			t.Mongod = &targets.MongodSpec{}
		}

		if t.Mongod.Binary == "" {
			m := *t.Mongod
			m.Binary = binary
			t.Mongod = &m
		}
	}
}
