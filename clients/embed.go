// Package clients holds the sources of mongobench's client adapters, one
// directory per language family (node, python), embedded so that the
// single binary can install them: `mongobench clients install` extracts
// them into the user's cache and installs their pinned dependencies there
// (see internal/engine/client and docs/clients.md).
//
// Only the files an adapter runs from are embedded, named one by one, so
// that a developer's node_modules, virtual environment, caches and tests
// never end up in the binary.
package clients

import (
	"embed"
	"io/fs"
)

//go:embed node/adapter.js node/package.json node/package-lock.json
//go:embed python/adapter.py python/requirements.txt
var sources embed.FS

// protocol is the adapter protocol as a JSON Schema and its conformance
// fixtures (protocol/schema.json, protocol/fixtures), which mongobench's Go
// side and both adapters' test suites check; adapters do not need them to
// run, so they are not part of Sources.
//
//go:embed protocol/schema.json protocol/fixtures/*.json
var protocol embed.FS

// Protocol returns the protocol's schema and fixtures: schema.json and
// fixtures/*.json.
func Protocol() fs.FS {
	sub, err := fs.Sub(protocol, "protocol")
	if err != nil {
		return protocol // cannot happen: the directory is embedded
	}

	return sub
}

// Sources returns the adapters' sources: node/... and python/....
func Sources() fs.FS { return sources }
