package targets

import (
	"context"
	"errors"
	"strings"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// KindURI is an existing deployment named by a connection string.
const KindURI = "uri"

// uriSchemes are the connection string schemes MongoDB drivers accept.
var uriSchemes = []string{"mongodb://", "mongodb+srv://"}

// uriKind registers KindURI.
func uriKind() Kind {
	return Kind{
		Name:        KindURI,
		Description: "an existing deployment named by a mongodb:// or mongodb+srv:// connection string, used as it is",
		Launched:    false,
		Existing:    true,
		flag:        parseURIFlag,
		validate:    validateURITarget,
		launch:      launchURI,
	}
}

// validateURITarget checks that a uri target has a MongoDB connection
// string, so that "http://..." or a typo is reported before anything runs
// rather than by the driver once other targets have run. The message never
// holds the connection string, which may hold a password.
func validateURITarget(t TargetSpec) error {
	if err := onlyFields(t, true, false, false); err != nil {
		return err
	}

	uri := strings.TrimSpace(t.URI)
	for _, scheme := range uriSchemes {
		if len(uri) > len(scheme) && strings.EqualFold(uri[:len(scheme)], scheme) {
			return nil
		}
	}

	scheme, _, ok := strings.Cut(uri, "://")
	if !ok || strings.ContainsAny(scheme, "@/:") {
		return fieldErrorf("uri", "the connection string must start with mongodb:// or mongodb+srv://")
	}

	return fieldErrorf("uri", "the connection string has scheme %q; it must start with mongodb:// or mongodb+srv://", scheme+"://")
}

// launchURI starts nothing: the deployment is used as it is.
func launchURI(_ context.Context, l *Launched, _ LaunchOptions) error {
	l.URI = l.Spec.URI
	l.Description = "existing deployment at " + redact.URI(l.Spec.URI)

	return nil
}

// parseURIFlag fills spec from what follows "uri:": an optional "name=...,"
// and the connection string.
func parseURIFlag(spec *TargetSpec, rest string) error {
	if rest == "" {
		return errors.New("uri targets need a connection string, as in uri:mongodb://host/")
	}

	if after, ok := strings.CutPrefix(rest, "name="); ok {
		name, uri, ok := strings.Cut(after, ",")
		if !ok {
			return errors.New("name=... must be followed by a comma and the connection string, as in uri:name=prod,mongodb://host/")
		}

		if spec.Name = strings.TrimSpace(name); spec.Name == "" {
			return errors.New("name must not be empty")
		}

		rest = strings.TrimSpace(uri)
	}

	if rest == "" {
		return errors.New("uri targets need a connection string, as in uri:mongodb://host/")
	}

	spec.URI = rest

	return nil
}
