package bench

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestSetupRace checks which set-up failures make resetAndCreate reset and
// try again: those the previous trial's abandoned operations cause, and no
// others (a bad index definition must fail at once).
func TestSetupRace(t *testing.T) {
	t.Parallel()

	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"none":                     {nil, false},
		"collection exists":        {mongo.CommandError{Code: 48, Name: "NamespaceExists"}, true},
		"index options conflict":   {mongo.CommandError{Code: 85, Name: "IndexOptionsConflict"}, true},
		"index key specs conflict": {mongo.CommandError{Code: 86, Name: "IndexKeySpecsConflict"}, true},
		"FerretDB's SQLite race":   {mongo.CommandError{Code: 1, Name: "InternalError", Message: "SQL logic error: index scores_c6e11a12_user_id_1 already exists (1)"}, true},
		"connection closed":        {mongo.CommandError{Code: 0, Labels: []string{"NetworkError"}}, true},
		"bad index":                {mongo.CommandError{Code: 67, Name: "CannotCreateIndex"}, false},
		"not a server error":       {errors.New("boom"), false},
	} {
		if got := setupRace(tc.err); got != tc.want {
			t.Errorf("%s: setupRace = %v, want %v", name, got, tc.want)
		}
	}
}
