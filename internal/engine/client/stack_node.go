package client

import "path/filepath"

// nodeFamilyName is the Node.js family's directory name.
const nodeFamilyName = "node"

// nodeFamily is the Node.js adapter: one adapter.js for the driver and
// Mongoose stacks, its dependencies pinned by package-lock.json.
func nodeFamily() *Family {
	return &Family{
		Name:        nodeFamilyName,
		Runtime:     "node",
		VersionArgs: []string{"--version"},
		Install:     [][]string{{"npm", "ci", "--omit=dev", "--no-audit", "--no-fund"}},
		Command: func(dir, stack string) []string {
			return []string{"node", filepath.Join(dir, "adapter.js"), "--stack", stack}
		},
	}
}

// nodeStacks are the stacks the Node.js adapter runs.
func nodeStacks(f *Family) []Stack {
	return []Stack{
		{Name: "node-driver", Family: f, Describe: "the official Node.js driver (mongodb)", Library: "mongodb"},
		{Name: "node-mongoose", Family: f, ODM: true, Describe: "Mongoose models, hydrated documents", Library: "mongoose"},
		{Name: "node-mongoose-lean", Family: f, ODM: true, Describe: "Mongoose models, queries with .lean()", Library: "mongoose"},
	}
}
