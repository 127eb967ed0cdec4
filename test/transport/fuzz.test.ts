import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { allOperations, subjectFor, type Operation } from '../../src/contract/index.ts'
import { onboardPartner, rawRequest, useTestBank, type RawReply } from '../support/harness.ts'
import { numberedPersonalEntity } from '../support/fixtures.ts'
import { assertSuccessReply } from './error-reply.ts'
import { allHostiles, getPath, prototypeKeys, rawValueFor, refusedText, withExtraKey, withRawValues } from './fuzz-cases.ts'
import { assertReply, expectationFor, type Expectation, type FieldKind, type FieldSpec, fieldsOf, objectPathsOf, schemaIssueFields } from './fuzz-schema.ts'
import { fixtureBankEnv, prepareFixture, rightfulToken, send, validBody, type OperationFixture } from './operation-bodies.ts'

// Every subject of the endpoint table, fed requests built from its own zod schema with one
// or more fields replaced by hostile values (docs/guides/wire-conventions.md: a caller's
// mistake is a 4xx, never a 500, and a reply never shows internals). An oracle decides from the
// bytes alone what the answer must be: a 400 naming the field when the schema or the text rule
// refuses it, otherwise any answer but a fault.
//
// The ledger writes transfers of many callers in one database transaction, so the bank
// runs here with one batch in flight: whatever queues while a batch commits goes into the
// next one together, the most mixing a batch can get.

// With the NATS authority (the partners' NATS operations need it), sending as the bank's own tools
// do.
const tb = useTestBank(
  { natsAuthority: 'bank', env: { ...fixtureBankEnv, BANK_LEDGER_BATCHES_IN_FLIGHT_MAX: '1' } })
let f: OperationFixture

// A rejection or exception nobody handles ends a production process (Node's default), so
// one seen here means a request could have taken the service down.
const unhandled: string[] = []
const onUnhandled = (error: unknown) => void unhandled.push(String((error as Error)?.stack ?? error)
  .split('\n').slice(0, 3).join(' / '))
process.on('unhandledRejection', onUnhandled)
process.on('uncaughtException', onUnhandled)

before(async () => {
  await tb.ready
  f = await prepareFixture(tb)
})
after(() => {
  process.off('unhandledRejection', onUnhandled)
  process.off('uncaughtException', onUnhandled)
})

/**
 * Valid values for optional fields the shared samples leave out, so that they are fuzzed in place.
 */
function optionalSamples(fx: OperationFixture): Record<string, unknown> {
  return {
    tax_number: '9012345678',
    address: { address_line_1: '1 Main Road', address_line_2: 'Unit 4', city: 'Cape Town',
      state: 'Western Cape', postcode: '8001', country: 'ZAF' },
    address_line_2: 'Unit 4',
    state: 'Western Cape',
    postcode: '8001',
    label: 'fuzz',
    expires_in_seconds: 3600,
    reason: 'documents checked',
    pay_and_clear: false,
    id_issue_expiry_date: '2031-03-01T00:00:00Z',
    name: 'Thandi Nkosi',
    city: 'Durban',
    residency: 'citizen',
    title: 'Ms',
    permit_number: 'NA',
    birth_country: 'ZAF',
    birth_city: 'Durban',
    limit: 5,
    ref: 'deposit 1',
    entity_id: fx.partner.rootEntityId,
  }
}

/** The shared sample with every optional field it can take; personal entities as a second base. */
function basesFor(op: Operation, fx: OperationFixture): Record<string, unknown>[] {
  const samples: Record<string, unknown>[] =
    [validBody(op, fx), ...(op.name === 'entity_create' ? [numberedPersonalEntity()] : [])]
  const extras = optionalSamples(fx)
  return samples.map((sample) => {
    const body: Record<string, unknown> = { ...sample }
    for (const [key, value] of Object.entries(extras)) {
      if (key in body) continue
      const candidate = { ...body, [key]: value }
      if (op.request.safeParse(candidate).success) body[key] = value
    }
    return body
  })
}

const text = new TextDecoder()
function describeRequest(op: Operation, data: Uint8Array): string {
  const shown = JSON.stringify(text.decode(data.slice(0, 400)))
  const subject = subjectFor(op, op.permission === 'operator' ? undefined : f.partner.partnerId)
  return `${subject} ${data.length} bytes ${shown}`
}

/**
 * Sends one request and checks it against the oracle; a failure is recorded with the exact request.
 */
async function check(op: Operation, data: Uint8Array, mutated: string[], context: string,
    failures: string[]): Promise<RawReply | undefined> {
  const expected = expectationFor(op, data, tb.config.requestBytesMax, mutated)
  let reply: RawReply
  try {
    reply = await send(f, op, data, { token: rightfulToken(op, f) })
  } catch (error) {
    failures.push(`${context}: no reply (${(error as Error).message})\n    ` +
      `request: ${describeRequest(op, data)}`)
    return undefined
  }
  try {
    assertReply(reply, expected, context)
  } catch (error) {
    failures.push(
      `${(error as Error).message.split('\n')[0]}\n    request: ${describeRequest(op, data)}`)
  }
  return reply
}

function assertNoFailures(failures: string[], sent: number): void {
  const shown = failures.slice(0, 12).join('\n')
  assert.equal(failures.length, 0,
    `${failures.length} of ${sent} requests were answered wrongly:\n${shown}`)
}

const fuzzed = (): Operation[] => allOperations()

test('transport - fuzz: every operation takes its enriched sample body, so a refusal is the hostile value\'s doing', async () => {
  for (const op of fuzzed()) {
    for (const base of basesFor(op, f)) {
      assert.deepEqual(schemaIssueFields(op, base), [], `${op.name} sample ${JSON.stringify(base)}`)
      assertSuccessReply(await send(f, op, base, { token: rightfulToken(op, f) }),
        `${op.name} sample`)
    }
  }
})

/**
 * A hostile value of many kilobytes that is no string: a huge array, deep nesting, a body
 * over the size limit. Sent to every field, these six took half the CPU time of the test.
 */
const bulky = (raw: string | Uint8Array): boolean => typeof raw === 'string' && raw.length > 10_000
  && (raw[0] === '[' || raw[0] === '{')
const primitiveKinds: ReadonlySet<FieldKind> =
  new Set(['string', 'int', 'number', 'boolean', 'enum', 'literal'])

/**
 * The fields of a request that are sent the bulky values: every field whose schema reads
 * inside arrays or objects (arrays, objects, unions), and one field of each primitive kind.
 * In a field of a primitive kind, a bulky value goes the same way whichever field it is: it
 * is refused by the size limit before the body is parsed, or parsed (the whole body, as for
 * any field) and refused by the type check, which in zod comes before any check of the
 * field's own. So every subject still gets every value, in fewer than half the fields.
 */
function bulkyFields(fields: FieldSpec[]): Set<FieldSpec> {
  const chosen = new Set<FieldSpec>()
  const kinds = new Set<FieldKind>()
  for (const spec of fields) {
    if (!primitiveKinds.has(spec.kind)) chosen.add(spec)
    else if (!kinds.has(spec.kind)) (kinds.add(spec.kind), chosen.add(spec))
  }
  return chosen
}

test('transport - fuzz: every field of every operation set to each hostile value is a 400 naming it or an answer, never a fault', async () => {
  const failures: string[] = []
  let sent = 0
  for (const op of fuzzed()) {
    const fields = fieldsOf(op.request)
    const takesBulky = bulkyFields(fields)
    for (const base of basesFor(op, f)) {
      for (const spec of fields) {
        sent += await fuzzField(op, base, spec, takesBulky.has(spec), failures)
      }
    }
  }
  assertNoFailures(failures, sent)
})

/** Each hostile value in one field of one body; returns how many requests were sent. */
async function fuzzField(op: Operation, base: Record<string, unknown>, spec: FieldSpec,
  takesBulky: boolean, failures: string[]): Promise<number> {
  let sent = 0
  const field = spec.path.join('.')
  for (const hostile of allHostiles) {
    const raw = hostile.raw(getPath(base, spec.path))
    if (bulky(raw) && !takesBulky) continue
    const data = withRawValues(base, [{ path: spec.path, raw }])
    await check(op, data, [field], `${op.name}.${field} = ${hostile.label}`, failures)
    sent++
  }
  return sent
}

test('transport - fuzz: NUL, lone surrogates and control characters in any field are a 400 naming exactly that field', async () => {
  const failures: string[] = []
  let sent = 0
  for (const op of fuzzed()) {
    const base = basesFor(op, f)[0]!
    for (const spec of fieldsOf(op.request).filter((s) => typeof getPath(base, s.path)
        === 'string')) {
      const field = spec.path.join('.')
      for (const hostile of refusedText) {
        const data =
          withRawValues(base, [{ path: spec.path, raw: hostile.raw(getPath(base, spec.path)) }])
        const reply = await check(op, data, [field], `${op.name}.${field} = ${hostile.label}`,
          failures)
        sent++
        const named = (reply?.body?.error?.details ?? []).map((d: { field: string }) => d.field)
        // As every 400 names fields: an index before a further name is written [n].
        const expected = field.replace(/\.(\d+)(?=\.)/g, '[$1]')
        if (reply && JSON.stringify(named) !== JSON.stringify([expected])) {
          failures.push(`${op.name}.${field} = ${hostile.label}: details ` +
            `name ${JSON.stringify(named)}, not just ${expected}`)
        }
      }
    }
  }
  assertNoFailures(failures, sent)
})

test('transport - fuzz: prototype keys and duplicate keys at every level are plain data', async () => {
  const failures: string[] = []
  let sent = 0
  for (const op of fuzzed()) {
    const base = basesFor(op, f)[0]!
    for (const path of objectPathsOf(op.request)) {
      for (const key of prototypeKeys) {
        for (const value of ['{"polluted":true}', '1', 'null']) {
          const field = [...path, key].join('.')
          await check(op, withExtraKey(base, path, key, value), [field],
            `${op.name} extra key ${field} = ${value}`, failures)
          sent++
        }
      }
    }
    // A key written twice: JSON.parse keeps the last, and so must every check after it.
    const json = JSON.stringify(base)
    for (const spec of fieldsOf(op.request).filter((s) => s.path.length === 1)) {
      const key = JSON.stringify(spec.path[0])
      for (const raw of ['"\\u0000"', '1e309']) {
        const first = json === '{}' ? `{${key}:${raw}}` : `{${key}:${raw},${json.slice(1)}`
        const last = json === '{}' ? `{${key}:${raw}}` : `${json.slice(0, -1)},${key}:${raw}}`
        for (const body of [first, last]) {
          await check(op, new TextEncoder().encode(body), [spec.path[0]!],
            `${op.name} duplicate ${key}`, failures)
          sent++
        }
      }
    }
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted')
  assertNoFailures(failures, sent)
})

interface FuzzCase {
  op: Operation
  base: Record<string, unknown>
  values: Array<{ path: string[]; raw: string | Uint8Array }>
}

/**
 * Requests generated from the schemas: an operation, a base body, one to three fields set to
 * generated values.
 */
function fuzzCases(ops: Operation[]): fc.Arbitrary<FuzzCase> {
  const choices = ops.flatMap((op) => {
    const fields = fieldsOf(op.request)
    return fields.length === 0 ? [] : basesFor(op, f).map((base) => ({ op, base, fields }))
  })
  return fc.constantFrom(...choices).chain(({ op, base, fields }) =>
    fc.subarray(fields, { minLength: 1, maxLength: Math.min(3, fields.length) }).chain((chosen) =>
      fc
        .tuple(...chosen.map((spec) => rawValueFor(spec, getPath(base, spec.path))))
        .map((raws) => (
          { op, base, values: chosen.map((spec, i) => ({ path: spec.path, raw: raws[i]! })) })),
    ),
  )
}

test('transport - fuzz: schema-generated requests with hostile values (fast-check, fixed seed) never fault', async () => {
  const failures: string[] = []
  let sent = 0
  await fc.assert(
    fc.asyncProperty(fuzzCases(fuzzed()), async ({ op, base, values }) => {
      const data = withRawValues(base, values)
      const fields = values.map((v) => v.path.join('.'))
      await check(op, data, fields, `${op.name} {${fields.join(', ')}}`, failures)
      sent++
    }),
    { seed: 20_261_123, numRuns: 600, endOnFailure: true },
  )
  assertNoFailures(failures, sent)
})

test('transport - fuzz: a refusal with thousands of issues is still answered, and the service stays up', async () => {
  const failures: string[] = []
  const credentialCreate = allOperations().find((op) => op.name === 'ops_credential_create')!
  const entityCreate = allOperations().find((op) => op.name === 'entity_create')!
  const cases: Array<[Operation, Uint8Array, string]> = [
    // Every item of the array is its own schema issue.
    [credentialCreate, withRawValues(basesFor(credentialCreate, f)[0]!, [{ path: ['permissions'],
      raw: `[${new Array(30_000).fill('0').join(',')}]` }]), 'permissions'],
    // Every unknown key is named; a partner can send as many as fit in a body.
    [entityCreate, withManyKeys(basesFor(entityCreate, f)[0]!, 6_000), 'k0'],
  ]
  for (const [op, data, field] of cases) await check(op, data, [field],
    `${op.name} with thousands of issues`, failures)
  assertNoFailures(failures, cases.length)
  assert.deepEqual(unhandled, [],
    'a request left an unhandled rejection: a production process would have exited')
})

function withManyKeys(base: Record<string, unknown>, n: number): Uint8Array {
  const keys = Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')
  return new TextEncoder().encode(`{${keys},${JSON.stringify(base).slice(1)}`)
}

interface Sent {
  account: string
  partner: 'A' | 'B'
  data: Uint8Array
  expected: Expectation | 'success'
  body?: Record<string, unknown>
}

/**
 * Hostile transfers that change one field of `base`: refused text, text the schema takes, numbers,
 * keys.
 */
function hostileTransfers(base: Record<string, unknown>, reusedKey: string): Array<{
    data: Uint8Array; body?: Record<string, unknown> }> {
  const raw = (path: string, value: string) => (
    { data: withRawValues(base, [{ path: [path], raw: value }]) })
  const json = (changes: Record<string, unknown>) => {
    const body = { ...base, clientTxId: randomUUID(), ...changes }
    return { data: new TextEncoder().encode(JSON.stringify(body)), body }
  }
  return [
    json({ ref: 'inv\u0000oice' }),
    json({ own_ref: 'supplier \ud800 run' }),
    json({ name: 'Bongani\u001b[2J' }),
    json({ name: '\u0000', pay_and_clear: true }),
    json({ own_ref: 'line\nbreak', pay_and_clear: true }),
    // Text the schema takes and the database must store and hash as sent.
    json({ name: '😀'.repeat(50) }),
    json({ ref: 'e\u0301'.repeat(10), own_ref: 'ref \u2028 \u202e \ufeff' }),
    json({ name: "'; drop table transactions; --", pay_and_clear: true }),
    json({ name: '\uffff\ufffe' }),
    // Amounts: over the limit, over the balance, not integers.
    json({ amount: Number.MAX_SAFE_INTEGER }),
    json({ amount: Number.MAX_SAFE_INTEGER, pay_and_clear: true }),
    json({ amount: 400_000_000 }),
    raw('amount', '1e309'),
    raw('amount', '-0'),
    raw('amount', '9223372036854775808'),
    // Idempotency keys: another partner's, in upper case, and one key sent twice at once.
    json({ clientTxId: reusedKey }),
    json({ clientTxId: reusedKey.toUpperCase() }),
    ...[0, 1].map(() => json({ clientTxId: base.clientTxId })),
    // Accounts: one of another partner, one that does not exist.
    json({ account_id: randomUUID() }),
  ]
}

function transferBody(account: string, amount: number, payAndClear: boolean,
    n: number): Record<string, unknown> {
  return {
    account_id: account,
    clientTxId: randomUUID(),
    amount,
    ref: `valid ${n}`,
    own_ref: 'fuzz batch',
    account_number: '62000000001',
    branch_code: '250655',
    name: 'Bongani Supplies',
    ...(payAndClear ? { pay_and_clear: true } : {}),
  }
}

/** What is wrong with a reply to a valid or a hostile transfer: the first line, else none. */
function replyFailure(s: Sent, reply: RawReply, context: string): string | undefined {
  try {
    if (s.expected === 'success') {
      assertSuccessReply(reply, context)
      assert.equal(reply.headers['Bank-Tx-Status'], s.body!.pay_and_clear ? 'Successful'
        : 'Pending', context)
    } else assertReply(reply, s.expected, context)
  } catch (error) {
    return (error as Error).message.split('\n')[0]!
  }
  return undefined
}

/** Partners A (two funded accounts) and B (one, holding little), and what each was given. */
async function fundedPartners() {
  const a = await onboardPartner(tb, { approve: true })
  const b = await onboardPartner(tb, { approve: true })
  const poolOf = async (p: typeof a) => (await p.client.accounts.getByEntity(
    { entity_id: p.rootEntityId })).accounts[0]!.account_id
  const aPool = await poolOf(a)
  const aSecond = (await a.client.accounts.create({ entity_id: a.rootEntityId })).account_id
  const bPool = await poolOf(b)
  const funded = new Map([[aPool, 10_000_000], [aSecond, 10_000_000], [bPool, 100_000]])
  for (const [account, amount] of funded) await tb.operator.accounts.deposit(
    { account_id: account, amount })
  return { a, b, aPool, aSecond, bPool, funded }
}

test('transport - fuzz: one hostile transfer never fails a valid one grouped with it', async () => {
  const transfer = allOperations().find((op) => op.name === 'account_transfer_eft_rtc')!
  const { a, b, aPool, aSecond, bPool, funded } = await fundedPartners()
  const fee = (body: Record<string, unknown>) => Number(body.pay_and_clear ? tb.config.fees.RTC
    : tb.config.fees.EFT)

  const failures: string[] = []
  const spent = new Map<string, number>()
  let sent = 0
  for (let round = 0; round < 3; round++) {
    const valid: Sent[] = Array.from({ length: 24 }, (_, i) => {
      const account = i % 3 === 0 ? aSecond : aPool
      const body = transferBody(account, 100 + i, i % 6 === 0, i)
      return { account, partner: 'A', data: new TextEncoder().encode(JSON.stringify(body)),
        expected: 'success', body }
    })
    const reusedKey = String(valid[0]!.body!.clientTxId)
    const hostile: Sent[] = [
      ...hostileTransfers(transferBody(bPool, 150, false, 0), reusedKey).map(
        (h) => ({ ...h, account: bPool, partner: 'B' as const })),
      ...hostileTransfers(transferBody(aPool, 150, false, 0), reusedKey).map(
        (h) => ({ ...h, account: aPool, partner: 'B' as const })),
      ...hostileTransfers(transferBody(aPool, 160, false, 0), randomUUID()).map(
        (h) => ({ ...h, account: aPool, partner: 'A' as const })),
    ].map(
      (h) => ({ ...h, expected: expectationFor(transfer, h.data, tb.config.requestBytesMax, []) }))
    // Interleaved, all in flight at once, so that valid and hostile requests share batches.
    const all = valid.flatMap((v, i) => [v, ...hostile.slice(i * 3, i * 3 + 3)]).concat(
      hostile.slice(valid.length * 3))
    const replies = await Promise.all(
      all.map((s) => rawRequest(tb, subjectFor(transfer, (s.partner === 'A' ? a : b).partnerId),
        s.data, { token: (s.partner === 'A' ? a : b).token })),
    )
    all.forEach((s, i) => {
      const reply = replies[i]!
      sent++
      const failure = replyFailure(s, reply, `round ${round} ${s.partner} ` +
        text.decode(s.data).slice(0, 300))
      if (failure) failures.push(failure)
      // Every accepted transfer holds or spends its amount and fee, and nothing else does.
      if (reply.code === 200 && s.body) spent.set(s.account, (spent.get(s.account) ?? 0) + Number(
        s.body.amount) + fee(s.body))
    })
  }
  assertNoFailures(failures, sent)
  for (const [account, deposit] of funded) {
    const partner = account === bPool ? b : a
    const details = await partner.client.accounts.getDetails({ account_id: account })
    assert.equal(details.available_balance, String(deposit - (spent.get(account) ?? 0)),
      `available balance of ${account}`)
  }
})

test('transport - fuzz: afterwards the service answers $SRV.PING, serves every operation, its ledger verifies and nothing was left unhandled', async () => {
  const ping = await tb.nc.request(`$SRV.PING.${tb.config.serviceName}`, '', { timeout: 10_000 })
  assert.equal(ping.json<{ type: string }>().type, 'io.nats.micro.v1.ping_response')
  const fresh = await prepareFixture(tb)
  for (const op of allOperations()) {
    assertSuccessReply(await send(fresh, op, validBody(op, fresh),
      { token: rightfulToken(op, fresh) }), `${op.name} afterwards`)
  }
  const verify = await rawRequest(tb, 'ops.ledger.verify', '{}', { token: tb.operatorToken })
  assertSuccessReply(verify, 'ledger verify')
  assert.deepEqual(verify.body.problems, [], 'the ledger verifies after the fuzzing')
  assert.equal(verify.body.ok, true)
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted')
  assert.deepEqual(unhandled, [],
    'a request left an unhandled rejection: a production process would have exited')
})
