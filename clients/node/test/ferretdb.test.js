// The adapter against a real server: embedded FerretDB started by
// `mongobench serve`. Every kind on every stack, what is really stored,
// BSON types through inserts and finds, Mongoose casting and validation,
// and server errors.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { MongoClient, Int32, Long, Double, ObjectId } = require('mongodb');
const { EJSON } = require('bson');
const { startServer, start, runOps, STACKS, uniqueName } = require('./harness');

const ej = (v) => EJSON.serialize(v, { relaxed: false });

const SCHEMA = {
  fields: {
    _id: { type: 'objectId' },
    name: { type: 'string' },
    n: { type: 'int' },
    big: { type: 'long' },
    score: { type: 'double' },
    at: { type: 'date' },
    ok: { type: 'bool' },
    tags: { type: 'array', items: { type: 'string' } },
    addr: { type: 'object', fields: { city: { type: 'string' }, type: { type: 'string' } } },
    x: { type: 'mixed' },
  },
};

const AT = new Date('2026-01-02T03:04:05.678Z');

function doc(name, n) {
  return {
    name,
    n: new Int32(n),
    big: Long.fromString('1099511627776'),
    score: new Double(2),
    at: AT,
    ok: true,
    tags: ['x', 'y'],
    addr: { city: 'c', type: 'home' },
    x: { deep: new Int32(1) },
  };
}

let server;
let client;

test.before(async () => {
  server = await startServer(['serve']);
  client = new MongoClient(server.uri, { serverSelectionTimeoutMS: 30000 });
  await client.connect();
});

test.after(async () => {
  if (client) await client.close();
  if (server) await server.stop();
});

// raw reads a collection with BSON wrappers kept (Int32, Long, Double), so
// that the stored types can be checked.
function raw(db, coll, filter = {}) {
  return client.db(db).collection(coll).find(filter, { promoteValues: false, sort: { name: 1 } }).toArray();
}

const KINDS = [
  'insertOne', 'insertMany', 'findOne', 'find', 'countDocuments', 'aggregate',
  'updateOne', 'updateMany', 'replaceOne', 'deleteOne', 'deleteMany',
];

for (const stack of STACKS) {
  test(`${stack}: every kind runs and does what it says`, async () => {
    const database = uniqueName('mb_kinds');
    const a = await start(stack, {
      uri: server.uri,
      database,
      collections: [{ name: 'users', schema: SCHEMA, indexes: [] }],
      operations: KINDS.map((kind) => ({ kind, collection: 'users' })),
    });
    try {
      const id = (k) => KINDS.indexOf(k);
      const r1 = await runOps(a, [
        [id('insertOne'), { document: ej(doc('a', 5)) }],
        [id('insertMany'), { documents: ej([doc('b', 6), doc('c', 7), doc('d', 8)]), ordered: true }],
        [id('findOne'), { filter: ej({ n: new Int32(5) }), projection: ej({ name: new Int32(1) }) }],
        [id('find'), { filter: ej({ n: { $gte: new Int32(6) } }), sort: ej({ n: new Int32(1) }), limit: 2, batch_size: 1 }],
        [id('find'), { filter: ej({}), skip: 1 }],
        [id('countDocuments'), { filter: ej({}) }],
        [id('aggregate'), { pipeline: ej([{ $match: { n: { $gte: new Int32(6) } } }, { $sort: { n: new Int32(1) } }]) }],
        [id('updateOne'), { filter: ej({ name: 'a' }), update: ej({ $set: { n: new Int32(50) } }) }],
        [id('updateMany'), { filter: ej({ n: { $lt: new Int32(50) } }), update: ej({ $inc: { n: new Int32(10) } }) }],
        [id('replaceOne'), { filter: ej({ name: 'b' }), replacement: ej(doc('b2', 9)) }],
        [id('updateOne'), { filter: ej({ name: 'nobody' }), update: ej({ $set: { n: new Int32(1) } }), upsert: true }],
      ]);
      for (const r of r1) assert.equal(r.err, null, `operation ${r.id}: ${JSON.stringify(r.err)}`);
      assert.deepEqual(r1.map((r) => r.docs), [1, 3, 1, 2, 3, 0, 3, 1, 3, 1, 1]);

      const stored = await raw(database, 'users');
      assert.deepEqual(stored.map((d) => [d.name, d.n && d.n.value]), [['a', 50], ['b2', 9], ['c', 17], ['d', 18], ['nobody', 1]]);
      // No field Mongoose would add on its own (__v, empty arrays).
      assert.deepEqual(Object.keys(stored[0]).sort(), ['_id', 'addr', 'at', 'big', 'n', 'name', 'ok', 'score', 'tags', 'x']);
      assert.deepEqual(Object.keys(stored[4]).sort(), ['_id', 'n', 'name']);

      const r2 = await runOps(a, [
        [id('deleteOne'), { filter: ej({ name: 'c' }) }],
        [id('deleteMany'), { filter: ej({ n: { $gte: new Int32(0) } }) }],
        [id('findOne'), { filter: ej({ name: 'a' }) }],
      ]);
      assert.deepEqual(r2.map((r) => [r.docs, r.err]), [[1, null], [4, null], [0, null]]);
      assert.equal((await raw(database, 'users')).length, 0);
      for (const r of [...r1, ...r2]) {
        assert.ok(Number.isInteger(r.start) && r.start >= 0, `start ${r.start}`);
        assert.ok(Number.isInteger(r.latency) && r.latency > 0, `latency ${r.latency}`);
      }
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  });

  test(`${stack}: int32, int64, double, date and ObjectId survive an insert and a find`, async () => {
    const database = uniqueName('mb_types');
    const a = await start(stack, {
      uri: server.uri,
      database,
      collections: [{ name: 'users', schema: SCHEMA, indexes: [] }],
      operations: [{ kind: 'insertOne', collection: 'users' }, { kind: 'find', collection: 'users' }, { kind: 'findOne', collection: 'users' }],
    });
    try {
      const oid = new ObjectId();
      const d = { _id: oid, ...doc('t', 7), big: Long.fromString('9007199254740993') };
      const r = await runOps(a, [
        [0, { document: ej(d) }],
        [1, { filter: ej({ big: Long.fromString('9007199254740993') }) }],
        [1, { filter: ej({ score: new Double(2), n: new Int32(7), at: AT }) }],
        [2, { filter: ej({ _id: oid }) }],
        [1, { filter: ej({ big: Long.fromString('9007199254740992') }) }],
      ]);
      assert.deepEqual(r.map((x) => [x.docs, x.err]), [[1, null], [1, null], [1, null], [1, null], [0, null]]);

      const [s] = await raw(database, 'users');
      assert.ok(s._id.equals(oid));
      assert.equal(s.n._bsontype, 'Int32');
      assert.equal(s.n.value, 7);
      assert.equal(s.big._bsontype, 'Long');
      assert.equal(s.big.toString(), '9007199254740993');
      assert.equal(s.score._bsontype, 'Double');
      assert.equal(s.score.value, 2);
      assert.ok(s.at instanceof Date);
      assert.equal(s.at.getTime(), AT.getTime());
      assert.equal(s.x.deep._bsontype, 'Int32');
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  });

  test(`${stack}: a duplicate key is reported with code 11000`, async () => {
    const database = uniqueName('mb_dup');
    await client.db(database).collection('users').createIndex({ name: 1 }, { unique: true, name: 'name_1' });
    const a = await start(stack, {
      uri: server.uri,
      database,
      collections: [{ name: 'users', schema: SCHEMA, indexes: [{ keys: { name: { $numberInt: '1' } }, options: { unique: true, name: 'name_1' } }] }],
      operations: [{ kind: 'insertOne', collection: 'users' }, { kind: 'insertMany', collection: 'users' }],
    });
    try {
      const r = await runOps(a, [
        [0, { document: ej(doc('same', 1)) }],
        [0, { document: ej(doc('same', 2)) }],
        [1, { documents: ej([doc('other', 3), doc('same', 4)]), ordered: true }],
      ]);
      assert.equal(r[0].err, null);
      for (const x of [r[1], r[2]]) {
        assert.ok(x.err, 'an error');
        assert.equal(x.err.code, 11000);
        assert.match(x.err.name, /^Mongo(Server|BulkWrite)Error$/);
        assert.equal(x.err.network, false);
        assert.equal(x.err.timeout, false);
        assert.ok(Array.isArray(x.err.labels));
        assert.equal(typeof x.err.message, 'string');
      }
      // The ordered insertMany wrote the document before the duplicate.
      assert.deepEqual([r[1].docs, r[2].docs], [0, 1]);
      assert.equal((await raw(database, 'users')).length, 2); // same and other
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  });
}

test('Mongoose casts values to the schema before writing; the driver writes them as given', async () => {
  const stored = {};
  for (const stack of STACKS) {
    const database = uniqueName('mb_cast');
    const a = await start(stack, {
      uri: server.uri,
      database,
      collections: [{ name: 'users', schema: SCHEMA, indexes: [] }],
      operations: [{ kind: 'insertOne', collection: 'users' }, { kind: 'updateOne', collection: 'users' }],
    });
    try {
      // An int32 where the schema says double or long.
      const r = await runOps(a, [
        [0, { document: ej({ name: 'c', score: new Int32(3), big: new Int32(4) }) }],
        [1, { filter: ej({ name: 'c' }), update: ej({ $set: { n: new Double(6) } }) }],
      ]);
      assert.deepEqual(r.map((x) => x.err), [null, null]);
      const [s] = await raw(database, 'users');
      stored[stack] = [s.score._bsontype, s.big._bsontype, s.n._bsontype];
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  }
  assert.deepEqual(stored, {
    'node-driver': ['Int32', 'Int32', 'Double'],
    'node-mongoose': ['Double', 'Long', 'Int32'],
    'node-mongoose-lean': ['Double', 'Long', 'Int32'],
  });
});

test('Mongoose validation fails inside the measured call; the driver stores the document', async () => {
  for (const stack of STACKS) {
    const database = uniqueName('mb_valid');
    const a = await start(stack, {
      uri: server.uri,
      database,
      collections: [{ name: 'users', schema: SCHEMA, indexes: [] }],
      operations: [{ kind: 'insertOne', collection: 'users' }],
    });
    try {
      const [r] = await runOps(a, [[0, { document: ej({ name: 'v', n: 'not a number' }) }]]);
      const count = (await raw(database, 'users')).length;
      if (stack === 'node-driver') {
        assert.deepEqual([r.err, r.docs, count], [null, 1, 1]);
      } else {
        assert.equal(r.err.name, 'ValidationError');
        assert.equal(r.err.code, null);
        assert.equal(r.err.network, false);
        assert.match(r.err.message, /n/);
        assert.equal(r.docs, 0);
        assert.equal(count, 0);
      }
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  }
});

test('Mongoose hydrates find results into documents unless lean; every stack materializes the whole result', async () => {
  // Not observable over the protocol except through what it costs, so this
  // runs the adapter's find call on a model of the adapter's schema, with a
  // post-find hook (Mongoose runs it for lean queries too) that sees what
  // the call produced.
  const { buildSchema, mongooseKinds } = require('../adapter');
  const { Mongoose } = require('mongoose');
  const mongoose = new Mongoose();
  const database = uniqueName('mb_hydrate');
  await client.db(database).collection('users').insertMany([doc('h1', 1), doc('h2', 2), doc('h3', 3)]);
  const conn = await mongoose.createConnection(server.uri, { dbName: database }).asPromise();
  try {
    for (const lean of [false, true]) {
      const seen = [];
      const op = { id: 0, name: 'f', kind: 'find', collection: 'users' };
      const schema = buildSchema(mongoose, { name: 'users', schema: SCHEMA, indexes: [] }, op);
      schema.post('find', (docs) => {
        seen.push(docs);
      });
      const M = conn.model(`users_${lean}`, schema, 'users');
      assert.equal(await mongooseKinds(lean).find(M)({ filter: {}, batch_size: 1 }), 3);
      assert.equal(seen.length, 1);
      assert.equal(seen[0].length, 3);
      for (const d of seen[0]) assert.equal(d instanceof mongoose.Document, !lean);
      // Hydrated documents carry the schema's types: a long is a BigInt.
      assert.equal(typeof seen[0][0].big, lean ? 'number' : 'bigint');
    }
  } finally {
    await conn.close();
  }
});

test('write concern and read preference of an operation are accepted by every stack', async () => {
  for (const stack of STACKS) {
    const database = uniqueName('mb_wc');
    const a = await start(stack, {
      uri: server.uri,
      database,
      collections: [{ name: 'users', schema: SCHEMA, indexes: [] }],
      operations: [
        { kind: 'insertOne', collection: 'users', write_concern: { w: 1, j: false } },
        { kind: 'find', collection: 'users', read_preference: 'primaryPreferred' },
        { kind: 'updateMany', collection: 'users', write_concern: { w: 'majority' } },
      ],
    });
    try {
      const r = await runOps(a, [
        [0, { document: ej(doc('w', 1)) }],
        [1, { filter: ej({ name: 'w' }) }],
        [2, { filter: ej({}), update: ej({ $set: { ok: false } }) }],
      ]);
      assert.deepEqual(r.map((x) => [x.docs, x.err]), [[1, null], [1, null], [1, null]], stack);
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  }
});

test('every stack stores exactly the fields a document has, none added (__v, empty arrays or objects)', async () => {
  for (const stack of STACKS) {
    const database = uniqueName('mb_fields');
    const a = await start(stack, {
      uri: server.uri,
      database,
      collections: [{ name: 'users', schema: SCHEMA, indexes: [] }],
      operations: [{ kind: 'insertOne', collection: 'users' }, { kind: 'insertMany', collection: 'users' }],
    });
    try {
      const r = await runOps(a, [
        [0, { document: ej({ name: 'sparse' }) }],
        [1, { documents: ej([{ name: 'sparse2', addr: {} }, { name: 'extra', notInSchema: new Int32(3), tags: [] }]) }],
      ]);
      assert.deepEqual(r.map((x) => x.err), [null, null]);
      const stored = await raw(database, 'users');
      assert.deepEqual(stored.map((d) => Object.keys(d).sort()), [['_id', 'name', 'notInSchema', 'tags'], ['_id', 'name'], ['_id', 'addr', 'name']], stack);
      assert.equal(stored[0].notInSchema._bsontype, 'Int32');
      assert.deepEqual(stored[2].addr, {});
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  }
});

test('an _id that is not an ObjectId is stored as given, and generated as an ObjectId when a document has none', async () => {
  const schema = { fields: { _id: { type: 'string' }, name: { type: 'string' } } };
  for (const stack of STACKS) {
    const database = uniqueName('mb_id');
    const a = await start(stack, {
      uri: server.uri,
      database,
      collections: [{ name: 'users', schema, indexes: [] }],
      operations: [{ kind: 'insertOne', collection: 'users' }, { kind: 'findOne', collection: 'users' }, { kind: 'insertOne', collection: 'users' }],
    });
    try {
      const r = await runOps(a, [
        [0, { document: ej({ _id: 'u00001', name: 'a' }) }],
        [2, { document: ej({ name: 'b' }) }],
        [1, { filter: ej({ _id: 'u00001' }) }],
      ]);
      assert.deepEqual(r.map((x) => [x.docs, x.err]), [[1, null], [1, null], [1, null]], stack);
      const stored = await raw(database, 'users');
      assert.equal(stored[0]._id, 'u00001');
      assert.equal(stored[1]._id._bsontype, 'ObjectId', stack);
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  }
});
