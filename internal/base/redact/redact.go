// Package redact removes credentials from MongoDB connection strings and from
// error messages that may quote them, so that nothing mongobench prints or
// writes to a results file ever carries a password.
//
// The functions are deliberately conservative: when a connection string is
// ambiguous or malformed, they hide more than strictly necessary rather than
// risk printing part of a secret.
package redact

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
)

// Mask is the text that replaces every secret. Keeping it fixed makes
// redaction idempotent: redacting an already redacted string changes nothing.
const Mask = "xxxxx"

// URI returns the connection string s with its password replaced by Mask.
//
// The user name, hosts, database and non-secret options are kept so that the
// result still tells a reader which server and account were used. Secret
// query options (password, tlsCertificateKeyFilePassword and tokens inside
// authMechanismProperties) are masked too. It accepts mongodb:// and
// mongodb+srv:// strings with any number of hosts, and strings without a
// scheme.
//
// When s is not a well-formed connection string (for example a password with
// an unescaped '@', '/' or '?'), everything between "://" and the last '@' is
// replaced, user name included, because the boundary between user name and
// password can no longer be trusted. The same happens when the only '@' is in
// the query part of a string without credentials, or when an '@' in the query
// does not look like part of an option value, because those are
// indistinguishable from a password containing "/?".
func URI(s string) string {
	p := parse(s)
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(p.scheme)
	switch {
	case p.malformed:
		b.WriteString(Mask)
		b.WriteByte('@')
	case p.hasUserinfo:
		b.WriteString(p.user)
		if p.hasPassword {
			b.WriteByte(':')
			b.WriteString(maskUnlessEnvRef(p.password))
		}
		b.WriteByte('@')
	}
	b.WriteString(p.hostsAndPath)
	if p.hasQuery {
		b.WriteByte('?')
		b.WriteString(redactQuery(p.query))
	}
	return b.String()
}

// Error returns err's message with every occurrence of the given connection
// strings replaced by their redacted form and every secret they contain
// (passwords, secret option values, both raw and percent-decoded) replaced by
// Mask wherever else it appears in the message.
//
// It exists because driver and server messages may quote the connection
// string or parts of it. Short passwords can make the message harder to read,
// since every occurrence is masked; that is the price of never leaking one.
// It returns "" for a nil error.
func Error(err error, uris ...string) string {
	if err == nil {
		return ""
	}
	msg := err.Error()

	var uriPairs, secretPairs []string
	seenURI := map[string]bool{}
	seenSecret := map[string]bool{}
	for _, u := range uris {
		if u == "" || seenURI[u] {
			continue
		}
		seenURI[u] = true
		if r := URI(u); r != u {
			uriPairs = append(uriPairs, u, r)
		}
		for _, sec := range secrets(u) {
			if sec == "" || sec == Mask || seenSecret[sec] {
				continue
			}
			seenSecret[sec] = true
			secretPairs = append(secretPairs, sec, Mask)
		}
	}
	if len(uriPairs) == 0 && len(secretPairs) == 0 {
		return msg
	}
	// strings.Replacer tries the old strings in argument order at each
	// position, so whole connection strings (longest first) win over the
	// secrets inside them, and longer secrets win over their own substrings.
	sortPairsByLength(uriPairs)
	sortPairsByLength(secretPairs)
	return strings.NewReplacer(append(uriPairs, secretPairs...)...).Replace(msg)
}

// sortPairsByLength orders old/new pairs so that longer old strings come
// first.
func sortPairsByLength(pairs []string) {
	type pair struct{ old, new string }
	ps := make([]pair, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		ps = append(ps, pair{pairs[i], pairs[i+1]})
	}
	slices.SortStableFunc(ps, func(a, b pair) int { return cmp.Compare(len(b.old), len(a.old)) })
	for i, p := range ps {
		pairs[2*i], pairs[2*i+1] = p.old, p.new
	}
}

// parsed is the decomposition of a connection string that redaction needs.
type parsed struct {
	scheme       string // everything up to and including "://", or ""
	malformed    bool   // userinfo is everything before the last '@' and is hidden entirely
	hasUserinfo  bool   // a well-formed userinfo part is present
	userinfo     string // raw userinfo (well-formed or malformed)
	user         string // raw user name (well-formed only)
	hasPassword  bool   // the userinfo has a ':' (well-formed only)
	password     string // raw password (well-formed only)
	hostsAndPath string // hosts and "/database", without userinfo or query
	hasQuery     bool
	query        string // raw query without the leading '?'
}

// parse splits s the way the Go driver does (hosts end at the first '/',
// userinfo ends at the last '@' before that) and falls back to treating
// everything before the last '@' as userinfo whenever that reading is
// ambiguous. It never fails.
func parse(s string) parsed {
	var p parsed
	rest := s
	if i := strings.Index(s, "://"); i >= 0 {
		p.scheme, rest = s[:i+3], s[i+3:]
	}

	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		slash = len(rest)
	}
	hostsSection := rest[:slash]
	afterHosts := rest[slash:]
	pathPart, queryPart, _ := strings.Cut(afterHosts, "?")

	sep := -1
	wellFormed := !strings.ContainsAny(hostsSection, "?#") &&
		!strings.Contains(pathPart, "@") &&
		plausibleQuery(queryPart)
	if wellFormed {
		sep = strings.LastIndexByte(hostsSection, '@')
		switch {
		case sep >= 0 && strings.Contains(hostsSection[:sep], "@"):
			wellFormed = false // unescaped '@' inside the userinfo
		case sep < 0 && strings.Contains(afterHosts, "@"):
			// An '@' only in the query of a string without credentials: it
			// may be an option value, or a password containing "/?".
			wellFormed = false
		}
	}
	if !wellFormed {
		sep = strings.LastIndexByte(rest, '@')
		p.malformed = sep >= 0
	}

	tail := rest
	if sep >= 0 {
		p.userinfo = rest[:sep]
		tail = rest[sep+1:]
		if !p.malformed {
			p.hasUserinfo = true
			p.user, p.password, p.hasPassword = strings.Cut(p.userinfo, ":")
		}
	}
	p.hostsAndPath, p.query, p.hasQuery = strings.Cut(tail, "?")
	return p
}

// plausibleQuery reports whether every '@' in a raw query string can be an
// option value, as in appName=me@home. An '@' in an option name or in a token
// without '=', or one followed later by a '/', looks instead like the end of
// a password that contains "/?" followed by the hosts and database.
func plausibleQuery(q string) bool {
	at := strings.LastIndexByte(q, '@')
	if at < 0 {
		return true
	}
	if strings.Contains(q[at:], "/") {
		return false
	}
	for _, opt := range strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' }) {
		key, _, ok := strings.Cut(opt, "=")
		if strings.Contains(opt, "@") && (!ok || strings.Contains(key, "@")) {
			return false
		}
	}
	return true
}

// redactQuery masks secret option values in a raw query string while keeping
// its separators and every other option byte for byte.
func redactQuery(q string) string {
	var b strings.Builder
	b.Grow(len(q))
	start := 0
	for i := 0; i <= len(q); i++ {
		if i < len(q) && q[i] != '&' && q[i] != ';' {
			continue
		}
		b.WriteString(redactOption(q[start:i]))
		if i < len(q) {
			b.WriteByte(q[i])
		}
		start = i + 1
	}
	return b.String()
}

// redactOption masks the value of one key=value query option if it is a
// secret.
func redactOption(opt string) string {
	key, value, ok := strings.Cut(opt, "=")
	if !ok {
		return opt
	}
	name := strings.ToLower(unescape(key))
	switch {
	case isSecretOption(name):
		return key + "=" + maskUnlessEnvRef(value)
	case name == "authmechanismproperties":
		return key + "=" + redactProperties(value)
	}
	return opt
}

// redactProperties masks secret entries of an authMechanismProperties value
// ("NAME:value,NAME:value", possibly percent-encoded). When the value cannot
// be decoded it is masked as a whole.
func redactProperties(raw string) string {
	decoded, err := url.PathUnescape(raw)
	if err != nil {
		return Mask
	}
	entries := strings.Split(decoded, ",")
	changed := false
	for i, e := range entries {
		name, _, ok := strings.Cut(e, ":")
		if ok && isSecretProperty(name) {
			entries[i] = name + ":" + Mask
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return escapeQueryValue(strings.Join(entries, ","))
}

// secretProperties returns the raw values of secret authMechanismProperties
// entries, for Error to mask wherever they appear.
func secretProperties(raw string) []string {
	decoded, err := url.PathUnescape(raw)
	if err != nil {
		return []string{raw}
	}
	var out []string
	for _, e := range strings.Split(decoded, ",") {
		name, value, ok := strings.Cut(e, ":")
		if ok && isSecretProperty(name) {
			out = append(out, value)
		}
	}
	return out
}

// isSecretOption reports whether a connection string option, already
// percent-decoded and lower-cased, carries a secret as its whole value.
func isSecretOption(name string) bool {
	switch name {
	case "password", "tlscertificatekeyfilepassword", "sslclientcertificatekeypassword", "sslpemkeypassword":
		return true
	}
	return false
}

// isSecretProperty reports whether an authMechanismProperties entry name
// denotes a secret, such as AWS_SESSION_TOKEN. Matching on words rather than
// exact names also covers properties added by future mechanisms.
func isSecretProperty(name string) bool {
	upper := strings.ToUpper(strings.TrimSpace(name))
	for _, w := range [...]string{"TOKEN", "SECRET", "PASSWORD", "KEY"} {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// escapeQueryValue percent-encodes the few characters that would change how
// a query string is split, so a rebuilt option value cannot spill into the
// next option.
func escapeQueryValue(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", ";", "%3B", "#", "%23").Replace(s)
}

// unescape percent-decodes s, returning it unchanged if it is not valid.
func unescape(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// secrets returns every secret in the connection string s, raw and decoded:
// the password (or the whole userinfo when s is malformed) and secret option
// values.
func secrets(s string) []string {
	p := parse(s)
	var raw []string
	switch {
	case p.malformed:
		raw = append(raw, p.userinfo)
		if _, pw, ok := strings.Cut(p.userinfo, ":"); ok {
			raw = append(raw, pw)
		}
	case p.hasPassword:
		raw = append(raw, p.password)
	}
	if p.hasQuery {
		for _, opt := range strings.FieldsFunc(p.query, func(r rune) bool { return r == '&' || r == ';' }) {
			key, value, ok := strings.Cut(opt, "=")
			if !ok {
				continue
			}
			name := strings.ToLower(unescape(key))
			switch {
			case isSecretOption(name):
				raw = append(raw, value)
			case name == "authmechanismproperties":
				raw = append(raw, secretProperties(value)...)
			}
		}
	}
	out := make([]string, 0, 2*len(raw))
	for _, r := range raw {
		out = append(out, r)
		if d, err := url.PathUnescape(r); err == nil && d != r {
			out = append(out, d)
		}
		if d, err := url.QueryUnescape(r); err == nil && d != r {
			out = append(out, d)
		}
	}
	return out
}
