package target

import "strings"

// redactedPassword replaces passwords in everything this package shows.
const redactedPassword = "xxxxx"

// redactURI returns s with the password of its user information replaced by
// "xxxxx", e.g. "mongodb://user:xxxxx@host/". It is deliberately forgiving:
// it also handles malformed URIs (which is when they get shown in errors), and
// when in doubt it hides more rather than less.
//
// TODO: switch to github.com/mongobench/mongobench/internal/redact.URI once
// that package exists; it did not when this package was written.
func redactURI(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}

	at := userInfoEnd(rest)
	if at < 0 {
		return s
	}

	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return s
	}

	return scheme + "://" + user + ":" + redactedPassword + rest[at:]
}

// uriPassword returns the raw (still escaped) password of s, or "" if s has
// none; it locates the user information exactly as redactURI does.
func uriPassword(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}

	at := userInfoEnd(rest)
	if at < 0 {
		return ""
	}

	_, password, _ := strings.Cut(rest[:at], ":")

	return password
}

// userInfoEnd returns the index of the '@' that ends the user information in
// rest (a URI without its "scheme://"), or -1. Options after '?' may contain
// '@' too, so the last '@' before the first '?' wins; if there is none there,
// the password itself may hold a raw '?', and the last '@' overall wins, which
// at worst hides the host as well.
func userInfoEnd(rest string) int {
	head := rest
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		head = rest[:q]
	}

	if at := strings.LastIndexByte(head, '@'); at >= 0 {
		return at
	}

	return strings.LastIndexByte(rest, '@')
}
