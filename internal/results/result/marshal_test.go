package result

import "bytes"

// Marshal is, for tests, what WriteFile writes, in memory.
func Marshal(r *Result) ([]byte, error) {
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		return nil, err
	}

	return buf.Bytes(), nil
}
