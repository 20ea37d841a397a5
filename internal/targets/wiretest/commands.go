package wiretest

import (
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Error codes the server answers with, as MongoDB numbers them.
const (
	codeCommandNotFound       = 59
	codeUnsupportedOpQueryCmd = 352
	codeMissingDB             = 40571
)

// answer builds the reply document for req. It never fails: whatever the
// client asks, it gets a well-formed document, an error document at worst,
// because an error reply is what a real server gives and what the code
// under test must handle.
func (s *Server) answer(req *request, cmd string, connID int64, now time.Time) bson.D {
	isHello := cmd == "hello" || cmd == "isMaster" || cmd == "ismaster"

	if req.opCode == opQuery && !isHello {
		// MongoDB 5.1 removed OP_QUERY commands other than the handshake.
		return commandError(codeUnsupportedOpQueryCmd, "UnsupportedOpQueryCommand",
			fmt.Sprintf("Unsupported OP_QUERY command: %s. The client driver may require an upgrade.", cmd))
	}

	db := req.db()
	if req.opCode == opMsg && db == "" {
		return commandError(codeMissingDB, "Location40571", "OP_MSG requests require a $db argument")
	}

	switch cmd {
	case "hello", "isMaster", "ismaster":
		return s.helloReply(connID, now)

	case "ping", "endSessions", "create", "dropDatabase":
		return ok()

	case "killCursors":
		// Every cursor this server hands out is already exhausted (id 0),
		// so there is never anything to kill.
		return ok(
			bson.E{Key: "cursorsKilled", Value: bson.A{}},
			bson.E{Key: "cursorsNotFound", Value: bson.A{}},
			bson.E{Key: "cursorsAlive", Value: bson.A{}},
			bson.E{Key: "cursorsUnknown", Value: bson.A{}},
		)

	case "createIndexes":
		// Pretend each requested index is new, on top of the _id index.
		n := req.countDocs("indexes")

		return ok(
			bson.E{Key: "numIndexesBefore", Value: int32(1)},
			bson.E{Key: "numIndexesAfter", Value: int32(1 + n)},
			bson.E{Key: "createdCollectionAutomatically", Value: false},
		)

	case "drop":
		return ok(
			bson.E{Key: "nIndexesWas", Value: int32(1)},
			bson.E{Key: "ns", Value: namespace(db, req.body)},
		)

	case "buildInfo", "buildinfo":
		return ok(
			bson.E{Key: "version", Value: "7.0.0"},
			bson.E{Key: "gitVersion", Value: "wiretest"},
			bson.E{Key: "versionArray", Value: bson.A{int32(7), int32(0), int32(0), int32(0)}},
			bson.E{Key: "bits", Value: int32(64)},
			bson.E{Key: "debug", Value: false},
			bson.E{Key: "maxBsonObjectSize", Value: int32(maxBSONObjectSize)},
			// Lets callers (and mongobench's server description) tell this
			// fixture from a real server.
			bson.E{Key: "wiretest", Value: true},
		)

	case "insert":
		return ok(bson.E{Key: "n", Value: int32(req.countDocs("documents"))})

	case "update":
		// Every statement "matches and modifies" one document, so update
		// paths in the code under test see success, not a no-op.
		k := int32(req.countDocs("updates"))

		return ok(bson.E{Key: "n", Value: k}, bson.E{Key: "nModified", Value: k})

	case "delete":
		return ok(bson.E{Key: "n", Value: int32(req.countDocs("deletes"))})

	case "find":
		return cursorReply("firstBatch", s.batch(findLimit(req.body)), namespace(db, req.body))

	case "aggregate":
		return s.aggregateReply(req.body, db)

	case "getMore":
		coll, _ := req.body.Lookup("collection").StringValueOK()

		return cursorReply("nextBatch", bson.A{}, db+"."+coll)

	case "count":
		return ok(bson.E{Key: "n", Value: int32(0)})

	case "collStats":
		if !s.countInserts {
			break
		}

		ns := namespace(db, req.body)

		return ok(
			bson.E{Key: "ns", Value: ns},
			bson.E{Key: "count", Value: s.insertedInto(ns)},
			bson.E{Key: "size", Value: int64(0)},
			bson.E{Key: "storageSize", Value: int64(0)},
			bson.E{Key: "totalIndexSize", Value: int64(0)},
		)

	case "listCollections":
		return cursorReply("firstBatch", bson.A{}, db+".$cmd.listCollections")

	case "listDatabases":
		return ok(
			bson.E{Key: "databases", Value: bson.A{}},
			bson.E{Key: "totalSize", Value: int64(0)},
			bson.E{Key: "totalSizeMb", Value: int64(0)},
		)
	}

	return commandError(codeCommandNotFound, "CommandNotFound", fmt.Sprintf("no such command: '%s'", cmd))
}

// Limits advertised in hello, those of MongoDB 7.0.
const (
	maxBSONObjectSize = 16 * 1024 * 1024
	maxWriteBatchSize = 100_000
	maxWireVersion    = 21 // MongoDB 7.0
)

// helloReply describes a writable standalone. It deliberately omits
// topologyVersion, so that drivers poll with plain hellos instead of
// opening streaming (exhaust) monitoring connections, and omits
// compression, so that no message arrives as OP_COMPRESSED.
func (s *Server) helloReply(connID int64, now time.Time) bson.D {
	return ok(
		bson.E{Key: "helloOk", Value: true},
		bson.E{Key: "ismaster", Value: true},
		bson.E{Key: "isWritablePrimary", Value: true},
		bson.E{Key: "maxBsonObjectSize", Value: int32(maxBSONObjectSize)},
		bson.E{Key: "maxMessageSizeBytes", Value: int32(maxMessageSize)},
		bson.E{Key: "maxWriteBatchSize", Value: int32(maxWriteBatchSize)},
		bson.E{Key: "localTime", Value: bson.NewDateTimeFromTime(now)},
		bson.E{Key: "logicalSessionTimeoutMinutes", Value: int32(30)},
		bson.E{Key: "connectionId", Value: connID},
		bson.E{Key: "minWireVersion", Value: int32(0)},
		bson.E{Key: "maxWireVersion", Value: int32(maxWireVersion)},
		bson.E{Key: "readOnly", Value: false},
	)
}

// aggregateReply answers like find, except that a pipeline that groups or
// counts gets an empty batch: that is what a real server returns for an
// empty collection, and it makes the driver's CountDocuments report 0, in
// agreement with the count command.
func (s *Server) aggregateReply(body bson.Raw, db string) bson.D {
	ns := db + ".$cmd.aggregate" // a database-level pipeline ({aggregate: 1})
	if coll, isColl := firstValue(body).StringValueOK(); isColl {
		ns = db + "." + coll
	}

	if hasStage(body, "$group", "$count") {
		return cursorReply("firstBatch", bson.A{}, ns)
	}

	return cursorReply("firstBatch", s.batch(-1), ns)
}

// hasStage reports whether the command's pipeline has a stage named one of
// names.
func hasStage(body bson.Raw, names ...string) bool {
	pipeline, isArray := body.Lookup("pipeline").ArrayOK()
	if !isArray {
		return false
	}

	stages, err := pipeline.Values()
	if err != nil {
		return false
	}

	for _, st := range stages {
		doc, isDoc := st.DocumentOK()
		if !isDoc {
			continue
		}

		first, err := doc.IndexErr(0)
		if err != nil {
			continue
		}

		for _, n := range names {
			if first.Key() == n {
				return true
			}
		}
	}

	return false
}

// batch returns the first limit canned documents, all of them when limit is
// negative or larger than Config.FindDocs.
func (s *Server) batch(limit int64) bson.A {
	if limit >= 0 && limit < int64(len(s.docs)) {
		return s.docs[:limit]
	}

	return s.docs
}

// findLimit returns find's limit as a count of documents, or -1 for none.
// A negative limit means "one batch of at most |limit|", which for a server
// that always answers in one batch is the same thing.
func findLimit(body bson.Raw) int64 {
	limit, isNum := body.Lookup("limit").AsInt64OK()
	if !isNum || limit == 0 {
		return -1
	}

	if limit < 0 {
		return -limit
	}

	return limit
}

// namespace returns "<db>.<collection>" for a command whose first value
// names a collection.
func namespace(db string, body bson.Raw) string {
	coll, _ := firstValue(body).StringValueOK()

	return db + "." + coll
}

// firstValue returns the value of the body's first element (the command
// name's argument), or a zero value for an empty body. It avoids Raw.Index,
// which panics when out of range.
func firstValue(body bson.Raw) bson.RawValue {
	e, err := body.IndexErr(0)
	if err != nil {
		return bson.RawValue{}
	}

	return e.Value()
}

// cursorReply builds an exhausted cursor (id 0) holding docs; batchKey is
// firstBatch or nextBatch.
func cursorReply(batchKey string, docs bson.A, ns string) bson.D {
	return ok(bson.E{Key: "cursor", Value: bson.D{
		{Key: batchKey, Value: docs},
		{Key: "id", Value: int64(0)},
		{Key: "ns", Value: ns},
	}})
}

// ok builds a successful reply: fields, then ok: 1.0.
func ok(fields ...bson.E) bson.D {
	return append(bson.D(fields), bson.E{Key: "ok", Value: 1.0})
}

// commandError builds a command failure the way MongoDB reports one, which
// drivers turn into their command-error type with code and codeName.
func commandError(code int32, codeName, msg string) bson.D {
	return bson.D{
		{Key: "ok", Value: 0.0},
		{Key: "errmsg", Value: msg},
		{Key: "code", Value: code},
		{Key: "codeName", Value: codeName},
	}
}
