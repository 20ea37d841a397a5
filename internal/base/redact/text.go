package redact

import (
	"io"
	"regexp"
	"strings"
)

// schemeRe finds the start of a URL with an authority ("scheme://") in free
// text. Any scheme counts, not only mongodb: PostgreSQL URLs and other
// connection strings carry passwords the same way.
var schemeRe = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://`)

// assignRe finds key=value pairs in free text whose key may name a secret,
// such as "password=hunter2" in a message that quotes part of a query.
// The key must start the text or follow a separator, so that a run of
// base64 ending in '=' padding is never taken for one.
var assignRe = regexp.MustCompile(`(^|[\s?&;,(\[{])([A-Za-z0-9_.-]{1,64})=([^\s&;,"'=][^\s&;,"']*)`)

// jsonKeyRe finds "key": in JSON or extended JSON quoted in free text, such
// as a command or a server's answer.
var jsonKeyRe = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*`)

// Text returns s with every connection string in it redacted as by URI, and
// the values of key=value pairs and of JSON "key": value pairs whose key
// names a secret (see IsSecretKey) replaced by Mask. It is meant for free
// text (error messages, notes, a command or a server's answer quoted as
// extended JSON) that may quote a connection string or a secret field.
//
// A connection string ends at the first white space, so a password
// containing white space is only partly recognised; connection strings
// with such passwords must be scrubbed where they are known (Error).
func Text(s string) string {
	if strings.Contains(s, "://") {
		s = redactURIsInText(s)
	}

	if strings.Contains(s, "=") {
		s = assignRe.ReplaceAllStringFunc(s, func(m string) string {
			sub := assignRe.FindStringSubmatch(m)
			if value := sub[3]; value == Mask || IsEnvRef(value) || !IsSecretKey(sub[2]) {
				return m
			}

			return sub[1] + sub[2] + "=" + Mask
		})
	}

	if strings.Contains(s, `":`) || strings.Contains(s, `" :`) {
		s = maskJSONSecrets(s)
	}

	return s
}

// maskJSONSecrets masks the values of secret keys in JSON text: a string or
// number value, or every string and number inside an object or array value
// (its keys kept), so "password": {"$eq": "x"} is masked too. The text
// outside those values is kept byte for byte.
func maskJSONSecrets(s string) string {
	var b strings.Builder

	for {
		loc := jsonKeyRe.FindStringSubmatchIndex(s)
		if loc == nil {
			b.WriteString(s)

			return b.String()
		}

		b.WriteString(s[:loc[1]])
		rest := s[loc[1]:]

		if !IsSecretKey(s[loc[2]:loc[3]]) {
			s = rest

			continue
		}

		end := jsonValueEnd(rest)
		b.WriteString(maskJSONScalars(rest[:end]))
		s = rest[end:]
	}
}

// jsonValueEnd returns the length of the JSON value at the start of s: a
// string, a bracketed object or array (to its matching bracket, or the end
// of s), or a bare scalar up to the next ',', '}', ']' or white space.
func jsonValueEnd(s string) int {
	if s == "" {
		return 0
	}

	switch s[0] {
	case '"':
		return stringEnd(s)
	case '{', '[':
		depth := 0

		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '"':
				i += stringEnd(s[i:]) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}

		return len(s)
	}

	if i := strings.IndexAny(s, ",}] \t\r\n"); i >= 0 {
		return i
	}

	return len(s)
}

// stringEnd returns the length of the JSON string literal at the start of
// s, closing quote included, or len(s) when it is not closed.
func stringEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}

	return len(s)
}

// maskJSONScalars replaces every string and bare scalar of the JSON value v
// by Mask, except object keys and the literals true, false and null.
func maskJSONScalars(v string) string {
	var b strings.Builder

	for i := 0; i < len(v); {
		c := v[i]

		switch {
		case c == '"':
			n := stringEnd(v[i:])
			if strings.HasPrefix(strings.TrimLeft(v[i+n:], " \t\r\n"), ":") {
				b.WriteString(v[i : i+n]) // a key
			} else {
				b.WriteString(`"` + Mask + `"`)
			}

			i += n
		case strings.ContainsRune("{}[],: \t\r\n", rune(c)):
			b.WriteByte(c)
			i++
		default:
			n := jsonValueEnd(v[i:])
			if n == 0 {
				n = 1
			}

			switch lit := v[i : i+n]; lit {
			case "true", "false", "null":
				b.WriteString(lit)
			default:
				b.WriteString(`"` + Mask + `"`)
			}

			i += n
		}
	}

	return b.String()
}

// redactURIsInText redacts each "scheme://..." token of s, a token ending
// at white space.
func redactURIsInText(s string) string {
	var b strings.Builder

	b.Grow(len(s))

	for {
		loc := schemeRe.FindStringIndex(s)
		if loc == nil {
			b.WriteString(s)

			return b.String()
		}

		b.WriteString(s[:loc[0]])

		end := strings.IndexAny(s[loc[0]:], " \t\r\n")
		if end < 0 {
			end = len(s)
		} else {
			end += loc[0]
		}

		b.WriteString(URI(s[loc[0]:end]))
		s = s[end:]
	}
}

// IsSecretKey reports whether a field or option name names a secret:
// passwords, pass phrases, secrets, tokens, credentials and keys that are
// secret by name (api_key, accessKey, private-key, ...). Case and the
// separators '_', '-', '.' and ' ' are ignored. Plain "key" and "keys" are
// not secrets: workloads use them for index keys.
func IsSecretKey(name string) bool {
	n := normalizeKey(name)
	if n == "" {
		return false
	}

	switch n {
	case "pwd", "pass", "passwd", "auth":
		return true
	}

	for _, w := range [...]string{"password", "passwd", "passphrase", "secret", "token", "credential", "pwd"} {
		if strings.Contains(n, w) {
			return true
		}
	}

	if strings.HasSuffix(n, "key") || strings.HasSuffix(n, "keys") {
		for _, p := range [...]string{"api", "access", "private", "session", "auth", "encryption", "signing", "master", "client", "license", "account"} {
			if strings.Contains(n, p) {
				return true
			}
		}
	}

	return false
}

// normalizeKey lower-cases name and drops the separators people put
// between words, so that apiKey, api_key and API-KEY compare equal.
func normalizeKey(name string) string {
	var b strings.Builder

	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		switch r {
		case '_', '-', '.', ' ', '"', '\'':
			continue
		}

		b.WriteRune(r)
	}

	return b.String()
}

// Ambiguous reports whether s is a connection string whose user name and
// password cannot be told apart from its hosts reliably: an unescaped '@',
// '/', '?' or '#' in the user information. The MongoDB driver splits at the
// first '@' while the password may continue past it, so a driver error
// about "the host" would quote part of the password; such strings must be
// rejected before the driver sees them, with a message that shows them
// redacted.
func Ambiguous(s string) bool {
	return parse(s).malformed
}

// envRefRe is a reference to an environment variable, as expanded in
// connection strings at run time.
var envRefRe = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// IsEnvRef reports whether s is exactly a ${NAME} reference to an
// environment variable. Such a value names where the secret comes from and
// is not a secret itself, so it is kept as written: a saved workload still
// says mongodb://bench:${BENCH_PASSWORD}@db/, and can be run again as is.
func IsEnvRef(s string) bool { return envRefRe.MatchString(s) }

// maskUnlessEnvRef returns Mask, or s when it is a ${NAME} reference.
func maskUnlessEnvRef(s string) string {
	if IsEnvRef(s) {
		return s
	}

	return Mask
}

// Writer returns a writer that passes everything written to w through Text,
// for log handlers and other streams whose messages mongobench does not
// build itself. Each Write is masked on its own, so a connection string
// split across two writes is not recognised; log handlers write a record
// at a time.
func Writer(w io.Writer) io.Writer { return textWriter{w} }

type textWriter struct{ w io.Writer }

// Write masks p and writes it, reporting all of p as written when the
// masked text was.
func (t textWriter) Write(p []byte) (int, error) {
	masked := Text(string(p))
	if _, err := io.WriteString(t.w, masked); err != nil {
		return 0, err
	}

	return len(p), nil
}
