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

// Sources returns the adapters' sources: node/... and python/....
func Sources() fs.FS { return sources }
