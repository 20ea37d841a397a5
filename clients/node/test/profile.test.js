// --client-profile: the adapter records a V8 CPU profile of the measured
// part and summarises its top frames.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startServer, start } = require('./harness');
const { topFrames } = require('../adapter');

test('topFrames computes self and total time from samples and time deltas, once per sample under recursion', () => {
  const frame = (id, functionName, children = []) => ({
    id,
    callFrame: { functionName, url: functionName === '(root)' ? '' : 'file:///app.js', lineNumber: functionName === 'b' ? 9 : 4, columnNumber: 0, scriptId: '1' },
    hitCount: 0,
    children,
  });
  // (root) -> a -> b -> a (a recursion through b).
  const profile = {
    nodes: [frame(1, '(root)', [2]), frame(2, 'a', [3]), frame(3, 'b', [4]), frame(4, 'a')],
    startTime: 1000,
    endTime: 2000,
    samples: [3, 4, 2, 3],
    timeDeltas: [0, 100, 200, 300],
  };
  // Samples last 100, 200, 300 and 400 us (the last one until endTime).
  const top = topFrames(profile, 30);
  assert.deepEqual(top.frames, [
    { function: 'a', file: 'file:///app.js', line: 5, self_ms: 0.5, total_ms: 1, calls: null, samples: 2 },
    { function: 'b', file: 'file:///app.js', line: 10, self_ms: 0.5, total_ms: 0.7, calls: null, samples: 2 },
  ]);
  assert.deepEqual(top.frames_by_total.map((f) => f.function), ['a', 'b']);
  assert.equal(topFrames(profile, 1).frames.length, 1);
});

test('init.profile writes PREFIX.cpuprofile and PREFIX.top.json at exit', async () => {
  const server = await startServer(['testserver', '--addr', '127.0.0.1:0']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-node-profile-'));
  try {
    for (const stack of ['node-driver', 'node-mongoose']) {
      const prefix = path.join(dir, stack);
      const a = await start(stack, {
        uri: server.uri,
        database: 'mb',
        profile: prefix,
        operations: [{ kind: 'find', collection: 'c' }],
      });
      try {
        assert.equal(fs.existsSync(`${prefix}.cpuprofile`), false, 'nothing is written before exit');
        a.send({ type: 'phase', phase: 'run', workers: 4 });
        for (let w = 0; w < 4; w++) a.send({ type: 'ops', worker: w, ops: Array.from({ length: 250 }, () => [0, { filter: {} }]) });
        await a.waitResults(1000);
        a.send({ type: 'stop' });
        await a.next('stopped');
        assert.equal(await a.exit(), 0);
      } finally {
        a.kill();
      }
      const profile = JSON.parse(fs.readFileSync(`${prefix}.cpuprofile`, 'utf8'));
      assert.ok(profile.nodes.length > 1);
      assert.ok(profile.samples.length > 0);
      assert.equal(profile.samples.length, profile.timeDeltas.length);

      const top = JSON.parse(fs.readFileSync(`${prefix}.top.json`, 'utf8'));
      for (const list of [top.frames, top.frames_by_total]) {
        assert.ok(list.length > 0 && list.length <= 30, `${list.length} frames`);
        for (const f of list) {
          assert.deepEqual(Object.keys(f), ['function', 'file', 'line', 'self_ms', 'total_ms', 'calls', 'samples']);
          assert.ok(f.self_ms <= f.total_ms, JSON.stringify(f));
          assert.ok(Number.isInteger(f.line) && f.line >= 0);
        }
      }
      const self = top.frames.map((f) => f.self_ms);
      assert.deepEqual(self, self.slice().sort((p, q) => q - p));
      const total = top.frames_by_total.map((f) => f.total_ms);
      assert.deepEqual(total, total.slice().sort((p, q) => q - p));
      // The measured calls ran while the profiler did: the driver's code
      // is among the frames seen.
      const seen = new Set(profile.nodes.map((n) => n.callFrame.url));
      assert.ok([...seen].some((u) => u.includes('/node_modules/mongodb/')), 'driver frames in the profile');
      if (stack === 'node-mongoose') assert.ok([...seen].some((u) => u.includes('/node_modules/mongoose/')), 'Mongoose frames in the profile');
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await server.stop();
  }
});
