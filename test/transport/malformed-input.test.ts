import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { allOperations, type Operation } from '../../src/contract/index.ts'
import { useTestBank, type RawReply } from '../support/harness.ts'
import { assertErrorReply, assertSuccessReply, detailFields } from './error-reply.ts'
import { fixtureBankEnv, prepareFixture, rightfulToken, send, subjectOf, validBody, type OperationFixture } from './operation-bodies.ts'

// Whatever bytes arrive, every operation answers with a 400 of the error shape and the
// process stays up (docs/guides/wire-conventions.md: malformed JSON and non-object bodies are 400;
// a 500 never happens for a caller's mistake).

// With the NATS authority (the partners' NATS operations need it), sending as the bank's own tools
// do.
const tb = useTestBank({ natsAuthority: 'bank', env: fixtureBankEnv })
let f: OperationFixture

before(async () => {
  await tb.ready
  f = await prepareFixture(tb)
})

const request = (op: Operation, body: string | Uint8Array | Record<string,
  unknown>): Promise<RawReply> =>
  send(f, op, body, { token: rightfulToken(op, f) })

test('transport - malformed JSON is a 400 invalid_json on every operation', async () => {
  const malformed = ['{nope', '{"entity_id":', '{"a":1,}', "{'a':1}", '{"a":1}}', 'undefined',
    '{"a":NaN}', '\u0000']
  for (const op of allOperations()) {
    for (const body of malformed) {
      assertErrorReply(await request(op, body), 400, 'invalid_json',
        `${op.name} ${JSON.stringify(body)}`)
    }
  }
})

test('transport - a JSON body that is not an object is a 400 on every operation', async () => {
  for (const op of allOperations()) {
    for (const body of ['[]', '[{}]', JSON.stringify([validBody(op, f)]), 'null', '42', '-1.5e400',
        '"text"', 'true', 'false']) {
      const reply = await request(op, body)
      assertErrorReply(reply, 400, 'invalid_request', `${op.name} ${body.slice(0, 30)}`)
      assert.deepEqual(detailFields(reply), ['(body)'], op.name)
    }
  }
})

test('transport - a body over the size limit is a 400 payload_too_large; one at the limit is read', async () => {
  assert.equal(tb.config.requestBytesMax, 65536)
  for (const op of allOperations()) {
    // An operation may declare a limit of its own (a bulk batch of 1000 payments).
    const limit: number = op.requestBytesMax ?? tb.config.requestBytesMax
    // JSON allows trailing whitespace, so padding keeps the body valid at any length.
    const json: string = JSON.stringify(validBody(op, f))
    const jsonBytes: number = Buffer.byteLength(json)
    const atLimit: string = json + ' '.repeat(limit - jsonBytes)
    assert.equal(Buffer.byteLength(atLimit), limit)
    assertSuccessReply(await request(op, atLimit), `${op.name} at the limit`)
    const over: string = json + ' '.repeat(limit + 1 - jsonBytes)
    const reply = await request(op, over)
    assertErrorReply(reply, 400, 'payload_too_large', `${op.name} one byte over`)
    assert.deepEqual(detailFields(reply), ['(body)'])
    // NATS carries at most 1 MiB: "far over" stays below that.
    assertErrorReply(await request(op, 'x'.repeat(Math.min(limit * 8, 1_000_000))), 400,
      'payload_too_large', `${op.name} far over`)
  }
})

test('transport - bytes that are not UTF-8 are a 400 on every operation', async () => {
  const invalid = [
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // {"a":"<ff fe>"}
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]), // overlong "/"
    // lone surrogate
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]), // truncated sequence
  ]
  for (const op of allOperations()) {
    for (const bytes of invalid) {
      const reply = await request(op, new Uint8Array(bytes))
      assertErrorReply(reply, 400, undefined, `${op.name} ${bytes.toString('hex')}`)
    }
    // Valid multi-byte UTF-8 is not refused as such.
    const body = { ...validBody(op, f), 'ünknown_☃': 'é' }
    const reply = await request(op, body)
    assertErrorReply(reply, 400, 'invalid_request', `${op.name} multi-byte`)
    assert.ok(detailFields(reply).includes('ünknown_☃'), op.name)
  }
})

test('transport - an unknown field is a 400 that names the field, on every operation', async () => {
  for (const op of allOperations()) {
    const reply = await request(op, { ...validBody(op, f), surplus_field: 1 })
    assertErrorReply(reply, 400, 'invalid_request', `${op.name} unknown field`)
    assert.deepEqual(detailFields(reply), ['surplus_field'], op.name)
    assert.match(reply.body.error.message, /surplus_field/, op.name)
    const two = await request(op, { ...validBody(op, f), first_extra: true, second_extra: null })
    assert.deepEqual(detailFields(two).sort(), ['first_extra', 'second_extra'], op.name)
  }
})

test('transport - an unknown field inside a nested object is named with its path', async () => {
  const op = allOperations().find((o) => o.name === 'user_create')!
  const body = { ...validBody(op, f), address: { address_line_1: '1 Main Road', floor: 3 } }
  const reply = await request(op, body)
  assertErrorReply(reply, 400, 'invalid_request', 'nested')
  assert.deepEqual(detailFields(reply), ['address.floor'])
})

test('transport - hostile JSON shapes are 400s, not faults', async () => {
  const deepArray = '['.repeat(20_000) + ']'.repeat(20_000)
  const deepObject = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)
  const control = JSON.stringify({ 'line\r\nbreak': 1 })
  for (const op of allOperations()) {
    const sample = validBody(op, f)
    const members = JSON.stringify(sample).slice(1, -1)
    const bodies: Array<[string, string]> = [
      ['deep array', deepArray],
      ['deep object', deepObject],
      ['__proto__', `{"__proto__":{"admin":true}${members ? `,${members}` : ''}}`],
      ['constructor', JSON.stringify({ ...sample, constructor: { prototype: { admin: true } } })],
      ['control characters in a key', control],
      ['huge number', `{"n":1e400${members ? `,${members}` : ''}}`],
    ]
    for (const [label, body] of bodies) {
      const reply = await request(op, body)
      assertErrorReply(reply, 400, undefined, `${op.name} ${label}`)
      if (label === '__proto__') assert.ok(detailFields(reply).includes('__proto__'),
        `${op.name}: ${detailFields(reply)}`)
    }
  }
  // The prototype of plain objects was not polluted by any of it.
  assert.equal(({} as Record<string, unknown>).admin, undefined)
})

test('transport - every field of the wrong type is a 400 naming that field', async () => {
  for (const op of allOperations()) {
    const sample = validBody(op, f)
    for (const field of Object.keys(sample)) {
      for (const wrong of [{ nested: true }, [1, 2], 12345678901234567890]) {
        if (typeof sample[field] === typeof wrong) continue
        const reply = await request(op, { ...sample, [field]: wrong })
        assertErrorReply(reply, 400, 'invalid_request',
          `${op.name}.${field} = ${JSON.stringify(wrong)}`)
        assert.ok(detailFields(reply).some((d) => d === field || d.startsWith(`${field}.`)),
          `${op.name}.${field}: ${detailFields(reply)}`)
      }
    }
  }
})

test('transport - null on any field of any operation is answered as if the field were not sent', async () => {
  // The incumbent's reference client sends every field, a missing one as null.
  for (const op of allOperations()) {
    const sample = validBody(op, f)
    for (const field of Object.keys(sample)) {
      const { [field]: _omitted, ...without } = sample
      const absent = await request(op, without)
      const sentNull = await request(op, { ...sample, [field]: null })
      const context = `${op.name}.${field} = null`
      if (absent.code === 400) {
        assertErrorReply(sentNull, 400, 'invalid_request', context)
        assert.deepEqual(detailFields(sentNull), detailFields(absent), context)
      } else {
        assert.notEqual(sentNull.code, 400, `${context}: ${JSON.stringify(sentNull.body)}`)
      }
    }
  }
})

test('transport - the service keeps serving after all of it, including requests nobody waits for', async () => {
  // Messages without a reply subject must be handled (and dropped) without harm.
  for (const op of allOperations()) {
    for (const body of ['{nope', 'null', 'x'.repeat(70_000), '{"surplus":1}']) {
      tb.nc.publish(subjectOf(op, f.partner.partnerId), body)
    }
  }
  await tb.nc.flush()
  for (const op of allOperations()) {
    assertSuccessReply(await request(op, validBody(op, f)), `${op.name} afterwards`)
  }
  const list = await f.partner.client.entities.list()
  assert.ok(list.entities.some((e) => e.id === f.partner.rootEntityId))
})
