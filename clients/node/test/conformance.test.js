// The protocol's shared conformance fixtures (clients/protocol), which
// mongobench's Go side and the Python adapter check too: the schema
// accepts every valid message and refuses every invalid one, and each
// stack answers the request/reply exchanges as written, against the null
// wire-protocol server, with replies the schema accepts.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const Ajv2020 = require('ajv/dist/2020');
const { Adapter, startServer, STACKS, WAIT_MS } = require('./harness');

const PROTOCOL = path.join(__dirname, '..', '..', 'protocol');
const read = (name) => JSON.parse(fs.readFileSync(path.join(PROTOCOL, name), 'utf8'));

const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true });
ajv.addSchema(read('schema.json'), 'protocol');
const validators = {
  request: ajv.getSchema('protocol#/$defs/request'),
  reply: ajv.getSchema('protocol#/$defs/reply'),
};

test('valid fixtures are valid', () => {
  const { messages } = read('fixtures/valid.json');
  assert.ok(messages.length > 0);
  for (const m of messages) {
    const v = validators[m.direction];
    assert.ok(v(m.message), `${m.direction} "${m.name}": ${ajv.errorsText(v.errors)}`);
  }
});

test('invalid fixtures are refused', () => {
  const { messages } = read('fixtures/invalid.json');
  assert.ok(messages.length > 0);
  for (const m of messages) assert.equal(validators[m.direction](m.message), false, `${m.direction} "${m.name}" accepted`);
});

// substitute replaces "$URI" and "$STACK" anywhere in a fixture.
function substitute(v, vars) {
  if (typeof v === 'string') return Object.hasOwn(vars, v) ? vars[v] : v;
  if (Array.isArray(v)) return v.map((x) => substitute(x, vars));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, vars)]));
  return v;
}

// condensed leaves need lines out and merges consecutive done lines into
// {type: 'done', worker, ops: [ids]}.
function condensed(messages) {
  const out = [];
  for (const m of messages) {
    if (m.type === 'need') continue;
    const last = out[out.length - 1];
    if (m.type === 'done' && last && last.type === 'done' && last.worker === m.worker) {
      last.ops.push(...m.r.map((r) => r[0]));
    } else if (m.type === 'done') {
      out.push({ type: 'done', worker: m.worker, ops: m.r.map((r) => r[0]) });
    } else {
      out.push(m);
    }
  }
  return out;
}

let server;
test.before(async () => {
  server = await startServer(['testserver', '--addr', '127.0.0.1:0']);
});
test.after(async () => {
  if (server) await server.stop();
});

// foreignKinds returns the invalid fixtures whose init names an operation
// kind outside the protocol's (kinds mongobench never sends), with it.
function foreignKinds() {
  const kinds = read('schema.json').$defs.operation.properties.kind.enum;
  const out = [];
  for (const m of read('fixtures/invalid.json').messages) {
    if (m.direction !== 'request' || m.message.type !== 'init') continue;
    for (const op of m.message.operations || []) {
      if (!kinds.includes(op.kind)) out.push({ name: m.name, init: m.message, op });
    }
  }
  return out;
}

test('the invalid fixtures hold the kinds the adapters once ran', () => {
  const kinds = new Set(foreignKinds().map((f) => f.op.kind));
  assert.ok(kinds.has('drop') && kinds.has('runCommand'), [...kinds].join(', '));
});

for (const stack of STACKS) {
  for (const f of foreignKinds()) {
    test(`${stack}: invalid fixture "${f.name}" is a fatal naming the kind`, async () => {
      const a = new Adapter(stack);
      try {
        a.send({ ...f.init, stack, uri: server.uri });
        a.child.stdin.end();
        const bound = setTimeout(() => a.child.kill('SIGKILL'), WAIT_MS);
        const code = await a.exited;
        clearTimeout(bound);
        assert.equal(code, 1);
        assert.deepEqual(a.messages.map((x) => x.type), ['fatal']);
        const m = a.messages[0];
        assert.ok(validators.reply(m), ajv.errorsText(validators.reply.errors));
        assert.ok(m.message.startsWith(`operation ${JSON.stringify(f.op.name)}: kind ${f.op.kind} is not a protocol kind`), m.message);
      } finally {
        a.kill();
      }
    });
  }
}

for (const stack of STACKS) {
  for (const ex of read('fixtures/exchanges.json').exchanges) {
    test(`${stack}: exchange "${ex.name}"`, async () => {
      const vars = { $URI: server.uri, $STACK: stack };
      const a = new Adapter(stack);
      try {
        for (const req of substitute(ex.requests, vars)) {
          if (req.type === 'stop' && ex.records_before_stop) await a.waitResults(ex.records_before_stop);
          a.send(req);
        }
        a.child.stdin.end();
        const bound = setTimeout(() => a.child.kill('SIGKILL'), WAIT_MS);
        const code = await a.exited;
        clearTimeout(bound);

        for (const m of a.messages) assert.ok(validators.reply(m), `reply ${JSON.stringify(m)}: ${ajv.errorsText(validators.reply.errors)}`);

        const got = condensed(a.messages);
        const want = substitute(ex.replies, vars);
        assert.equal(got.length, want.length, `replies ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
        want.forEach((w, i) => {
          for (const [k, v] of Object.entries(w)) assert.deepEqual(got[i][k], v, `reply ${i} (${got[i].type}) field ${k}`);
        });

        if (ex.exit_code === 'nonzero') assert.notEqual(code, 0);
        else assert.equal(code, ex.exit_code);
      } finally {
        a.kill();
      }
    });
  }
}
