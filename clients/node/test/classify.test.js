// Error classification for the done replies, on the driver's own error
// classes (the ones a stack call throws).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const mongodb = require('mongodb');
const { classify, passwordsOf } = require('../adapter');

const keep = (s) => String(s);

test('driver errors map to code, name, labels, network and timeout', () => {
  const cases = [
    [new mongodb.MongoNetworkError('connection 3 to 127.0.0.1:1 closed'), { code: null, name: 'MongoNetworkError', network: true, timeout: false }],
    [new mongodb.MongoNetworkTimeoutError('connection timed out'), { code: null, name: 'MongoNetworkTimeoutError', network: true, timeout: true }],
    [new mongodb.MongoServerSelectionError('Server selection timed out after 500 ms', { type: 'Unknown', servers: new Map() }), { code: null, name: 'MongoServerSelectionError', network: true, timeout: false }],
    [new mongodb.MongoOperationTimeoutError('Timed out during operation'), { code: null, name: 'MongoOperationTimeoutError', network: false, timeout: true }],
    [new mongodb.MongoServerError({ ok: 0, code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit' }), { code: 50, name: 'MongoServerError', network: false, timeout: true }],
    [new mongodb.MongoServerError({ ok: 0, code: 11000, codeName: 'DuplicateKey', errmsg: 'E11000 duplicate key error' }), { code: 11000, name: 'MongoServerError', network: false, timeout: false }],
    [new TypeError('Invalid sort value'), { code: null, name: 'TypeError', network: false, timeout: false }],
  ];
  for (const [err, want] of cases) {
    const got = classify(err, keep);
    assert.deepEqual({ code: got.code, name: got.name, network: got.network, timeout: got.timeout }, want, err.name);
    assert.equal(got.message, err.message);
    assert.ok(Array.isArray(got.labels));
  }
});

test('labels are kept, and a network error label makes a network error', () => {
  const e = new mongodb.MongoServerError({ ok: 0, code: 91, codeName: 'ShutdownInProgress', errmsg: 'shutting down', errorLabels: ['RetryableWriteError', 'NetworkError'] });
  const got = classify(e, keep);
  assert.deepEqual(got.labels.sort(), ['NetworkError', 'RetryableWriteError']);
  assert.equal(got.network, true);
  assert.equal(got.code, 91);
});

test('messages are one line without the password', () => {
  const scrub = (s) => String(s).split('hunter2').join('xxxxx');
  const got = classify(new Error('auth failed for bench:hunter2\n  at somewhere'), scrub);
  assert.equal(got.message, 'auth failed for bench:xxxxx at somewhere');
  assert.equal(classify('a thrown string', keep).message, 'a thrown string');
});

test('passwordsOf finds the password of a URI, raw and percent-decoded', () => {
  assert.deepEqual(passwordsOf('mongodb://bench:p%40ss@h:1/db'), ['p%40ss', 'p@ss']);
  assert.deepEqual(passwordsOf('mongodb+srv://u:pw@cluster.example/'), ['pw']);
  assert.deepEqual(passwordsOf('mongodb://u@h/'), []);
  assert.deepEqual(passwordsOf('mongodb://h:27017/'), []);
});
