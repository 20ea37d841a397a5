// Mongoose schemas built from init's SCHEMA, inspected without a server.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { Mongoose } = require('mongoose');
const { buildSchema } = require('../adapter');

const coll = {
  name: 'users',
  schema: {
    fields: {
      _id: { type: 'objectId' },
      s: { type: 'string' },
      n: { type: 'int' },
      big: { type: 'long' },
      score: { type: 'double' },
      dec: { type: 'decimal' },
      ok: { type: 'bool' },
      at: { type: 'date' },
      bin: { type: 'binary' },
      nil: { type: 'null' },
      any: { type: 'mixed' },
      addr: { type: 'object', fields: { type: { type: 'string' }, zip: { type: 'int' } } },
      empty: { type: 'object', fields: {} },
      tags: { type: 'array', items: { type: 'string' } },
      lines: { type: 'array', items: { type: 'object', fields: { qty: { type: 'long' } } } },
      grid: { type: 'array', items: { type: 'array', items: { type: 'double' } } },
    },
  },
  indexes: [{ keys: { n: { $numberInt: '1' }, s: { $numberInt: '-1' } }, options: { name: 'n_s', unique: true } }],
};

const op = { id: 3, name: 'get', kind: 'find', collection: 'users', write_concern: { w: 'majority', j: true }, read_preference: 'secondaryPreferred' };

test('SCHEMA types map to typed Mongoose paths', () => {
  const m = new Mongoose();
  const s = buildSchema(m, coll, op);
  const type = (p) => s.path(p).instance;
  assert.deepEqual(
    ['_id', 's', 'n', 'big', 'score', 'dec', 'ok', 'at', 'bin', 'nil', 'any', 'empty'].map(type),
    ['ObjectId', 'String', 'Int32', 'BigInt', 'Double', 'Decimal128', 'Boolean', 'Date', 'Buffer', 'Mixed', 'Mixed', 'Mixed'],
  );
  assert.equal(s.path('_id').options.auto, true);
  // An object is a subdocument without _id, and its field called "type" is
  // a field, not a type declaration.
  assert.equal(s.path('addr').instance, 'Embedded');
  assert.equal(s.path('addr').schema.path('type').instance, 'String');
  assert.equal(s.path('addr').schema.path('zip').instance, 'Int32');
  assert.equal(s.path('addr').schema.path('_id'), undefined);
  assert.equal(s.path('tags').instance, 'Array');
  assert.equal(s.path('tags').caster.instance, 'String');
  assert.equal(s.path('tags').options.default, undefined);
  assert.equal(s.path('lines').instance, 'Array');
  assert.equal(s.path('lines').schema.path('qty').instance, 'BigInt');
  assert.equal(s.path('lines').schema.path('_id'), undefined);
  assert.equal(s.path('grid').instance, 'Array');
});

test('schema options keep documents as generated and name the collection as given', () => {
  const m = new Mongoose();
  const s = buildSchema(m, coll, op);
  for (const [k, v] of Object.entries({
    collection: 'users', strict: false, strictQuery: false, minimize: false, versionKey: false,
    autoIndex: false, autoCreate: false, bufferCommands: false, read: 'secondaryPreferred',
  })) {
    assert.deepEqual(s.get(k), v, k);
  }
  assert.deepEqual(s.get('writeConcern'), { w: 'majority', journal: true });
  // The collection's indexes are declared (mongobench creates them).
  const ix = s.indexes();
  assert.equal(ix.length, 1);
  assert.deepEqual(ix[0][0], { n: 1, s: -1 });
  assert.deepEqual([ix[0][1].name, ix[0][1].unique], ['n_s', true]);
  const M = m.model('users#3', s, 'users');
  assert.equal(M.collection.collectionName, 'users');
});

test('an _id of another type is stored as given, with an ObjectId default', () => {
  const m = new Mongoose();
  const s = buildSchema(m, { name: 'c', schema: { fields: { _id: { type: 'string' } } } }, { id: 0, collection: 'c' });
  assert.equal(s.path('_id').instance, 'Mixed');
  const M = m.model('c#0', s, 'c');
  assert.equal(new M({ _id: 'u1' })._id, 'u1');
  assert.ok(new M({})._id instanceof m.Types.ObjectId);
});

test('a SCHEMA type the adapter does not know is an error naming the field', () => {
  const m = new Mongoose();
  assert.throws(
    () => buildSchema(m, { name: 'users', schema: { fields: { addr: { type: 'object', fields: { geo: { type: 'point' } } } } } }, op),
    /schema users\.addr\.geo: unknown type "point"/,
  );
});
