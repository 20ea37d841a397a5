package explain

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Normalize detects the format of an explain reply (see the Format*
// constants) and fills in what that format tells: stages, index, collection
// scan, counters, FerretDB's pushdown flags and warnings. Counters the
// reply does not give are -1. Raw keeps the reply as relaxed extended JSON,
// cut to MaxRawBytes. The collection, for warnings, is taken from the
// reply's echo of the command when it has one; Operation and Command are
// left empty. Normalize accepts any bytes, including invalid BSON, which it
// reports in Error.
func Normalize(raw bson.Raw) result.Explain {
	e, d := normalize(raw)
	e.Collection = d.collection
	e.Warnings = warnings(e, d.command)

	return e
}
