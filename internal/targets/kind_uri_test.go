package targets

import (
	"strings"
	"testing"
)

func TestURIKindValidate(t *testing.T) {
	tests := []struct {
		uri  string
		want string // "" for valid
	}{
		{"mongodb://127.0.0.1:27017/", ""},
		{"MongoDB://host/", ""},
		{"mongodb+srv://user:secret@cluster.example.net/", ""},
		{"http://host/", `the connection string has scheme "http://"; it must start with mongodb:// or mongodb+srv://`},
		{"postgres://user:secret@host/db", `the connection string has scheme "postgres://"; it must start with mongodb:// or mongodb+srv://`},
		{"localhost:27017", "the connection string must start with mongodb:// or mongodb+srv://"},
		{"mongodb://", "the connection string has scheme \"mongodb://\"; it must start with mongodb:// or mongodb+srv://"},
		{"user:secret@host://x", "the connection string must start with mongodb:// or mongodb+srv://"},
	}

	for _, tt := range tests {
		err := Validate(TargetSpec{Kind: KindURI, URI: tt.uri})

		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate(%q) = %v, want nil", tt.uri, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("Validate(%q) = %v, want %s", tt.uri, err, tt.want)
		}

		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Validate(%q) shows the password: %v", tt.uri, err)
		}
	}
}

func TestURIKindFlag(t *testing.T) {
	if _, err := ParseTargetFlag("uri:http://host/"); err == nil || !strings.Contains(err.Error(), "must start with mongodb://") {
		t.Errorf(`ParseTargetFlag("uri:http://host/") = %v, want a scheme error`, err)
	}
}
