package kube

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// check validates the options before any object is built, so that kubectl
// never sees a manifest the API server would refuse for a name or a count.
func (o *Options) check() error {
	if err := checkLabel("name", o.Name, MaxNameLen); err != nil {
		return err
	}

	if o.Namespace != "" {
		if err := checkLabel("namespace", o.Namespace, 63); err != nil {
			return err
		}
	}

	if o.Shards < 1 || o.Shards > MaxShards {
		return errOption("shards", "must be between 1 and %d, not %d", MaxShards, o.Shards)
	}

	if err := CheckImage(o.Image); err != nil {
		return errOption("image", "%q: %v", o.Image, err)
	}

	if err := checkSubdomain("uri-secret", o.URISecret); err != nil {
		return err
	}

	if errs := validation.IsConfigMapKey(o.URIKey); len(errs) > 0 {
		return errOption("uri-secret-key", "%q: %s", o.URIKey, errs[0])
	}

	if o.ResultsClaim != "" {
		if err := checkSubdomain("results-claim", o.ResultsClaim); err != nil {
			return err
		}
	}

	if o.StorageClass != "" {
		if o.ResultsClaim != "" {
			return errOption("storage-class", "applies to the claim mongobench makes; --results-claim names an existing one")
		}

		if err := checkSubdomain("storage-class", o.StorageClass); err != nil {
			return err
		}
	}

	if errs := validation.IsConfigMapKey(o.WorkloadFile); len(errs) > 0 {
		return fmt.Errorf("workload file name %q cannot be a ConfigMap key: %s", o.WorkloadFile, errs[0])
	}

	if n := len(o.WorkloadFile) + len(o.WorkloadText); n > maxConfigMapBytes {
		return fmt.Errorf("workload file %s is %d bytes; a ConfigMap holds at most %d", o.WorkloadFile, n, maxConfigMapBytes)
	}

	if !runIDRe.MatchString(o.RunID) {
		return errOption("run-id", "%q must be 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", o.RunID)
	}

	if o.MergeTimeout < time.Second {
		return errOption("merge-timeout", "must be at least 1s, not %s", o.MergeTimeout)
	}

	return nil
}

// runIDRe is a run id: one path component that is also a valid label value.
var runIDRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)

func checkLabel(flag, v string, maxLen int) error {
	if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
		return errOption(flag, "%q is not a valid name: %s", v, errs[0])
	}

	if len(v) > maxLen {
		return errOption(flag, "%q is %d characters; at most %d fit in the names derived from it", v, len(v), maxLen)
	}

	return nil
}

func checkSubdomain(flag, v string) error {
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return errOption(flag, "%q is not a valid name: %s", v, errs[0])
	}

	return nil
}

// Parts of an image reference, as container registries and runtimes parse
// them: [HOST[:PORT]/]PATH[:TAG][@DIGEST], PATH being lower-case components
// separated by '/'.
var (
	imageHostRe      = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:]+\])(:[0-9]+)?$`)
	imageComponentRe = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)
	imageTagRe       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	imageDigestRe    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$`)
)

// maxImageNameLen is the registries' limit on the name part (host and path).
const maxImageNameLen = 255

// CheckImage reports whether ref is a well-formed container image
// reference, such as mongobench:dev, registry.example.com:5000/team/mongobench:1.2
// or ghcr.io/org/mongobench@sha256:<64 hex digits>.
func CheckImage(ref string) error {
	if ref == "" {
		return fmt.Errorf("is empty")
	}

	name, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest && !imageDigestRe.MatchString(digest) {
		return fmt.Errorf("digest %q is not ALGORITHM:HEX", digest)
	}

	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		tag := name[i+1:]
		if !imageTagRe.MatchString(tag) {
			return fmt.Errorf("tag %q is not letters, digits, '_', '.' or '-' (at most 128)", tag)
		}

		name = name[:i]
	}

	if len(name) > maxImageNameLen {
		return fmt.Errorf("name is longer than %d characters", maxImageNameLen)
	}

	parts := strings.Split(name, "/")
	if len(parts) > 1 && isImageHost(parts[0]) {
		if !imageHostRe.MatchString(parts[0]) {
			return fmt.Errorf("registry host %q is not HOST[:PORT]", parts[0])
		}

		parts = parts[1:]
	}

	for _, p := range parts {
		if !imageComponentRe.MatchString(p) {
			return fmt.Errorf("path component %q must be lower-case letters and digits separated by '.', '_', '__' or '-'", p)
		}
	}

	return nil
}

// isImageHost reports whether the first component of a name is a registry
// host rather than a path component, by the rule registries and runtimes
// share: it holds a '.' or a ':', is localhost, or has upper-case letters.
func isImageHost(s string) bool {
	return strings.ContainsAny(s, ".:[") || s == "localhost" || strings.ToLower(s) != s
}
