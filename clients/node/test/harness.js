// Test harness for adapter.js: starts real servers with the mongobench
// binary (embedded FerretDB through `mongobench serve`, the null wire
// protocol server through `mongobench testserver`), starts the adapter as
// mongobench does, and speaks the client protocol to it.
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const ADAPTER = path.join(__dirname, '..', 'adapter.js');
const REPO = path.join(__dirname, '..', '..', '..');

// WAIT_MS bounds every wait for a reply: generous, because the machines
// running these tests are noisy, yet finite so that no test hangs.
const WAIT_MS = 60000;

let binary = null;

// Every process a test starts is killed when the test process ends, even
// when a test fails half-way.
const children = new Set();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

// mongobenchBinary returns the mongobench binary named by $MONGOBENCH_BIN,
// or builds one from the repository into a temporary directory.
function mongobenchBinary() {
  if (binary) return binary;
  if (process.env.MONGOBENCH_BIN) {
    binary = process.env.MONGOBENCH_BIN;
    return binary;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-node-test-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  binary = path.join(dir, 'mongobench');
  execFileSync('go', ['build', '-o', binary, './cmd/mongobench'], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
  return binary;
}

// startServer runs `mongobench ARGS...` (serve or testserver, always with a
// --for bound) and resolves with the connection string it prints and a
// stop function.
function startServer(args) {
  const child = track(spawn(mongobenchBinary(), [...args, '--for', '600s'], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mongobench ${args[0]} printed no URI in time: ${stderr}`));
    }, WAIT_MS);
    const rl = readline.createInterface({ input: child.stdout });
    rl.once('line', (uri) => {
      clearTimeout(timer);
      const exited = new Promise((r) => child.once('exit', r));
      resolve({
        uri: uri.trim(),
        kill: (sig) => child.kill(sig),
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mongobench ${args[0]} exited (${code}): ${stderr}`));
    });
  });
}

// Adapter is one adapter process and the replies it sent.
class Adapter {
  constructor(stack, extraArgs = []) {
    this.stack = stack;
    this.child = track(spawn(process.execPath, [ADAPTER, ...(stack ? ['--stack', stack] : []), ...extraArgs], { stdio: ['pipe', 'pipe', 'pipe'] }));
    this.messages = [];
    this.waiters = [];
    this.stderr = '';
    this.child.stderr.on('data', (d) => {
      this.stderr += d;
    });
    this.child.stdin.on('error', () => {}); // the adapter may have exited
    const rl = readline.createInterface({ input: this.child.stdout });
    rl.on('line', (line) => {
      this.messages.push(JSON.parse(line));
      this.poke();
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        rl.close();
        setImmediate(() => {
          this.closed = true;
          this.poke();
          resolve(code);
        });
      });
    });
  }

  poke() {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  send(msg) {
    this.child.stdin.write(JSON.stringify(msg) + '\n');
  }

  // until resolves when pred(messages) returns something other than
  // undefined, and rejects when the adapter exits first or WAIT_MS passes.
  until(pred, what) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms; stderr: ${this.stderr}`)), WAIT_MS);
      const check = () => {
        const v = pred(this.messages);
        if (v !== undefined) {
          clearTimeout(timer);
          resolve(v);
          return;
        }
        if (this.closed) {
          clearTimeout(timer);
          reject(new Error(`adapter exited (${this.exitCode}) before ${what}; stderr: ${this.stderr}`));
          return;
        }
        this.waiters.push(check);
      };
      check();
    });
  }

  // next waits for the first message of a type not consumed yet.
  next(type) {
    return this.until((ms) => {
      const i = ms.findIndex((m) => m.type === type && !m.seen);
      if (i < 0) return undefined;
      ms[i].seen = true;
      return ms[i];
    }, `"${type}" message`);
  }

  // results returns the results of all done messages so far, as objects.
  results() {
    const out = [];
    for (const m of this.messages) {
      if (m.type !== 'done') continue;
      for (const [id, start, latency, docs, err, decode] of m.r) out.push({ worker: m.worker, id, start, latency, docs, err, decode });
    }
    return out;
  }

  waitResults(n) {
    return this.until(() => {
      const r = this.results();
      return r.length >= n ? r : undefined;
    }, `${n} results`);
  }

  async exit() {
    this.send({ type: 'exit' });
    this.child.stdin.end();
    const bound = setTimeout(() => this.child.kill('SIGKILL'), WAIT_MS);
    const code = await this.exited;
    clearTimeout(bound);
    return code;
  }

  kill() {
    if (this.exitCode === undefined) this.child.kill('SIGKILL');
  }
}

// initMessage builds an init message; ops are [name, kind, collection,
// extra fields].
function initMessage({ stack, uri, database, collections = [], operations = [], profile = null, timeoutMs = 10000 }) {
  return {
    type: 'init',
    protocol: 1,
    stack,
    uri,
    database,
    timeout_ms: timeoutMs,
    profile,
    collections,
    operations: operations.map((o, id) => ({
      id,
      name: o.name || `${o.kind}${id}`,
      kind: o.kind,
      collection: o.collection === undefined ? 'c' : o.collection,
      write_concern: o.write_concern || null,
      read_preference: o.read_preference || null,
    })),
  };
}

// start spawns an adapter and completes the handshake.
async function start(stack, init) {
  const a = new Adapter(stack);
  a.send(initMessage({ stack, ...init }));
  a.ready = await a.next('ready');
  return a;
}

// runOps runs one phase with one worker that executes ops ([opid, args]
// pairs) in order, waits for all their results, stops the phase and
// returns the results in order.
async function runOps(a, ops) {
  const before = a.results().length;
  a.send({ type: 'phase', phase: 'run', workers: 1 });
  a.send({ type: 'ops', worker: 0, ops });
  const all = await a.waitResults(before + ops.length);
  a.send({ type: 'stop' });
  await a.next('stopped');
  return all.slice(before);
}

const STACKS = ['node-driver', 'node-mongoose', 'node-mongoose-lean'];

// uniqueName returns a database name no other test uses.
let counter = 0;
function uniqueName(prefix) {
  counter++;
  return `${prefix}_${process.pid}_${counter}`;
}

module.exports = { Adapter, startServer, start, runOps, initMessage, STACKS, uniqueName, WAIT_MS, ADAPTER };
