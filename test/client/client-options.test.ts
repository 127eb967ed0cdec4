import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BankClient, OperatorClient, type BankClientOptions } from '../../src/client/index.ts'
import { default_timeout_ms } from '../../src/client/transport.ts'
import { database_bounds_default } from '../../src/db/bounds.ts'

// A client made with an option missing says so when it is made, naming the option and what
// it takes; `new BankClient({ token: undefined })` used to fail on its first call, inside
// nats.js, with "Cannot read properties of undefined (reading 'trim')".

const missing = (options: unknown) => options as BankClientOptions

test('client options - a missing token, or one that is not a string, is refused at construction, naming it', () => {
  const partnerId = '6f1c1f0e-0000-4000-8000-000000000000'
  assert.throws(() => new BankClient(missing({ token: undefined, partnerId })), {
    name: 'TypeError',
    message: /^new BankClient\(\{ token \}\): token is missing; it must be the credential the bank issued/,
  })
  assert.throws(() => new BankClient(missing({ token: null, partnerId })), { name: 'TypeError', message: /token is null/ })
  assert.throws(() => new BankClient(missing({ token: 'pk_x', partnerId: ' ' })), { message: /partnerId is " "/ })
  assert.throws(() => new OperatorClient(missing({ token: undefined })), {
    name: 'TypeError',
    message: /^new OperatorClient\(\{ token \}\): token is missing/,
  })
  assert.throws(() => new OperatorClient(missing({ token: 42 })), { name: 'TypeError', message: /token is 42; it must be/ })
})

test('client options - a partner client without its partner id, or with no server, is refused', () => {
  assert.throws(() => new BankClient(missing({ token: 'pk_x' })), {
    name: 'TypeError',
    message: /^new BankClient\(\{ partnerId \}\): partnerId is missing; it must be the partner id/,
  })
  assert.throws(() => new BankClient(missing({ token: 'pk_x', partnerId: 'p', servers: [] })), { message: /servers must be a NATS URL/ })
  assert.throws(() => new OperatorClient(missing({ token: 'opk_x', servers: '' })), { message: /servers must be a NATS URL/ })
})

test('client options - well-formed options make a client without connecting', async () => {
  const client = new BankClient({ token: 'pk_x', partnerId: 'p', servers: 'nats://127.0.0.1:1' })
  await client.close()
  await new OperatorClient({ token: 'opk_x', servers: ['nats://127.0.0.1:1'] }).close()
  // An empty token is a string: the bank answers it with 401 (test/operators/operator-access).
  await new OperatorClient({ token: '', servers: 'nats://127.0.0.1:1' }).close()
})

test('client options - the default timeout outlasts the bank\'s own bounds on a stalled database, so its 503 arrives first', () => {
  // A request may wait for a pooled connection, then for a query that gets no answer.
  const { connect_timeout_ms, query_timeout_ms } = database_bounds_default
  assert.ok(default_timeout_ms > connect_timeout_ms + query_timeout_ms, `${default_timeout_ms} ms`)
})
