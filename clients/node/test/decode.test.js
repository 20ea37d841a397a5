// The decode time each stack reports (the sixth element of a done record,
// DECODE_NS in docs/clients.md), and that every stack loads the null test
// server's template documents (ObjectId _id, strings, an int, dates, a
// nested document, an array) through a schema of the same shape, as the
// document-load studies do: Mongoose once failed to cast an int32 _id.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, start, runOps, STACKS, uniqueName } = require('./harness');

const DOCS = 200;

// The shape of `mongobench testserver`'s documents, as mongobench derives
// it from workloads/studies/document-load.yaml's template.
const people = {
  name: 'people',
  schema: {
    fields: {
      _id: { type: 'objectId' },
      name: { type: 'string' },
      age: { type: 'long' },
      birthday: { type: 'date' },
      timestamp: { type: 'date' },
      address: { type: 'object', fields: { street: { type: 'string' }, city: { type: 'string' }, zip: { type: 'string' } } },
      tags: { type: 'array', items: { type: 'string' } },
    },
  },
  indexes: [],
};

let server;

test.before(async () => {
  server = await startServer(['testserver', '--addr', '127.0.0.1:0', '--find-docs', String(DOCS)]);
});

test.after(async () => {
  if (server) await server.stop();
});

for (const stack of STACKS) {
  test(`${stack}: loads the template documents and reports a decode time per read`, async () => {
    const a = await start(stack, {
      uri: server.uri,
      database: uniqueName('mb'),
      collections: [people],
      operations: [{ kind: 'find', collection: 'people' }, { kind: 'findOne', collection: 'people' }],
    });
    try {
      const got = await runOps(a, [[0, {}], [0, {}], [1, {}], [0, {}]]);
      assert.equal(got.length, 4);
      for (const r of got) {
        assert.equal(r.err, null, `${stack}: ${JSON.stringify(r.err)}`);
        assert.equal(r.docs, r.id === 0 ? DOCS : 1);
        assert.ok(Number.isInteger(r.decode) && r.decode >= 0, `decode time ${r.decode}`);
      }
      // Every record carries it: the field is optional in the protocol,
      // but these adapters always measure it.
      for (const m of a.messages.filter((x) => x.type === 'done')) {
        for (const rec of m.r) assert.equal(rec.length, 6, JSON.stringify(rec));
      }
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  });
}
