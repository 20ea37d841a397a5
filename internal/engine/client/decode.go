package client

import "encoding/json"

// parseReply reads the lines an adapter sends while a phase runs (done,
// need, stopped) without encoding/json's reflection, which cost more than
// two microseconds per reported operation (BenchmarkGoSide). It accepts
// only what it fully understands: keys type, worker, r and starved,
// integers without fraction or exponent, strings without escapes, any
// whitespace between tokens. Anything else (ready and fatal lines, an
// unexpected key, a malformed line) returns false and the caller decodes
// the line with encoding/json, which stays the reference: a line is never
// read differently by the two (TestParseReplyMatchesJSON).
func parseReply(b []byte) (Reply, bool) {
	p := lineParser{b: b}

	var r Reply

	if !p.byte('{') {
		return Reply{}, false
	}

	for first := true; ; first = false {
		if p.peek() == '}' && first {
			p.i++
			break
		}

		if !first && !p.byte(',') {
			return Reply{}, false
		}

		key, ok := p.str()
		if !ok || !p.byte(':') {
			return Reply{}, false
		}

		switch key {
		case "type":
			t, ok := p.str()
			if !ok {
				return Reply{}, false
			}

			r.Type = t
		case "worker":
			n, ok := p.int()
			if !ok || n != int64(int(n)) {
				return Reply{}, false
			}

			r.Worker = int(n)
		case "starved":
			if r.Starved, ok = p.int(); !ok {
				return Reply{}, false
			}
		case "r":
			if r.Records, ok = p.records(); !ok {
				return Reply{}, false
			}
		default:
			return Reply{}, false
		}

		if p.peek() == '}' {
			p.i++
			break
		}
	}

	if p.skip(); p.i != len(p.b) {
		return Reply{}, false
	}

	switch r.Type {
	case msgDone, msgNeed, msgStopped:
		return r, true
	}

	return Reply{}, false
}

// lineParser is a cursor over one line.
type lineParser struct {
	b []byte
	i int
}

func (p *lineParser) skip() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// peek is the next byte after whitespace (0 at the end).
func (p *lineParser) peek() byte {
	p.skip()

	if p.i < len(p.b) {
		return p.b[p.i]
	}

	return 0
}

func (p *lineParser) byte(c byte) bool {
	if p.peek() != c {
		return false
	}

	p.i++

	return true
}

// str reads a string without escapes or control characters.
func (p *lineParser) str() (string, bool) {
	if !p.byte('"') {
		return "", false
	}

	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++

			return s, true
		case c == '\\' || c < 0x20:
			return "", false
		}

		p.i++
	}

	return "", false
}

// int reads an integer of at most 18 digits (no overflow possible).
func (p *lineParser) int() (int64, bool) {
	p.skip()

	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}

	start := p.i

	var n int64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}

	digits := p.i - start
	if digits == 0 || digits > 18 || (digits > 1 && p.b[start] == '0') {
		return 0, false
	}

	// A fraction or an exponent is JSON's business.
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}

	if neg {
		n = -n
	}

	return n, true
}

// records reads a done line's r: [[OPID,START_NS,LATENCY_NS,DOCS,ERR],…].
func (p *lineParser) records() ([]Record, bool) {
	if !p.byte('[') {
		return nil, false
	}

	// One allocation per line: a record is at least 12 bytes of text.
	out := make([]Record, 0, min(len(p.b)/12+1, 1024))

	if p.peek() == ']' {
		p.i++
		return out, true
	}

	for {
		var rec Record

		if !p.byte('[') {
			return nil, false
		}

		for k, dst := range [...]*int64{nil, &rec.StartNS, &rec.Latency, &rec.Docs} {
			if k > 0 && !p.byte(',') {
				return nil, false
			}

			n, ok := p.int()
			if !ok {
				return nil, false
			}

			if dst == nil {
				if n != int64(int(n)) {
					return nil, false
				}

				rec.Op = int(n)
			} else {
				*dst = n
			}
		}

		if !p.byte(',') {
			return nil, false
		}

		switch p.peek() {
		case 'n':
			if len(p.b)-p.i < 4 || string(p.b[p.i:p.i+4]) != "null" {
				return nil, false
			}

			p.i += 4
		case '{':
			end, ok := p.objectEnd()
			if !ok {
				return nil, false
			}

			// Failures are rare: encoding/json reads the error object.
			var e AdapterError
			if json.Unmarshal(p.b[p.i:end], &e) != nil {
				return nil, false
			}

			rec.Err = &e
			p.i = end
		default:
			return nil, false
		}

		// The optional sixth element: the client's decode time.
		rec.DecodeNS = -1

		if p.peek() == ',' {
			p.i++

			n, ok := p.int()
			if !ok || n < 0 {
				return nil, false
			}

			rec.DecodeNS = n
		}

		if !p.byte(']') {
			return nil, false
		}

		out = append(out, rec)

		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, true
		default:
			return nil, false
		}
	}
}

// objectEnd is the index just past the object starting at p.i, strings
// and their escapes skipped; json.Unmarshal then judges its content.
func (p *lineParser) objectEnd() (int, bool) {
	depth := 0

	for i := p.i; i < len(p.b); i++ {
		switch p.b[i] {
		case '"':
			for i++; i < len(p.b) && p.b[i] != '"'; i++ {
				if p.b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}

	return 0, false
}
