package targets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Product names ServerInfo.Product takes.
const (
	// ProductMongoDB is MongoDB itself (Community or Enterprise).
	ProductMongoDB = "MongoDB"

	// ProductFerretDB is FerretDB, which speaks MongoDB's protocol on top of
	// a SQL database and claims a MongoDB version only for compatibility.
	ProductFerretDB = "FerretDB"

	// ProductPercona is Percona Server for MongoDB, a MongoDB fork.
	ProductPercona = "Percona Server for MongoDB"
)

// ServerInfo tells what kind of server answers, so that results are labelled
// with what was really measured. Describe fills it from the server's own
// answers; fields the server does not reveal stay empty.
type ServerInfo struct {
	// Product is one of the Product* constants.
	Product string

	// Version is the MongoDB version the server reports in buildInfo. For
	// FerretDB it is a compatibility claim (e.g. "7.0.42"), not a real
	// MongoDB release.
	Version string

	// FerretDBVersion is FerretDB's own version, e.g. "v1.24.0", or "" if
	// the server is not FerretDB or does not know (embedded FerretDB reports
	// "unknown"; see Embedded.Annotate).
	FerretDBVersion string

	// Backend is the storage under the server when it says so: "SQLite" or
	// "PostgreSQL" for FerretDB, the storage engine (e.g. "wiredTiger") for
	// MongoDB. FerretDB v1.24 only reveals it once a database has been opened.
	Backend string

	// BackendVersion is the backend's version when known, e.g. "3.46.0".
	BackendVersion string

	// IsReplicaSet is true if the server is a replica set member.
	IsReplicaSet bool

	// SetName is the replica set name, or "".
	SetName string

	// IsMongos is true if the server is a mongos router of a sharded cluster.
	IsMongos bool

	// DebugBuild is true if the server says it is a debug build, whose
	// performance is not representative.
	DebugBuild bool

	// Raw holds the decoded buildInfo and hello replies under those keys,
	// for result files that want to keep the full evidence.
	Raw map[string]any
}

// Describe asks the server what it is, through buildInfo and hello (and, for
// details, getLog on FerretDB or serverStatus on MongoDB, whose failures are
// ignored because they may need privileges the user lacks).
func Describe(ctx context.Context, client *mongo.Client) (ServerInfo, error) {
	admin := client.Database("admin")

	buildInfo, err := admin.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		return ServerInfo{}, fmt.Errorf("describe server: buildInfo: %w", err)
	}

	hello, err := runHello(ctx, admin)
	if err != nil {
		return ServerInfo{}, fmt.Errorf("describe server: hello: %w", err)
	}

	info := ServerInfo{
		Product: ProductMongoDB,
		Version: rawString(buildInfo, "version"),
		SetName: rawString(hello, "setName"),
		Raw:     map[string]any{"buildInfo": rawMap(buildInfo), "hello": rawMap(hello)},
	}

	info.IsReplicaSet = info.SetName != ""
	info.IsMongos = rawString(hello, "msg") == "isdbgrid"

	if v, err := buildInfo.LookupErr("debug"); err == nil {
		info.DebugBuild, _ = v.BooleanOK()
	}

	_, ferretVersionErr := buildInfo.LookupErr("ferretdbVersion")
	_, ferretFeaturesErr := buildInfo.LookupErr("ferretdbFeatures")

	switch {
	case ferretVersionErr == nil || ferretFeaturesErr == nil:
		info.Product = ProductFerretDB
		info.FerretDBVersion = knownVersion(rawString(buildInfo, "ferretdbVersion"))
		info.Backend, info.BackendVersion = ferretDBBackend(ctx, admin)

	case rawString(buildInfo, "psmdbVersion") != "":
		info.Product = ProductPercona
		info.Backend = storageEngine(ctx, admin)

	default:
		info.Backend = storageEngine(ctx, admin)
	}

	return info, nil
}

// Notes returns plain-language caveats about what the numbers measured on
// this server mean, one sentence each, for the run header and the report.
func (s ServerInfo) Notes() []string {
	var notes []string

	if s.Product == ProductFerretDB {
		what := "FerretDB"
		if s.FerretDBVersion != "" {
			what += " " + s.FerretDBVersion
		}

		if s.Backend != "" {
			what += " on " + s.Backend
		}

		notes = append(notes, "numbers describe "+what+", not MongoDB")
	}

	if s.DebugBuild {
		notes = append(notes, "the server is a debug build, which is slower than a release build")
	}

	return notes
}

// Summary returns a one-line label for the server, e.g. "MongoDB 7.0.12
// (replica set rs0)" or "FerretDB v1.24.0 on SQLite 3.46.0 (MongoDB 7.0.42
// compatible)".
func (s ServerInfo) Summary() string {
	var b strings.Builder

	if s.Product == ProductFerretDB {
		b.WriteString(ProductFerretDB)

		if s.FerretDBVersion != "" {
			b.WriteString(" " + s.FerretDBVersion)
		}

		if s.Backend != "" {
			b.WriteString(" on " + strings.TrimSpace(s.Backend+" "+s.BackendVersion))
		}

		if s.Version != "" {
			b.WriteString(" (MongoDB " + s.Version + " compatible)")
		}

		return b.String()
	}

	b.WriteString(s.Product)

	if s.Version != "" {
		b.WriteString(" " + s.Version)
	}

	switch {
	case s.IsMongos:
		b.WriteString(" (mongos)")
	case s.IsReplicaSet:
		b.WriteString(" (replica set " + s.SetName + ")")
	default:
		b.WriteString(" (standalone)")
	}

	return b.String()
}

// runHello runs hello, falling back to the legacy isMaster for servers older
// than MongoDB 4.4.2 that do not know hello.
func runHello(ctx context.Context, admin *mongo.Database) (bson.Raw, error) {
	raw, err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Raw()
	if err == nil {
		return raw, nil
	}

	var ce mongo.CommandError
	if errors.As(err, &ce) && ce.Code == 59 { // CommandNotFound
		return admin.RunCommand(ctx, bson.D{{Key: "isMaster", Value: 1}}).Raw()
	}

	return nil, err
}

// ferretDBBackend reads FerretDB's backend from its startup warnings, whose
// first line reads "Powered by FerretDB v1.24.0 and SQLite 3.46.0." once a
// database has been opened (before that, the "and ..." part is missing).
func ferretDBBackend(ctx context.Context, admin *mongo.Database) (name, version string) {
	var res struct {
		Log []string `bson:"log"`
	}

	if err := admin.RunCommand(ctx, bson.D{{Key: "getLog", Value: "startupWarnings"}}).Decode(&res); err != nil {
		return "", ""
	}

	for _, line := range res.Log {
		var entry struct {
			Msg string `json:"msg"`
		}

		if json.Unmarshal([]byte(line), &entry) != nil {
			entry.Msg = line
		}

		name, version, ok := parsePoweredBy(entry.Msg)
		if ok {
			return name, version
		}
	}

	return "", ""
}

// parsePoweredBy extracts the backend from FerretDB's "Powered by FerretDB
// <version> and <backend> <backend version>." startup line.
func parsePoweredBy(msg string) (name, version string, ok bool) {
	rest, found := strings.CutPrefix(msg, "Powered by FerretDB ")
	if !found {
		return "", "", false
	}

	_, backend, found := strings.Cut(strings.TrimSuffix(rest, "."), " and ")
	if !found {
		return "", "", false
	}

	name, version, _ = strings.Cut(strings.TrimSpace(backend), " ")

	return name, strings.TrimSpace(version), name != ""
}

// storageEngine returns the storage engine's name from serverStatus, or ""
// when the user may not run serverStatus.
func storageEngine(ctx context.Context, admin *mongo.Database) string {
	var res struct {
		StorageEngine struct {
			Name string `bson:"name"`
		} `bson:"storageEngine"`
	}

	if err := admin.RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&res); err != nil {
		return ""
	}

	return res.StorageEngine.Name
}

// knownVersion maps FerretDB's placeholder "unknown" to "".
func knownVersion(v string) string {
	if v == "unknown" {
		return ""
	}

	return v
}

// rawString returns the string value of key in doc, or "".
func rawString(doc bson.Raw, key string) string {
	v, err := doc.LookupErr(key)
	if err != nil {
		return ""
	}

	s, _ := v.StringValueOK()

	return s
}

// rawMap decodes doc into a map for ServerInfo.Raw, or returns nil if the
// reply cannot be decoded (it was already parsed successfully, so this is
// only defensive).
func rawMap(doc bson.Raw) map[string]any {
	var m map[string]any
	if err := bson.Unmarshal(doc, &m); err != nil {
		return nil
	}

	return m
}
