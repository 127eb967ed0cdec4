import assert from 'node:assert/strict'
import fs from 'node:fs'
import { before, test } from 'node:test'
import { decode } from '@nats-io/jwt'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect, credsAuthenticator, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { statusCommand } from '../../src/cli/status.ts'
import { quota_metadata } from '../../src/nats-identity/jetstream-quota.ts'
import { partner_nats_limits_default, partnerAccountLimits } from '../../src/nats-identity/nats-claims.ts'
import { accountOf, setNatsLimits } from '../../src/nats-identity/nats-identity-store.ts'
import { natsConnectOptions } from '../../src/nats/nats-connect.ts'
import { expectRefusal } from '../support/assertions.ts'
import { announceMessage } from '../support/nats-raw.ts'
import { onboardPartner, rawRequest, twoPartners, useTestBank, type TestPartner } from '../support/harness.ts'

// A partner flooding NATS, on the production set-up (the bank the NATS authority, `bank
// nats init`'s configuration, TLS, issued creds): partner A sends oversized payloads, opens
// connections and subscriptions past its account's limits and fills its JetStream, while
// partner B keeps making requests. The server refuses each flood at A's limit, and every
// request of B's is answered. (How long B waits meanwhile is measured by bench/flood.ts, not
// asserted here.)

const tb = useTestBank({ natsAuthority: true, env: { BANK_SANDBOX: 'false' } })
let a: TestPartner
let b: TestPartner
let bEntity: string

before(async () => ({ a, b, bEntity } = await twoPartners(tb)))

const name = (behaviour: string) => `nats limits - ${behaviour}`

/**
 * Runs `flood` while B makes request after request (at least three), each of which must be
 * answered by the bank; resolves with the flood's outcome.
 */
async function whileBRequests<T>(flood: () => Promise<T>): Promise<T> {
  let done = false
  let answered = 0
  const steady = (async () => {
    while (!done || answered < 3) {
      const { entities } = await b.client.entities.list({})
      assert.ok(entities.some((e) => e.id === bEntity), "B's reply holds B's entity")
      answered++
    }
  })()
  try {
    return await flood()
  } finally {
    done = true
    await steady
  }
}

/** A new connection of A's, with its own issued creds. */
async function connectA(): Promise<NatsConnection> {
  return connect({
    servers: tb.natsUrl,
    reconnect: false,
    ...natsConnectOptions({ tls: { caFile: tb.authority!.caFile } }),
    authenticator: credsAuthenticator(new TextEncoder().encode(a.natsCreds!)),
  })
}

/** A's account claims, as last signed and pushed. */
async function accountLimitsOf(partnerId: string): Promise<Record<string, unknown>> {
  const row = await accountOf(tb.bank.database.db, partnerId)
  assert.ok(row)
  return decode<{ limits: Record<string, unknown> }>(row.jwt).nats.limits ?? {}
}

/** As A, below any client library: what the server answers a message of `size` bytes. */
async function rawPublish(subject: string, size: number): Promise<string> {
  const login = { port: tb.authority!.server.port, caFile: tb.authority!.caFile,
    creds: a.natsCreds! }
  const { advertised, answer } = await announceMessage(login, subject, size)
  // The server may tell the logged-in client its account's limits in a new INFO.
  for (const info of advertised) assert.equal(info.max_payload, partner_nats_limits_default.payload)
  return answer
}

/** The first error the server sends the connection (or what it closed with). */
function firstError(nc: NatsConnection): Promise<Error> {
  return new Promise((resolve) => {
    void nc.closed().then((error) => error && resolve(error))
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'error') resolve(status.error)
      }
    })()
  })
}

test(name("every partner's account carries the bank's limits; ops.partner.limits shows them"), async () => {
  const signed = await accountLimitsOf(a.partnerId)
  const imports = Number(signed.imports)
  for (const [key, value] of Object.entries(partnerAccountLimits(partner_nats_limits_default,
      imports))) assert.equal(signed[key], value, `limits.${key}`)
  assert.equal(signed.conn, 64)
  assert.equal(signed.payload, 802_816)
  assert.equal(signed.leaf, 0)
  const shown = await tb.operator.partners.limits({ partner_id: a.partnerId })
  assert.deepEqual(shown.nats, { ...partner_nats_limits_default, own: [], enforced: true })
})

test(name('payload flood: over 784 KiB the server closes the connection; a request at the limit reaches the bank; B is answered throughout'), async () => {
  const h = natsHeaders()
  h.set('token', a.token)
  const subject = `svc.entity.${a.partnerId}.list-entities`
  // The server advertises A's limit to its connections (our client refuses to send more); a
  // hostile client ignores it: the server itself refuses such a message, on reading its size.
  await whileBRequests(async () => {
    for (let i = 0; i < 10; i++) {
      assert.match(await rawPublish(subject, 900_000), /-ERR 'Maximum Payload Violation'/)
    }
  })
  // The largest legitimate request (a bulk payment's 768 KiB) passes the server: the bank
  // answers it (here refused by the bank, as this operation takes 64 KiB).
  const reply = await rawRequest(tb, subject, new Uint8Array(786_432).fill(0x20),
    { token: a.token }, a.nc)
  assert.equal(reply.code, 400)
  assert.equal(reply.body.error.type, 'payload_too_large')
})

test(name('connection flood: past its limit the server refuses A\'s connections; B is answered throughout'), async () => {
  const set = await tb.operator.partners.limits({ partner_id: a.partnerId, connections: 6 })
  assert.equal(set.nats.connections, 6)
  assert.deepEqual(set.nats.own, ['connections'])
  assert.equal((await accountLimitsOf(a.partnerId)).conn, 6, 'signed and pushed')
  const open: NatsConnection[] = []
  try {
    const refused = await whileBRequests(async () => {
      for (let i = 0; i < 20; i++) {
        try {
          open.push(await connectA())
        } catch (error) {
          return error as Error
        }
      }
      return undefined
    })
    assert.ok(refused, 'a connection past the limit is refused')
    assert.match(refused.message, /maximum account active connections/i)
    assert.ok(open.length < 6, `${open.length} connections of A's beside its first`)
  } finally {
    await Promise.all(open.map((nc) => nc.close()))
  }
})

test(name('subscription flood: past its limit the server refuses the subscription; B is answered throughout'), async () => {
  await tb.operator.partners.limits({ partner_id: a.partnerId, subscriptions: 50 })
  const nc = await connectA()
  try {
    const error = await whileBRequests(async () => {
      const refused = firstError(nc)
      for (let i = 0; i < 80; i++) nc.subscribe(`_INBOX.flood.${i}`)
      await nc.flush().catch(() => {})
      return refused
    })
    assert.match(error.message, /maximum subscriptions exceeded/i)
  } finally {
    await nc.close()
  }
})

test(name('JetStream fill: past its disk, memory, streams and consumers the server refuses A; B is answered throughout'), async () => {
  const set = await tb.operator.partners.limits({ partner_id: a.partnerId,
    jetstream_disk: 1024 ** 2, jetstream_memory: 64 * 1024, jetstream_streams: 3,
    jetstream_consumers: 2 })
  assert.deepEqual([...set.nats.own].sort(), ['connections', 'jetstream_consumers',
    'jetstream_disk', 'jetstream_memory', 'jetstream_streams', 'subscriptions'])
  const jsm = await jetstreamManager(a.nc)
  const js = jetstream(a.nc)
  const chunk = new Uint8Array(64 * 1024)
  await whileBRequests(async () => {
    await jsm.streams.add({ name: 'FILL', subjects: ['fill.>'] })
    await assert.rejects(async () => {
      for (let i = 0; i < 40; i++) await js.publish('fill.disk', chunk)
    }, /resource|insufficient|exceeded/i, 'the disk quota refuses more')
    await jsm.streams.add({ name: 'MEM', subjects: ['mem.>'], storage: 'memory' as never })
    await assert.rejects(async () => {
      for (let i = 0; i < 40; i++) await js.publish('mem.fill', chunk.subarray(0, 8 * 1024))
    }, /resource|insufficient|exceeded/i, 'the memory quota refuses more')
    await jsm.streams.add({ name: 'THIRD', subjects: ['third.>'] })
    await assert.rejects(jsm.streams.add({ name: 'FOURTH', subjects: ['fourth.>'] }),
      /maximum number of streams/i)
    for (const durable of ['one', 'two']) await jsm.consumers.add('FILL',
      { durable_name: durable, ack_policy: 'explicit' as never })
    await assert.rejects(jsm.consumers.add('FILL', { durable_name: 'three',
      ack_policy: 'explicit' as never }), /maximum consumers/i)
  })
  for (const stream of ['FILL', 'MEM', 'THIRD']) await jsm.streams.delete(stream)
})

test(name('limits are refused out of range or beside reset; reset returns the account to the defaults'), async () => {
  const limits = tb.operator.partners.limits
  for (const [field, value] of [['connections', 0], ['subscriptions', 1_000_001],
      ['payload', 1023], ['payload', 1024 ** 2 + 1], ['jetstream_disk', 0],
      ['jetstream_memory', -1], ['jetstream_streams', 1.5], ['jetstream_consumers', 0]] as const) {
    const error = await expectRefusal(limits({ partner_id: a.partnerId, [field]: value }), 400)
    assert.deepEqual(error.details?.map((d) => (d as { field: string }).field), [field])
  }
  await expectRefusal(limits({ partner_id: a.partnerId, connections: 5, reset: true }), 400)
  const reset = await limits({ partner_id: a.partnerId, reset: true })
  assert.deepEqual(reset.nats, { ...partner_nats_limits_default, own: [], enforced: true })
  const signed = await accountLimitsOf(a.partnerId)
  assert.equal(signed.conn, partner_nats_limits_default.connections)
  assert.equal(signed.disk_storage, partner_nats_limits_default.jetstream_disk)
  // B's account never changed.
  assert.equal((await accountLimitsOf(b.partnerId)).conn, partner_nats_limits_default.connections)
  await b.client.entities.list({})
})

/** A server's JetStream storage as `bank nats init` wrote it into the configuration. */
function configured(setting: 'max_file_store' | 'max_memory_store'): number {
  const text = fs.readFileSync(tb.authority!.configFile, 'utf8')
  return Number(new RegExp(`${setting}: (\\d+)`).exec(text)?.[1])
}

test(name('a JetStream quota the servers cannot hold beside the other partners\' is refused and changes nothing; so is a partner that would not fit'), async () => {
  const limits = tb.operator.partners.limits
  const disk = configured('max_file_store')
  const signedBefore = await accountLimitsOf(a.partnerId)
  for (const [field, value] of [['jetstream_disk', disk],
      ['jetstream_memory', configured('max_memory_store')]] as const) {
    const error = await expectRefusal(limits({ partner_id: a.partnerId, [field]: value }), 409)
    assert.equal(error.type, 'conflict')
    assert.match(error.message, new RegExp(`JetStream ${field.slice(10)} quotas would add up to`))
    assert.equal((error.details?.[0] as { field: string }).field, field)
  }
  const after = await limits({ partner_id: a.partnerId })
  assert.ok(!after.nats.own.includes('jetstream_disk') && !after.nats.own.includes(
    'jetstream_memory'), 'nothing was stored')
  assert.deepEqual(await accountLimitsOf(a.partnerId), signedBefore, 'nor signed')

  // A takes all but half a default quota of what the others leave: a new partner cannot fit.
  const others = await tb.bank.services.natsLimits.partnersJetStreamDisk()
    - partner_nats_limits_default.jetstream_disk
  await limits({ partner_id: a.partnerId,
    jetstream_disk: disk - others - partner_nats_limits_default.jetstream_disk / 2 })
  const partners = async () => (await tb.bank.database.db.selectFrom('partners')
    .select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n
  const count = await partners()
  const refused = await expectRefusal(onboardPartner(tb), 409)
  assert.match(refused.message, /JetStream disk quotas would add up to/)
  assert.equal(await partners(), count, 'the partner was not onboarded')

  // Once A's quota is lowered, the partner is onboarded, and its account has its JetStream.
  await limits({ partner_id: a.partnerId, reset: true })
  const c = await onboardPartner(tb)
  const info = await (await jetstreamManager(c.nc)).getAccountInfo()
  assert.equal(info.limits.max_storage, partner_nats_limits_default.jetstream_disk)
  assert.equal(info.limits.max_memory, partner_nats_limits_default.jetstream_memory)
})

test(name("bank status warns when the partners' JetStream disk quotas add up to more than a server's max_file_store"), async () => {
  const disk = configured('max_file_store')
  const env = { NATS_URL: tb.natsUrl, NATS_CREDS: tb.authority!.operatorCredsFile,
    NATS_TLS_CA: tb.authority!.caFile, BANK_SERVICE_NAME: tb.config.serviceName }
  const status = async () => statusCommand.run({ positionals: [], flags: {} }, env)
  const natsLimits = tb.bank.services.natsLimits
  for (const partner of [a, b]) await tb.operator.partners.limits({ partner_id: partner.partnerId,
    jetstream_disk: 1024 ** 2 })
  const metadata = tb.bank.micro.info().metadata
  assert.equal(Number(metadata[quota_metadata.server]), disk, 'as bank nats init wrote it')
  assert.equal(Number(metadata[quota_metadata.partners]),
    await natsLimits.partnersJetStreamDisk())
  const fits = await status()
  assert.deepEqual(fits.warnings, [])
  assert.deepEqual((fits.result as { warnings: string[] }).warnings, [])

  // The bank refuses such quotas now; a store can still hold them from before (partners
  // onboarded before \`bank nats init\`, servers made smaller since).
  await setNatsLimits(tb.bank.database.db, a.partnerId, { jetstream_disk: disk }, new Date())
  await natsLimits.onChanged?.()
  const over = await status()
  assert.equal(over.warnings?.length, 1)
  assert.match(over.warnings![0]!, /JetStream disk quotas add up to .*, more than the .* \(max_file_store\)/)
  assert.deepEqual((over.result as { warnings: string[] }).warnings, over.warnings)
  for (const partner of [a, b]) await tb.operator.partners.limits({ partner_id: partner.partnerId,
    reset: true })
})
