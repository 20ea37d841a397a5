#!/usr/bin/env node
// mongobench client adapter for Node.js stacks.
//
// mongobench starts this program once per trial and target as
//   node adapter.js --stack node-driver|node-mongoose|node-mongoose-lean
// and speaks the client protocol (version 1, docs/clients.md) with it: JSON
// Lines requests on standard input, JSON Lines replies on standard output,
// this process's log on standard error. The adapter runs the operations
// mongobench generated through the chosen stack and reports, per operation,
// when it started and how long the stack's whole call took, so that the
// figures include what an application pays for its client library
// (casting, validation, hydration, iterating the cursor), not only the
// server's share.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const PROTOCOL = 1;
const STACKS = ['node-driver', 'node-mongoose', 'node-mongoose-lean'];

// RESULT_FLUSH_MS is how often finished operations are sent while a phase
// runs; the protocol asks for at least every 100 ms.
const RESULT_FLUSH_MS = 50;

// FatalError is a problem that ends the adapter with a "fatal" reply: bad
// init, a kind the stack cannot express, a server that cannot be reached.
class FatalError extends Error {}

// ---------------------------------------------------------------------------
// Output: replies are buffered and written with asynchronous writes of the
// standard output's file descriptor, so a slow reader never blocks the event
// loop that the measured operations run on (process.stdout writes to a pipe
// synchronously on Linux).

class LineWriter {
  constructor(fd) {
    this.fd = fd;
    this.lines = [];
    this.busy = false;
    this.idle = [];
    this.broken = null;
  }

  // send queues one reply; it is written on a later turn of the event loop.
  send(msg) {
    this.lines.push(JSON.stringify(msg));
    if (!this.busy) {
      this.busy = true;
      setImmediate(() => this.writeQueued());
    }
  }

  writeQueued() {
    if (this.lines.length === 0 || this.broken) {
      this.busy = false;
      const waiters = this.idle;
      this.idle = [];
      for (const w of waiters) w();
      return;
    }
    const buf = Buffer.from(this.lines.join('\n') + '\n');
    this.lines = [];
    this.writeAll(buf, 0);
  }

  writeAll(buf, off) {
    fs.write(this.fd, buf, off, buf.length - off, null, (err, n) => {
      if (err && err.code === 'EAGAIN') {
        // A non-blocking descriptor whose reader is behind: try again,
        // less and less often, without holding the event loop.
        this.backoff = Math.min(2 * (this.backoff || 0.5), 50);
        setTimeout(() => this.writeAll(buf, off), this.backoff);
        return;
      }
      this.backoff = 0;
      if (err) {
        // The reader is gone (EPIPE): nothing more can be said to it.
        this.broken = err;
        this.writeQueued();
        return;
      }
      if (off + n < buf.length) {
        this.writeAll(buf, off + n);
        return;
      }
      this.writeQueued();
    });
  }

  // drained resolves once everything sent so far has been written.
  drained() {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}

// ---------------------------------------------------------------------------
// Secrets: no message that leaves the adapter may carry the URI's password.

function passwordsOf(uri) {
  const m = /^mongodb(?:\+srv)?:\/\/([^@/]*)@/.exec(uri || '');
  if (!m) return [];
  const i = m[1].indexOf(':');
  if (i < 0) return [];
  const raw = m[1].slice(i + 1);
  const out = [raw];
  try {
    const dec = decodeURIComponent(raw);
    if (dec !== raw) out.push(dec);
  } catch {
    // A malformed escape: the raw form is all there is.
  }
  return out.filter((p) => p.length > 0);
}

function makeScrubber(uri) {
  const secrets = passwordsOf(uri);
  return (s) => {
    let t = String(s);
    for (const p of secrets) t = t.split(p).join('xxxxx');
    return t;
  };
}

// oneLine turns a message into a single line.
function oneLine(s) {
  return String(s).replace(/\s*\n\s*/g, ' ').trim();
}

// ---------------------------------------------------------------------------
// Versions of what runs, for the results file.

function packageVersion(name) {
  let dir = path.dirname(require.resolve(name));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (pkg.name === name) return pkg.version;
    }
    const up = path.dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

function versionsOf(stack) {
  const v = { node: process.versions.node, mongodb: packageVersion('mongodb'), bson: packageVersion('bson') };
  if (stack !== 'node-driver') v.mongoose = packageVersion('mongoose');
  return v;
}

// ---------------------------------------------------------------------------
// Arguments: the EJSON parts of an operation's arguments are turned into
// BSON values (canonical mode, so Int32, Long and Double stay distinct) when
// the ops message arrives, outside the measured call.

const { EJSON } = require('bson');

const EJSON_ARGS = ['filter', 'document', 'documents', 'update', 'replacement', 'pipeline'];

// SPEC_ARGS are EJSON arguments whose numbers say what to do (1 or -1 in a
// sort, 0 or 1 in a projection) rather than values to store or compare;
// they are decoded to plain numbers, which Mongoose requires (it rejects a
// sort of Int32 wrappers and cannot tell an inclusive projection from an
// exclusive one with them).
const SPEC_ARGS = ['projection', 'sort'];

function decodeArgs(raw) {
  const a = {};
  for (const [k, v] of Object.entries(raw || {})) {
    if (EJSON_ARGS.includes(k)) a[k] = EJSON.deserialize(v, { relaxed: false });
    else if (SPEC_ARGS.includes(k)) a[k] = plain(v);
    else a[k] = v;
  }
  return a;
}

// plain turns an EJSON value into plain JavaScript values (numbers, not
// Int32/Double wrappers), for index keys and options.
function plain(v) {
  return EJSON.deserialize(v, { relaxed: true });
}

// ---------------------------------------------------------------------------
// Errors: classified into the protocol's error object; mongobench maps it
// to its error kinds.

const NETWORK_ERRORS = new Set(['MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoServerSelectionError', 'MongoTopologyClosedError', 'MongoServerClosedError', 'MongoPoolClearedError']);
const TIMEOUT_ERRORS = new Set(['MongoNetworkTimeoutError', 'MongoOperationTimeoutError', 'MongoWaitQueueTimeoutError']);
const MAX_TIME_MS_EXPIRED = 50;

function inChain(e, pred) {
  for (let x = e, i = 0; x && i < 8; x = x.cause, i++) {
    if (pred(x)) return true;
  }
  return false;
}

function errorCode(e) {
  if (typeof e.code === 'number') return e.code;
  // Bulk writes (insertMany) carry the first write error's code.
  const we = e.writeErrors;
  if (Array.isArray(we) && we.length > 0 && typeof we[0].code === 'number') return we[0].code;
  if (we && typeof we.code === 'number') return we.code;
  return null;
}

// writtenBefore returns how many documents a failed insertMany still
// wrote (an unordered one writes all it can, an ordered one those before
// the failing document), as mongobench's Go executor counts them.
function writtenBefore(e) {
  if (e && e.name === 'MongoBulkWriteError' && typeof e.insertedCount === 'number') return e.insertedCount;
  return 0;
}

function classify(e, scrub) {
  if (!(e instanceof Error)) {
    return { code: null, name: 'Error', message: scrub(oneLine(e)), labels: [], network: false, timeout: false };
  }
  const code = errorCode(e);
  let labels = [];
  if (e.errorLabelSet instanceof Set) labels = [...e.errorLabelSet];
  else if (Array.isArray(e.errorLabels)) labels = e.errorLabels.slice();
  const name = e.name || e.constructor.name;
  // Server selection failed: the server was not reached at all, which
  // mongobench counts as a network failure rather than a timeout.
  const selection = inChain(e, (x) => x.name === 'MongoServerSelectionError' || x.name === 'MongooseServerSelectionError');
  const network = selection || inChain(e, (x) => NETWORK_ERRORS.has(x.name)) || labels.includes('NetworkError');
  const timeout = !selection && (inChain(e, (x) => TIMEOUT_ERRORS.has(x.name)) || code === MAX_TIME_MS_EXPIRED);
  return { code, name, message: scrub(oneLine(e.message)), labels, network, timeout };
}

// ---------------------------------------------------------------------------
// Operation kinds. Each stack binds an operation of init to a function of
// its arguments that runs the stack's whole call and returns the number of
// documents returned or written (what mongobench counts for that kind:
// countDocuments reports 0, as mongobench's Go executor does).

function writeConcernOf(wc) {
  if (!wc) return undefined;
  const out = {};
  if (wc.w !== undefined && wc.w !== null) out.w = wc.w;
  if (wc.j !== undefined && wc.j !== null) out.journal = wc.j;
  return Object.keys(out).length > 0 ? out : undefined;
}

function num(v) {
  return typeof v === 'number' && v > 0 ? v : 0;
}

function findOptions(a, withLimit) {
  const o = {};
  if (a.projection) o.projection = a.projection;
  if (a.sort) o.sort = a.sort;
  if (num(a.skip)) o.skip = a.skip;
  if (withLimit && num(a.limit)) o.limit = a.limit;
  if (withLimit && num(a.batch_size)) o.batchSize = a.batch_size;
  return o;
}

// driverKinds maps each kind to the MongoDB Node.js driver call of the same
// name. Its keys are the protocol's kinds (KINDS): exactly those mongobench
// sends (clients/protocol/schema.json).
const driverKinds = {
  insertOne: (c) => async (a) => {
    await c.insertOne(a.document);
    return 1;
  },
  insertMany: (c) => async (a) => {
    const opts = typeof a.ordered === 'boolean' ? { ordered: a.ordered } : {};
    const r = await c.insertMany(a.documents, opts);
    return r.insertedCount;
  },
  findOne: (c) => async (a) => ((await c.findOne(a.filter || {}, findOptions(a, false))) ? 1 : 0),
  find: (c) => async (a) => (await c.find(a.filter || {}, findOptions(a, true)).toArray()).length,
  countDocuments: (c) => async (a) => {
    const o = {};
    if (num(a.skip)) o.skip = a.skip;
    if (num(a.limit)) o.limit = a.limit;
    await c.countDocuments(a.filter || {}, o);
    return 0;
  },
  aggregate: (c) => async (a) => {
    const o = num(a.batch_size) ? { batchSize: a.batch_size } : {};
    return (await c.aggregate(a.pipeline || [], o).toArray()).length;
  },
  updateOne: (c) => async (a) => updated(await c.updateOne(a.filter || {}, a.update, { upsert: a.upsert === true })),
  updateMany: (c) => async (a) => updated(await c.updateMany(a.filter || {}, a.update, { upsert: a.upsert === true })),
  replaceOne: (c) => async (a) => updated(await c.replaceOne(a.filter || {}, a.replacement, { upsert: a.upsert === true })),
  deleteOne: (c) => async (a) => (await c.deleteOne(a.filter || {})).deletedCount,
  deleteMany: (c) => async (a) => (await c.deleteMany(a.filter || {})).deletedCount,
};

const KINDS = Object.keys(driverKinds);

// checkOperations refuses, before connecting, an operation of a kind
// outside the protocol's or without a collection, so that a peer sending
// more learns so at once with the operation and the kind named, rather
// than from a half-run phase.
function checkOperations(operations) {
  for (const op of operations) {
    if (!Object.hasOwn(driverKinds, op.kind)) {
      throw new FatalError(`operation ${JSON.stringify(op.name)}: kind ${op.kind} is not a protocol kind (mongobench sends only ${KINDS.join(', ')})`);
    }
    if (typeof op.collection !== 'string' || op.collection === '') {
      throw new FatalError(`operation ${JSON.stringify(op.name)}: kind ${op.kind} needs a collection`);
    }
  }
}

function updated(r) {
  return (r.modifiedCount || 0) + (r.upsertedCount || 0);
}

// mongooseKinds maps each kind to the model's idiomatic call; lean adds
// .lean() to queries so that results stay plain objects. A kind without an
// entry would be refused at init; today every protocol kind has one.
function mongooseKinds(lean) {
  const maybeLean = (q) => (lean ? q.lean() : q);
  return {
    insertOne: (M) => async (a) => {
      await M.create(a.document);
      return 1;
    },
    insertMany: (M) => async (a) => {
      const opts = typeof a.ordered === 'boolean' ? { ordered: a.ordered } : {};
      return (await M.insertMany(a.documents, opts)).length;
    },
    findOne: (M) => async (a) => {
      let q = M.findOne(a.filter || {}, a.projection || null);
      if (a.sort) q = q.sort(a.sort);
      if (num(a.skip)) q = q.skip(a.skip);
      return (await maybeLean(q)) ? 1 : 0;
    },
    find: (M) => async (a) => {
      let q = M.find(a.filter || {}, a.projection || null);
      if (a.sort) q = q.sort(a.sort);
      if (num(a.skip)) q = q.skip(a.skip);
      if (num(a.limit)) q = q.limit(a.limit);
      if (num(a.batch_size)) q = q.batchSize(a.batch_size);
      return (await maybeLean(q)).length;
    },
    countDocuments: (M) => async (a) => {
      let q = M.countDocuments(a.filter || {});
      if (num(a.skip)) q = q.skip(a.skip);
      if (num(a.limit)) q = q.limit(a.limit);
      await q;
      return 0;
    },
    aggregate: (M) => async (a) => {
      const agg = M.aggregate(a.pipeline || []);
      if (num(a.batch_size)) agg.option({ batchSize: a.batch_size });
      return (await agg).length;
    },
    updateOne: (M) => async (a) => updated(await M.updateOne(a.filter || {}, a.update, { upsert: a.upsert === true })),
    updateMany: (M) => async (a) => updated(await M.updateMany(a.filter || {}, a.update, { upsert: a.upsert === true })),
    replaceOne: (M) => async (a) => updated(await M.replaceOne(a.filter || {}, a.replacement, { upsert: a.upsert === true })),
    deleteOne: (M) => async (a) => (await M.deleteOne(a.filter || {})).deletedCount,
    deleteMany: (M) => async (a) => (await M.deleteMany(a.filter || {})).deletedCount,
  };
}

// ---------------------------------------------------------------------------
// Mongoose schemas from the SCHEMA mongobench derives from a collection's
// document template.

// schemaDefinition builds a schema definition object from SCHEMA fields.
// The type key is "$type" so that a generated field called "type" is not
// taken for a type declaration.
function schemaDefinition(mongoose, fields, where) {
  const def = {};
  for (const [name, f] of Object.entries(fields || {})) {
    def[name] = pathType(mongoose, f, `${where}.${name}`);
  }
  return def;
}

// numbersFirst wraps a Mongoose caster so that it sees the JavaScript
// number of an Int32 or Double wrapper rather than the wrapper.
function numbersFirst(cast) {
  return (v) => cast(v && (v._bsontype === 'Int32' || v._bsontype === 'Double') ? v.valueOf() : v);
}

function subSchemaOptions() {
  return { _id: false, strict: false, minimize: false, typeKey: '$type', versionKey: false };
}

// pathType returns the declaration of one path.
function pathType(mongoose, f, where) {
  const T = mongoose.Schema.Types;
  if (!f || typeof f.type !== 'string') throw new FatalError(`schema ${where}: no type`);
  switch (f.type) {
    case 'objectId':
      return { $type: T.ObjectId };
    case 'string':
      return { $type: String };
    case 'int':
      return { $type: T.Int32 };
    case 'long':
      // Mongoose's BigInt caster takes a Long, a number or a string but
      // not an Int32 or Double, which is what a small literal in a filter
      // or document arrives as; an application would pass a number there.
      return { $type: T.BigInt, cast: numbersFirst(T.BigInt.cast()) };
    case 'double':
      return { $type: T.Double };
    case 'decimal':
      return { $type: T.Decimal128, cast: numbersFirst(T.Decimal128.cast()) };
    case 'bool':
      return { $type: Boolean };
    case 'date':
      return { $type: Date };
    case 'binary':
      return { $type: Buffer };
    case 'null':
    case 'mixed':
      return { $type: T.Mixed };
    case 'object':
      if (!f.fields || Object.keys(f.fields).length === 0) return { $type: T.Mixed };
      // A single nested subdocument without an _id of its own rather than
      // a nested path: Mongoose sets a nested path to {} in every document
      // (or, minimizing, drops a generated {}), while a subdocument is stored
      // exactly when the document has it.
      return { $type: new mongoose.Schema(schemaDefinition(mongoose, f.fields, where), subSchemaOptions()) };
    case 'array': {
      // default: undefined keeps Mongoose from adding an empty array to a
      // document whose template did not generate the field.
      return { $type: [arrayItem(mongoose, f.items, `${where}[]`)], default: undefined };
    }
    default:
      throw new FatalError(`schema ${where}: unknown type ${JSON.stringify(f.type)}`);
  }
}

function arrayItem(mongoose, items, where) {
  const T = mongoose.Schema.Types;
  if (!items) return { $type: T.Mixed };
  if (items.type === 'object') {
    if (!items.fields || Object.keys(items.fields).length === 0) return { $type: T.Mixed };
    return new mongoose.Schema(schemaDefinition(mongoose, items.fields, where), subSchemaOptions());
  }
  if (items.type === 'array') return [arrayItem(mongoose, items.items, `${where}[]`)];
  return pathType(mongoose, items, where);
}

// buildSchema returns the Mongoose schema of one collection for one
// operation (the operation's write concern and read preference are schema
// options, so that the call itself stays Model.method(...)).
function buildSchema(mongoose, coll, op) {
  const fields = (coll && coll.schema && coll.schema.fields) || {};
  const def = schemaDefinition(mongoose, fields, coll ? coll.name : op.collection);
  if (def._id && def._id.$type === mongoose.Schema.Types.ObjectId) {
    // Like the driver, Mongoose generates an ObjectId _id when the
    // document has none.
    def._id.auto = true;
  } else if (def._id) {
    // An _id of another type (a formatted string, a number) comes from
    // the load's template, while an operation's documents may have none,
    // for which the driver generates an ObjectId. Mongoose generates only
    // ObjectIds, and casts every value to the path's type, so such an _id
    // is Mixed (stored as given) with an ObjectId default.
    def._id = { $type: mongoose.Schema.Types.Mixed, default: () => new mongoose.Types.ObjectId() };
  }
  const opts = {
    collection: op.collection, // the name as given: no pluralization
    typeKey: '$type',
    strict: false, // fields outside the schema are stored, not dropped
    strictQuery: false, // and filters on them are sent as given
    minimize: false, // empty generated objects are kept
    versionKey: false, // the stored documents are the ones the template generates
    autoIndex: false, // mongobench creates the indexes itself
    autoCreate: false,
    bufferCommands: false,
  };
  const wc = writeConcernOf(op.write_concern);
  if (wc) opts.writeConcern = wc;
  if (op.read_preference) opts.read = op.read_preference;
  const schema = new mongoose.Schema(def, opts);
  for (const ix of (coll && coll.indexes) || []) {
    schema.index(plain(ix.keys), plain(ix.options || {}));
  }
  return schema;
}

// ---------------------------------------------------------------------------
// Stacks: connect, bind operations, close.

async function openDriverStack(init, opts) {
  const { MongoClient } = require('mongodb');
  const client = new MongoClient(init.uri, opts);
  await client.connect();
  const db = client.db(init.database);
  await db.command({ ping: 1 });
  const calls = new Map();
  for (const op of init.operations) {
    const bind = driverKinds[op.kind];
    const collOpts = {};
    const wc = writeConcernOf(op.write_concern);
    if (wc) collOpts.writeConcern = wc;
    if (op.read_preference) collOpts.readPreference = op.read_preference;
    calls.set(op.id, bind(db.collection(op.collection, collOpts)));
  }
  return { calls, close: () => client.close() };
}

async function openMongooseStack(init, opts, lean) {
  const { Mongoose } = require('mongoose');
  const mongoose = new Mongoose();
  const kinds = mongooseKinds(lean);
  // Refuse what the ODM cannot express before connecting.
  for (const op of init.operations) {
    if (!kinds[op.kind]) {
      throw new FatalError(`operation ${JSON.stringify(op.name)}: kind ${op.kind} cannot be expressed on the ${init.stack} stack (Mongoose models have no idiomatic call for it)`);
    }
  }
  const conn = mongoose.createConnection(init.uri, {
    ...opts,
    dbName: init.database,
    autoIndex: false,
    autoCreate: false,
    bufferCommands: false,
  });
  // A connection error after connecting reaches the operations that meet
  // it; the event itself is only logged (unhandled, it would end the
  // process).
  const scrub = makeScrubber(init.uri);
  conn.on('error', (e) => process.stderr.write(`adapter: connection: ${scrub(oneLine(e.message))}\n`));
  await conn.asPromise();
  await conn.db.command({ ping: 1 });
  const calls = new Map();
  for (const op of init.operations) {
    const coll = (init.collections || []).find((x) => x.name === op.collection);
    if (!coll || !coll.schema) {
      process.stderr.write(`adapter: collection ${op.collection} has no schema: operation ${op.name} uses a schema without declared paths\n`);
    }
    let schema;
    try {
      schema = buildSchema(mongoose, coll, op);
    } catch (e) {
      if (e instanceof FatalError) throw e;
      throw new FatalError(`collection ${op.collection}: cannot build its Mongoose schema: ${oneLine(e.message)}`);
    }
    // One model per operation, named after it, on the collection.
    const model = conn.model(`${op.collection}#${op.id}`, schema, op.collection);
    calls.set(op.id, kinds[op.kind](model));
  }
  return { calls, close: () => conn.close() };
}

async function openStack(init) {
  const opts = {};
  if (typeof init.timeout_ms === 'number' && init.timeout_ms > 0) {
    // timeout_ms bounds every operation: the driver's client-side
    // operation timeout (timeoutMS) covers server selection, checking out a
    // connection, the round trips and iterating the cursor, and ends an
    // operation that runs over with MongoOperationTimeoutError.
    opts.timeoutMS = init.timeout_ms;
    opts.serverSelectionTimeoutMS = init.timeout_ms;
    opts.connectTimeoutMS = init.timeout_ms;
  }
  if (init.stack === 'node-driver') return openDriverStack(init, opts);
  return openMongooseStack(init, opts, init.stack === 'node-mongoose-lean');
}

// ---------------------------------------------------------------------------
// CPU profile (--client-profile): the inspector's sampling profiler runs
// from the first phase to exit; the profile and a summary of its top frames
// are written at exit.

class CpuProfile {
  constructor(prefix) {
    this.prefix = prefix;
    this.session = null;
  }

  post(method, params) {
    return new Promise((resolve, reject) => {
      this.session.post(method, params || {}, (err, res) => (err ? reject(err) : resolve(res)));
    });
  }

  async start() {
    if (this.session) return;
    const inspector = require('node:inspector');
    this.session = new inspector.Session();
    this.session.connect();
    await this.post('Profiler.enable');
    await this.post('Profiler.start');
  }

  async stopAndWrite() {
    if (!this.session) return;
    const { profile } = await this.post('Profiler.stop');
    this.session.disconnect();
    this.session = null;
    fs.writeFileSync(`${this.prefix}.cpuprofile`, JSON.stringify(profile));
    fs.writeFileSync(`${this.prefix}.top.json`, JSON.stringify(topFrames(profile, 30), null, 1) + '\n');
  }
}

// topFrames summarises a V8 CPU profile: per function (name, script,
// line), the time of the samples taken in it (self) and of the samples with
// it anywhere on the stack (total), from the profile's samples and
// timeDeltas. A sampling profiler does not count calls, so calls is null and
// samples says how many samples the function was on top of the stack.
function topFrames(profile, n) {
  const nodes = new Map();
  const parent = new Map();
  for (const node of profile.nodes) {
    nodes.set(node.id, node);
    for (const c of node.children || []) parent.set(c, node.id);
  }
  // A sample lasts until the next one; the last one until the profile's end.
  const selfUs = new Map();
  const selfSamples = new Map();
  const samples = profile.samples || [];
  const deltas = profile.timeDeltas || [];
  let t = profile.startTime;
  const stamps = samples.map((_, i) => (t += deltas[i] || 0));
  for (let i = 0; i < samples.length; i++) {
    const end = i + 1 < samples.length ? stamps[i + 1] : profile.endTime;
    const d = Math.max(0, end - stamps[i]);
    selfUs.set(samples[i], (selfUs.get(samples[i]) || 0) + d);
    selfSamples.set(samples[i], (selfSamples.get(samples[i]) || 0) + 1);
  }
  const frames = new Map();
  const frameOf = (node) => {
    const cf = node.callFrame;
    const key = `${cf.functionName}\u0000${cf.url}\u0000${cf.lineNumber}`;
    let f = frames.get(key);
    if (!f) {
      f = { function: cf.functionName || '(anonymous)', file: cf.url || '', line: cf.lineNumber + 1, selfUs: 0, totalUs: 0, samples: 0 };
      frames.set(key, f);
    }
    return f;
  };
  for (const [id, us] of selfUs) {
    const node = nodes.get(id);
    if (!node) continue;
    const top = frameOf(node);
    top.selfUs += us;
    top.samples += selfSamples.get(id);
    // Count each function once per sample even when it recurses.
    const seen = new Set();
    for (let x = id; x !== undefined; x = parent.get(x)) {
      const f = frameOf(nodes.get(x));
      if (seen.has(f)) continue;
      seen.add(f);
      f.totalUs += us;
    }
  }
  const skip = new Set(['(root)', '(idle)']);
  const all = [...frames.values()].filter((f) => !skip.has(f.function));
  const out = (f) => ({
    function: f.function,
    file: f.file,
    line: f.line,
    self_ms: Math.round(f.selfUs) / 1000,
    total_ms: Math.round(f.totalUs) / 1000,
    calls: null,
    samples: f.samples,
  });
  const bySelf = all.slice().sort((a, b) => b.selfUs - a.selfUs || b.totalUs - a.totalUs).slice(0, n);
  const byTotal = all.slice().sort((a, b) => b.totalUs - a.totalUs || b.selfUs - a.selfUs).slice(0, n);
  return { frames: bySelf.map(out), frames_by_total: byTotal.map(out) };
}

// ---------------------------------------------------------------------------
// Workers: each is a closed loop over its own queue of operations.

class Worker {
  constructor(index) {
    this.index = index;
    this.items = [];
    this.head = 0;
    this.batch = 0; // size of the last batch received
    this.received = false;
    this.needSent = false;
    this.results = [];
    this.wake = null;
  }

  queued() {
    return this.items.length - this.head;
  }

  push(ops) {
    if (this.head > 0 && (this.head === this.items.length || this.head >= 4096)) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    for (const op of ops) this.items.push(op);
    this.batch = ops.length;
    this.received = true;
    this.needSent = false;
    this.signal();
  }

  signal() {
    const w = this.wake;
    this.wake = null;
    if (w) w();
  }

  take() {
    const op = this.items[this.head];
    this.items[this.head++] = undefined;
    return op;
  }

  waitForOps() {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }
}

class Phase {
  constructor(adapter, workers, pending, received) {
    this.adapter = adapter;
    // Operations' starts count from when the phase message was read.
    this.t0 = received || process.hrtime.bigint();
    this.stopping = false;
    this.starved = 0;
    this.workers = [];
    for (let i = 0; i < workers; i++) {
      const w = new Worker(i);
      const early = pending.get(i);
      if (early) for (const batch of early) w.push(batch);
      this.workers.push(w);
    }
    this.loops = this.workers.map((w) => this.run(w));
    this.timer = setInterval(() => this.flush(), RESULT_FLUSH_MS);
  }

  async run(w) {
    const calls = this.adapter.calls;
    const out = this.adapter.out;
    const scrub = this.adapter.scrub;
    for (;;) {
      if (this.stopping) return;
      if (w.queued() === 0) {
        if (w.received) this.starved++;
        await w.waitForOps();
        continue;
      }
      const [id, args] = w.take();
      if (!w.needSent && w.queued() <= w.batch / 2) {
        w.needSent = true;
        out.send({ type: 'need', worker: w.index });
      }
      const call = calls.get(id);
      let docs = 0;
      let err = null;
      let t1;
      // The client's own time on the call (DECODE_NS, docs/clients.md):
      // the process's CPU time while it ran, which the server's time and
      // the wait for the network do not add to. Exact at one worker; with
      // more, calls in flight together share it.
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      try {
        if (!call) throw new Error(`operation id ${id} was not declared at init`);
        docs = await call(args);
        t1 = process.hrtime.bigint();
        // An unacknowledged write (w: 0) reports no counts.
        if (typeof docs !== 'number') docs = 0;
      } catch (e) {
        t1 = process.hrtime.bigint();
        err = classify(e, scrub);
        docs = writtenBefore(e);
      }
      const cpu = process.cpuUsage(cpu0);
      w.results.push([id, Number(t0 - this.t0), Number(t1 - t0), docs, err, (cpu.user + cpu.system) * 1000]);
    }
  }

  flush() {
    for (const w of this.workers) {
      if (w.results.length === 0) continue;
      this.adapter.out.send({ type: 'done', worker: w.index, r: w.results });
      w.results = [];
    }
  }

  async stop() {
    this.stopping = true;
    for (const w of this.workers) w.signal();
    await Promise.all(this.loops);
    clearInterval(this.timer);
    this.flush();
    return this.starved;
  }
}

// ---------------------------------------------------------------------------
// The adapter: one message at a time, in order.

class Adapter {
  constructor(stack) {
    this.stack = stack;
    this.out = new LineWriter(1);
    this.scrub = (s) => String(s);
    this.calls = null;
    this.close = null;
    this.phase = null;
    this.pending = new Map(); // ops that came before their phase
    this.profile = null;
  }

  async handle(msg) {
    switch (msg.type) {
      case 'init':
        return this.init(msg);
      case 'phase':
        return this.startPhase(msg);
      case 'ops':
        return this.ops(msg);
      case 'stop':
        return this.stopPhase();
      case 'exit':
        return this.exit(0);
      default:
        throw new FatalError(`unknown message type ${JSON.stringify(msg.type)}`);
    }
  }

  async init(msg) {
    if (this.calls) throw new FatalError('a second init');
    this.scrub = makeScrubber(msg.uri);
    if (msg.protocol !== PROTOCOL) throw new FatalError(`protocol ${msg.protocol} is not supported (this adapter speaks ${PROTOCOL})`);
    if (msg.stack !== this.stack) throw new FatalError(`init asks for stack ${msg.stack} but the adapter was started with --stack ${this.stack}`);
    if (!Array.isArray(msg.operations)) throw new FatalError('init has no operations list');
    checkOperations(msg.operations);
    if (msg.profile) this.profile = new CpuProfile(msg.profile);
    let stack;
    try {
      stack = await openStack(msg);
    } catch (e) {
      if (e instanceof FatalError) throw e;
      throw new FatalError(`connecting with ${this.stack}: ${e.name}: ${oneLine(e.message)}`);
    }
    this.calls = stack.calls;
    this.close = stack.close;
    this.out.send({ type: 'ready', stack: this.stack, versions: versionsOf(this.stack) });
  }

  async startPhase(msg) {
    if (!this.calls) throw new FatalError('phase before init');
    if (this.phase) throw new FatalError('phase while another phase runs (no stop)');
    const n = msg.workers;
    if (!Number.isInteger(n) || n < 1) throw new FatalError(`phase: workers must be a positive integer, not ${JSON.stringify(n)}`);
    if (this.profile) await this.profile.start();
    this.phase = new Phase(this, n, this.pending, msg.received);
    this.pending = new Map();
  }

  ops(msg) {
    const batch = (msg.ops || []).map(([id, args]) => [id, decodeArgs(args)]);
    if (!this.phase) {
      const list = this.pending.get(msg.worker) || [];
      list.push(batch);
      this.pending.set(msg.worker, list);
      return;
    }
    const w = this.phase.workers[msg.worker];
    if (!w) throw new FatalError(`ops for worker ${msg.worker}, but the phase has ${this.phase.workers.length} workers`);
    w.push(batch);
  }

  async stopPhase() {
    let starved = 0;
    if (this.phase) {
      starved = await this.phase.stop();
      this.phase = null;
    }
    this.out.send({ type: 'stopped', starved });
  }

  async exit(code) {
    if (this.phase) await this.phase.stop();
    this.phase = null;
    if (this.profile) {
      try {
        await this.profile.stopAndWrite();
      } catch (e) {
        process.stderr.write(`adapter: writing the CPU profile: ${this.scrub(oneLine(e.message))}\n`);
        code = code || 1;
      }
    }
    if (this.close) {
      try {
        await this.close();
      } catch (e) {
        process.stderr.write(`adapter: closing the connection: ${this.scrub(oneLine(e.message))}\n`);
      }
    }
    await this.out.drained();
    process.exit(code);
  }

  async fatal(message) {
    const m = this.scrub(oneLine(message));
    process.stderr.write(`adapter: ${m}\n`);
    this.out.send({ type: 'fatal', message: m });
    await this.exit(1);
  }
}

function parseStack(argv) {
  const i = argv.indexOf('--stack');
  let stack = i >= 0 ? argv[i + 1] : undefined;
  const eq = argv.find((a) => a.startsWith('--stack='));
  if (eq) stack = eq.slice('--stack='.length);
  return stack;
}

function main() {
  const stack = parseStack(process.argv.slice(2));
  const adapter = new Adapter(stack);
  if (!STACKS.includes(stack)) {
    adapter.fatal(`--stack must be one of ${STACKS.join(', ')}, not ${JSON.stringify(stack)}`);
    return;
  }
  let chain = Promise.resolve();
  let failed = false;
  const fail = (e) => {
    if (failed) return;
    failed = true;
    const message = e instanceof FatalError ? e.message : `${(e && e.name) || 'Error'}: ${e && e.message !== undefined ? e.message : e}`;
    adapter.fatal(message).catch(() => process.exit(1));
  };
  // Anything thrown outside a measured call is the adapter's own failure:
  // a one-line fatal reply rather than a stack trace.
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => {
    if (failed || line.trim() === '') return;
    const received = process.hrtime.bigint();
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      fail(new FatalError(`a request that is not JSON: ${e.message}`));
      return;
    }
    if (msg === null || typeof msg !== 'object') {
      fail(new FatalError('a request that is not a JSON object'));
      return;
    }
    if (msg.type === 'phase') msg.received = received;
    chain = chain.then(() => (failed ? undefined : adapter.handle(msg))).catch(fail);
  });
  // mongobench closing our standard input without "exit" ends the adapter
  // the same way, after what was already received.
  rl.on('close', () => {
    chain = chain.then(() => (failed ? undefined : adapter.exit(0))).catch(fail);
  });
}

if (require.main === module) main();

module.exports = { topFrames, classify, passwordsOf, buildSchema, mongooseKinds };
