package redact

import (
	"regexp"
	"strings"
)

// yamlKeyRe finds "key:" in a line of YAML, block or flow style: the key,
// optionally quoted, is at the start of the line (after indentation and
// any "- ", or in a comment after "#"), follows '{' or ',' in a flow
// mapping, or starts a comment at the end of a line. Group 1 is what
// precedes the key, group 2 the key with its quotes, group 3 the colon and
// the white space after it.
var yamlKeyRe = regexp.MustCompile(`(^\s*(?:#\s*)?(?:-\s+)*|[{,]\s*|\s#\s*)("[^"]*"|'[^']*'|[A-Za-z0-9_.$ -]*[A-Za-z0-9_.$-])(\s*:(?:\s+|$))`)

// YAML returns the YAML text src with the values of secret keys (see
// IsSecretKey) replaced by Mask, and every connection string in it, comments
// included, redacted as by Text. A secret key's value is masked whatever its
// form: a plain or quoted scalar, a flow collection, a block scalar (| or >)
// or a nested block of lines, every line of which is masked after its key.
// The lines and their indentation are kept, so that positions in the text
// still match the original file.
//
// It works line by line and does not need src to be valid YAML, so it also
// masks what it can of a file that failed to parse.
func YAML(src string) string {
	lines := strings.SplitAfter(src, "\n")

	// secretIndent is the indentation of the secret key whose nested block
	// is being masked, or -1 when none is.
	secretIndent := -1

	for i, line := range lines {
		body := strings.TrimRight(line, "\r\n")
		eol := line[len(body):]

		if secretIndent >= 0 {
			if indent, blank := indentOf(body); blank || indent > secretIndent {
				if !blank {
					lines[i] = maskNestedLine(body, indent) + eol
				}

				continue
			}
			// The block ended: this line is read afresh below, which
			// also resets secretIndent.
		}

		masked, keyColumn := maskYAMLLine(body)
		secretIndent = keyColumn

		lines[i] = Text(masked) + eol
	}

	return strings.Join(lines, "")
}

// maskYAMLLine masks the values of the secret keys on one line. When a
// secret key's value continues on the following lines (a block scalar or a
// nested block), it returns the key's column, from which lines indented
// further belong to it; otherwise -1.
func maskYAMLLine(line string) (string, int) {
	locs := yamlKeyRe.FindAllStringSubmatchIndex(line, -1)
	for _, loc := range locs {
		key := line[loc[4]:loc[5]]
		if !IsSecretKey(strings.Trim(key, `"'`)) {
			continue
		}

		valueStart := loc[7]
		rest := line[valueStart:]
		flow := strings.ContainsAny(line[loc[2]:loc[3]], "{,")
		value := rest

		if flow && !strings.HasPrefix(strings.TrimSpace(rest), "[") && !strings.HasPrefix(strings.TrimSpace(rest), "{") {
			if end := strings.IndexAny(rest, ",}"); end >= 0 {
				value = rest[:end]
			}
		}

		trimmed := strings.TrimSpace(value)
		switch {
		case IsEnvRef(strings.Trim(trimmed, `"'`)):
			continue // names the secret's variable: kept as written
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			// The value is on the next lines: mask them.
			return line, loc[4]
		case strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, ">"):
			return line[:valueStart] + Mask, loc[4]
		}

		if flow {
			return maskYAMLLineRest(line[:valueStart]+Mask, line[valueStart+len(value):]), -1
		}

		// In block style the value ends the line, a comment included, and
		// lines indented further continue it (a quoted or plain scalar
		// over several lines): mask them too.
		return line[:valueStart] + Mask, loc[4]
	}

	return line, -1
}

// maskYAMLLineRest masks the secret keys of the rest of a flow mapping line
// after a value was masked.
func maskYAMLLineRest(head, rest string) string {
	if rest == "" {
		return head
	}

	masked, _ := maskYAMLLine(rest)

	return head + masked
}

// maskNestedLine masks everything after the key of a line nested under a
// secret key ("user: x" becomes "user: xxxxx", "- x" becomes "- xxxxx").
func maskNestedLine(line string, indent int) string {
	content := line[indent:]
	if strings.HasPrefix(content, "#") {
		return line[:indent] + "# " + Mask
	}

	if loc := yamlKeyRe.FindStringSubmatchIndex(content); loc != nil && loc[0] == 0 {
		if strings.TrimSpace(content[loc[7]:]) == "" {
			return line // a key whose value is on the next lines
		}

		return line[:indent] + content[:loc[7]] + Mask
	}

	if strings.HasPrefix(content, "- ") {
		return line[:indent] + "- " + Mask
	}

	return line[:indent] + Mask
}

// indentOf returns the number of leading spaces of line and whether the
// line is blank.
func indentOf(line string) (int, bool) {
	trimmed := strings.TrimLeft(line, " \t")
	return len(line) - len(trimmed), trimmed == ""
}
