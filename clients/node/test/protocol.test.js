// The client protocol itself, against mongobench's null wire-protocol
// server (`mongobench testserver`, which answers CRUD commands with canned
// replies after a programmable delay): handshake, refusals, batching of
// operations and results, stop with operations in flight, starvation,
// network errors and secrets.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { Adapter, startServer, start, initMessage, STACKS, uniqueName } = require('./harness');
const pkg = require('../package.json');

let fast; // replies at once
let slow; // holds every reply for a second

test.before(async () => {
  fast = await startServer(['testserver', '--addr', '127.0.0.1:0']);
  slow = await startServer(['testserver', '--addr', '127.0.0.1:0', '--delay', '1s']);
});

test.after(async () => {
  if (fast) await fast.stop();
  if (slow) await slow.stop();
});

const findOp = [{ kind: 'find', collection: 'c' }];

for (const stack of STACKS) {
  test(`${stack}: handshake reports the versions that run`, async () => {
    const a = await start(stack, { uri: fast.uri, database: uniqueName('mb'), operations: findOp });
    try {
      assert.equal(a.ready.stack, stack);
      assert.equal(a.ready.versions.node, process.versions.node);
      assert.equal(a.ready.versions.mongodb, pkg.dependencies.mongodb);
      assert.equal(a.ready.versions.bson, pkg.dependencies.bson);
      assert.equal(a.ready.versions.mongoose, stack === 'node-driver' ? undefined : pkg.dependencies.mongoose);
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  });
}

// Kinds mongobench never sends (the schema refuses them; the adapter once
// ran drop, createIndexes and runCommand on node-driver) are a one-line
// fatal at init on every stack, naming the operation and the kind.
for (const stack of STACKS) {
  for (const kind of ['drop', 'createIndexes', 'runCommand', 'watch']) {
    test(`${stack}: a ${kind} operation is refused at init, naming it`, async () => {
      const a = new Adapter(stack);
      try {
        a.send(initMessage({ stack, uri: fast.uri, database: 'mb', operations: [{ kind: 'find', collection: 'c' }, { name: 'cleanup', kind, collection: 'c' }] }));
        const f = await a.next('fatal');
        assert.match(f.message, new RegExp(`^operation "cleanup": kind ${kind} is not a protocol kind \\(mongobench sends only insertOne, `));
        assert.doesNotMatch(f.message, /\n/);
        assert.equal(await a.exited, 1);
        assert.equal(a.messages.filter((m) => m.type === 'ready').length, 0);
      } finally {
        a.kill();
      }
    });
  }
}

test('bad starts are one-line fatal replies and a non-zero exit', async (t) => {
  const cases = [
    { name: 'unknown --stack', args: ['python-pymongo'], init: null, want: /--stack must be one of node-driver, node-mongoose, node-mongoose-lean/ },
    { name: 'stack mismatch', args: ['node-driver'], init: { stack: 'node-mongoose' }, want: /init asks for stack node-mongoose but the adapter was started with --stack node-driver/ },
    { name: 'protocol 2', args: ['node-driver'], init: { protocol: 2 }, want: /protocol 2 is not supported/ },
    { name: 'operation without a collection', args: ['node-driver'], init: { operations: [{ id: 0, name: 'w', kind: 'find', collection: null }] }, want: /operation "w": kind find needs a collection/ },
    {
      name: 'unknown schema type',
      args: ['node-mongoose'],
      init: { stack: 'node-mongoose', collections: [{ name: 'c', schema: { fields: { at: { type: 'timestamp' } } }, indexes: [] }] },
      want: /schema c\.at: unknown type "timestamp"/,
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const a = new Adapter(c.args[0]);
      try {
        if (c.init) a.send({ ...initMessage({ stack: 'node-driver', uri: fast.uri, database: 'mb', operations: findOp }), ...c.init });
        const f = await a.next('fatal');
        assert.match(f.message, c.want);
        assert.doesNotMatch(f.message, /\n/);
        assert.equal(await a.exited, 1);
      } finally {
        a.kill();
      }
    });
  }
});

test('an unreachable server is a fatal reply that does not show the password', async () => {
  // A port that was free a moment ago: nothing answers there.
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  for (const stack of STACKS) {
    const a = new Adapter(stack);
    try {
      const uri = `mongodb://bench:s3cr%40tPw@127.0.0.1:${port}/?directConnection=true`;
      a.send(initMessage({ stack, uri, database: 'mb', operations: findOp, timeoutMs: 500 }));
      const f = await a.next('fatal');
      assert.match(f.message, /^connecting with node-/);
      assert.equal(await a.exited, 1);
      for (const text of [f.message, a.stderr]) {
        assert.doesNotMatch(text, /s3cr/);
      }
    } finally {
      a.kill();
    }
  }
});

test('a worker asks for more at half a batch, reports results while running, and counts starvation', async () => {
  const a = await start('node-driver', { uri: fast.uri, database: 'mb', operations: findOp });
  try {
    a.send({ type: 'phase', phase: 'load', workers: 2 });
    a.send({ type: 'ops', worker: 0, ops: [[0, {}], [0, {}], [0, {}], [0, {}]] });
    a.send({ type: 'ops', worker: 1, ops: [[0, {}], [0, {}]] });
    // Both workers run dry and ask for more; nothing is sent to them, so
    // they wait. The results come in without a stop.
    const r = await a.waitResults(6);
    const needs = await a.until((ms) => {
      const n = ms.filter((m) => m.type === 'need');
      return n.length >= 2 ? n : undefined;
    }, 'two needs');
    assert.deepEqual(needs.map((n) => n.worker).sort(), [0, 1]);
    // The need of worker 0 (batch of 4) came after its second operation
    // started, so before its last two finished.
    const order = a.messages.filter((m) => m.type === 'need' || m.type === 'done');
    const need0 = order.findIndex((m) => m.type === 'need' && m.worker === 0);
    const done0 = order.map((m, i) => (m.type === 'done' && m.worker === 0 ? i : -1)).filter((i) => i >= 0);
    assert.ok(need0 < done0[done0.length - 1], JSON.stringify(order));
    assert.deepEqual(r.filter((x) => x.worker === 0).length, 4);
    assert.deepEqual(r.filter((x) => x.worker === 1).length, 2);
    for (const x of r) assert.deepEqual([x.id, x.docs, x.err], [0, 1, null]);

    // One more batch for worker 1 after it starved: it runs, then starves
    // again.
    a.send({ type: 'ops', worker: 1, ops: [[0, {}]] });
    await a.waitResults(7);
    a.send({ type: 'stop' });
    const stopped = await a.next('stopped');
    // Worker 0 starved once, worker 1 twice.
    assert.equal(stopped.starved, 3);

    // Results are in order of start within a worker, on the phase's clock.
    for (const w of [0, 1]) {
      const starts = a.results().filter((x) => x.worker === w).map((x) => x.start);
      assert.deepEqual(starts, starts.slice().sort((p, q) => p - q));
    }
    assert.equal(await a.exit(), 0);
  } finally {
    a.kill();
  }
});

test('stop waits for the operations in flight, runs no queued one, and a next phase starts its own clock', async () => {
  for (const stack of STACKS) {
    const a = await start(stack, { uri: slow.uri, database: 'mb', operations: [{ kind: 'findOne', collection: 'c' }] });
    try {
      a.send({ type: 'phase', phase: 'run', workers: 3 });
      for (let w = 0; w < 3; w++) a.send({ type: 'ops', worker: w, ops: Array.from({ length: 10 }, () => [0, {}]) });
      a.send({ type: 'stop' });
      const stopped = await a.next('stopped');
      assert.equal(stopped.starved, 0);
      // Every worker had started its first operation (the server holds it
      // a second), finished it, and started no other.
      const r = a.results();
      assert.deepEqual(r.map((x) => x.worker).sort(), [0, 1, 2], `${stack}: ${JSON.stringify(r)}`);
      for (const x of r) {
        assert.equal(x.err, null);
        assert.equal(x.docs, 1);
        assert.ok(x.latency >= 0.9e9, `${stack}: latency ${x.latency} ns for a reply held 1 s`);
      }
      // The results come before the stopped reply.
      const iStopped = a.messages.findIndex((m) => m.type === 'stopped');
      assert.ok(a.messages.findLastIndex((m) => m.type === 'done') < iStopped);

      // A second phase: its starts count from its own phase message.
      a.send({ type: 'phase', phase: 'run', workers: 1 });
      a.send({ type: 'ops', worker: 0, ops: [[0, {}]] });
      const all = await a.waitResults(4);
      a.send({ type: 'stop' });
      await a.next('stopped');
      assert.ok(all[3].start < 0.9e9, `${stack}: start ${all[3].start} ns on a new clock`);
      assert.equal(await a.exit(), 0);
    } finally {
      a.kill();
    }
  }
});

test('a reply held past timeout_ms is a timeout error; a server that goes away mid-operation is a network error', async () => {
  // The server answers at once for its first stallAfterMs, then holds
  // every reply: operations sent after that are in flight until they time
  // out or the server is killed. The three adapters must connect before
  // the stall; a loaded machine that could not connect them in time gets a
  // server whose stall begins twice as late (12 s, 24 s, 48 s), rather than
  // a failure for its speed. (An adapter still connecting when the stall
  // begins would wait for it: the attempt is given up at the stall.)
  const timeoutMs = 5000;
  let doomed;
  let since;
  let stallAfterMs;
  let adapters = [];
  try {
    for (stallAfterMs = 12000; ; stallAfterMs *= 2) {
      doomed = await startServer(['testserver', '--addr', '127.0.0.1:0', '--stall-after', `${stallAfterMs}ms`, '--stall-for', '10m']);
      since = Date.now();
      // No heartbeat during the test: a monitor's hello held by the stall
      // would mark the server unknown and fail operations with a server
      // selection error instead, whenever it happened to fall due.
      const uri = `${doomed.uri}&heartbeatFrequencyMS=600000`;
      let timer;
      const stallNear = new Promise((r) => {
        timer = setTimeout(() => r(false), stallAfterMs - 500);
      });
      let connected = true;
      for (const stack of STACKS) {
        const a = new Adapter(stack);
        adapters.push(a);
        a.send(initMessage({ stack, uri, database: 'mb', operations: findOp, timeoutMs }));
        const ready = a.next('ready').then((m) => {
          a.ready = m;
          return true;
        });
        connected = await Promise.race([ready, stallNear]);
        if (!connected) break;
      }
      clearTimeout(timer);
      if (connected && Date.now() - since < stallAfterMs - 500) break;
      assert.ok(stallAfterMs < 48000, `the adapters did not connect within ${stallAfterMs} ms`);
      for (const a of adapters) a.kill();
      adapters = [];
      await doomed.stop();
      doomed = undefined;
    }
    // Until the stall has begun (the server's clock started before since).
    await new Promise((r) => setTimeout(r, stallAfterMs + 500 - (Date.now() - since)));
    for (const a of adapters) {
      a.send({ type: 'phase', phase: 'run', workers: 1 });
      a.send({ type: 'ops', worker: 0, ops: [[0, {}]] });
    }
    for (const a of adapters) {
      const [x] = await a.waitResults(1);
      assert.ok(x.err, `${a.stack}: an error`);
      assert.deepEqual([x.err.name, x.err.timeout, x.err.network, x.err.code], ['MongoOperationTimeoutError', true, false, null], `${a.stack}: ${JSON.stringify(x.err)}`);
      // Ended by the timeout: not before it, and long before the stall.
      assert.ok(x.latency >= 0.9 * timeoutMs * 1e6 && x.latency < 60e9, `${a.stack}: latency ${x.latency / 1e6} ms`);
    }

    for (const a of adapters) a.send({ type: 'ops', worker: 0, ops: [[0, {}]] });
    await new Promise((r) => setTimeout(r, 1000));
    for (const a of adapters) assert.equal(a.results().length, 1, `${a.stack}: the second find is held`);
    doomed.kill('SIGKILL');
    for (const a of adapters) {
      const [, x] = await a.waitResults(2);
      assert.ok(x.err, `${a.stack}: an error`);
      assert.deepEqual([x.err.network, x.err.timeout, x.err.code], [true, false, null], `${a.stack}: ${JSON.stringify(x.err)}`);
      a.send({ type: 'stop' });
      await a.next('stopped');
      assert.equal(await a.exit(), 0);
    }
  } finally {
    for (const a of adapters) a.kill();
    if (doomed) await doomed.stop();
  }
});

test('a reader that stops reading does not stop the measured operations', async () => {
  // Replies are written off the event loop: with the pipe full, the
  // workers keep running and their results wait in memory. Were replies
  // written synchronously (as process.stdout does on a pipe), every worker
  // would stop for as long as mongobench does not read.
  const server = await startServer(['testserver', '--addr', '127.0.0.1:0', '--delay', '1ms']);
  const a = await start('node-driver', { uri: server.uri, database: 'mb', operations: findOp });
  try {
    const perWorker = 6000;
    a.send({ type: 'phase', phase: 'run', workers: 4 });
    for (let w = 0; w < 4; w++) a.send({ type: 'ops', worker: w, ops: Array.from({ length: perWorker }, () => [0, {}]) });
    a.child.stdout.pause();
    const pauseMs = 8000;
    await new Promise((r) => setTimeout(r, pauseMs));
    a.child.stdout.resume();
    const r = await a.waitResults(4 * perWorker);
    const starts = r.map((x) => x.start).sort((p, q) => p - q);
    let gap = 0;
    for (let i = 1; i < starts.length; i++) gap = Math.max(gap, starts[i] - starts[i - 1]);
    // The operations ran on through the pause (24000 of at least 1 ms on
    // 4 workers take at least 6 s; their results fill the pipe in less),
    // with no stop of anything like its length.
    assert.ok(gap < 2000e6, `longest time without a new operation: ${gap / 1e6} ms`);
    a.send({ type: 'stop' });
    await a.next('stopped');
    assert.equal(await a.exit(), 0);
  } finally {
    a.kill();
    await server.stop();
  }
});

test('operations sent before their phase line run in it; closing standard input ends the adapter like exit', async () => {
  const a = await start('node-mongoose-lean', { uri: fast.uri, database: 'mb', operations: findOp });
  try {
    a.send({ type: 'ops', worker: 0, ops: [[0, {}], [0, {}]] });
    a.send({ type: 'phase', phase: 'run', workers: 1 });
    const r = await a.waitResults(2);
    assert.deepEqual(r.map((x) => [x.id, x.docs, x.err]), [[0, 1, null], [0, 1, null]]);
    a.child.stdin.end();
    assert.equal(await a.exited, 0);
    // The phase's results were all sent, and no stopped reply (no stop).
    assert.equal(a.messages.filter((m) => m.type === 'stopped').length, 0);
  } finally {
    a.kill();
  }
});
