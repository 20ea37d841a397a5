package wireproxy_test

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/embeddedtest"
	"github.com/mongobench/mongobench/internal/targets/wireproxy"
)

// TestNoCredentialReachesTheRecording is the canary: an application logs
// in through the proxy (PLAIN, whose payload is the password itself, and
// SCRAM), creates a user, and writes documents with secret-named fields,
// each carrying a planted value; a value known to be secret (the upstream
// URI's password) appears in an ordinary field. None reaches the
// recording, and the commands are still recorded.
func TestNoCredentialReachesTheRecording(t *testing.T) {
	const (
		plainPW   = "canary-plain-Xq7"
		scramPW   = "canary-scram-Kw2"
		userPW    = "canary-createuser-Zr9"
		fieldPW   = "canary-field-Tn4"
		tokenVal  = "canary-token-Bv8"
		upstream  = "canary-upstream-Hs3"
		mechUser  = "canaryuser"
		collName  = "secrets"
		dbName    = "wpsecret"
		nestedKey = "nested"
	)

	e := embeddedtest.Start(t, targets.EmbeddedOptions{})

	u, err := url.Parse(e.URI())
	if err != nil {
		t.Fatal(err)
	}

	u.User = url.UserPassword("admin", upstream)

	addr, err := wireproxy.UpstreamAddr(u.String())
	if err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer

	p, err := wireproxy.Start(wireproxy.Config{Upstream: addr, Out: &out, Secrets: redact.KnownValues(upstream)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = p.Close() })

	ctx := t.Context()

	// Log-ins: whether the server accepts them does not matter, their
	// payloads pass through the proxy either way.
	for _, mech := range []struct{ name, pw string }{{"PLAIN", plainPW}, {"SCRAM-SHA-256", scramPW}} {
		opts := options.Client().ApplyURI(p.URI()).SetTimeout(10 * time.Second).
			SetAuth(options.Credential{AuthMechanism: mech.name, AuthSource: "admin", Username: mechUser, Password: mech.pw})

		c, err := mongo.Connect(opts)
		if err != nil {
			t.Fatal(err)
		}

		_ = c.Ping(ctx, nil) // fails where the server refuses the log-in
		_ = c.Disconnect(ctx)
	}

	c := connect(t, p.URI())
	db := c.Database(dbName)

	_ = db.RunCommand(ctx, bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: userPW}, {Key: "roles", Value: bson.A{}}}).Err()

	if _, err := db.Collection(collName).InsertOne(ctx, bson.D{
		{Key: "name", Value: "kept"},
		{Key: "password", Value: fieldPW},
		{Key: nestedKey, Value: bson.D{{Key: "apiToken", Value: tokenVal}}},
		{Key: "note", Value: upstream},
	}); err != nil {
		t.Fatal(err)
	}

	if err := db.Collection(collName).FindOne(ctx, bson.D{{Key: "password", Value: fieldPW}}).Err(); err != nil {
		t.Fatal(err)
	}

	if err := c.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	rec := out.Bytes()

	plainPayload := base64.StdEncoding.EncodeToString([]byte("\x00" + mechUser + "\x00" + plainPW))
	for _, secret := range []string{plainPW, scramPW, userPW, fieldPW, tokenVal, upstream, plainPayload} {
		if bytes.Contains(rec, []byte(secret)) {
			t.Errorf("the recording contains %q", secret)
		}
	}

	// The commands are there, without the secrets: the canary is not
	// passed by a recording that lost everything.
	lines := parseRecording(t, rec)
	seen := map[string]*entry{}

	for _, l := range lines {
		if n := l.name(); n != "" {
			seen[n] = l
		}
	}

	for _, name := range []string{"saslStart", "createUser", "insert", "find"} {
		if seen[name] == nil {
			t.Errorf("no %s line in the recording", name)
		}
	}

	if s := seen["saslStart"]; s != nil && (s.get("payload") != nil || s.get("mechanism") == nil) {
		t.Errorf("saslStart recorded as %v: want its mechanism, not its payload", s.cmd)
	}

	if ins := seen["insert"]; ins != nil {
		docs, _ := ins.get("documents").(bson.A)
		if len(docs) != 1 {
			t.Fatalf("insert documents %v", ins.get("documents"))
		}

		doc, _ := docs[0].(bson.D)
		if len(doc) != 4 || doc[1].Key != "name" || doc[2].Key != nestedKey || doc[3].Key != "note" || doc[3].Value != redact.Mask {
			t.Errorf("inserted document recorded as %v: want _id, name, an empty nested and the note masked", doc)
		}
	}
}
