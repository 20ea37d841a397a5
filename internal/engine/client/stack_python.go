package client

import (
	"path/filepath"

	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// pythonFamilyName is the Python family's directory name.
const pythonFamilyName = "python"

// pythonFamily is the Python adapter: one adapter.py for PyMongo and
// MongoEngine, run by a virtual environment of its own so that nothing is
// installed into the system's Python.
func pythonFamily() *Family {
	return &Family{
		Name:        pythonFamilyName,
		Runtime:     "python3",
		VersionArgs: []string{"--version"},
		Install: [][]string{
			{"python3", "-m", "venv", "venv"},
			{"./venv/bin/pip", "install", "--disable-pip-version-check", "-r", "requirements.txt"},
		},
		Command: func(dir, stack string) []string {
			return []string{filepath.Join(dir, "venv", "bin", "python"), filepath.Join(dir, "adapter.py"), "--stack", stack}
		},
	}
}

// pythonStacks are the stacks the Python adapter runs.
func pythonStacks(f *Family) []Stack {
	return []Stack{
		{Name: "python-pymongo", Family: f, Describe: "PyMongo", Library: "pymongo"},
		{
			Name: "python-mongoengine", Family: f, ODM: true, Describe: "MongoEngine documents", Library: "mongoengine",
			Without: []KindGap{{Kind: opkind.ReplaceOne, Why: "MongoEngine has no replace of a whole document"}},
		},
	}
}
