package targets

import (
	"context"
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
