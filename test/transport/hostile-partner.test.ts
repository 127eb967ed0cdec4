import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { encodeAccount, encodeUser, fmtCreds } from '@nats-io/jwt'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { createAccount, createUser, fromSeed } from '@nats-io/nkeys'
import { Objm } from '@nats-io/obj'
import { connect, credsAuthenticator, headers as natsHeaders, type NatsConnection, type SubscriptionOptions } from '@nats-io/transport-node'
import { epochSecond, issueUser, partner_user_permissions } from '../../src/nats-identity/nats-claims.ts'
import { sealContext } from '../../src/nats-identity/nats-identity.ts'
import { accountOf } from '../../src/nats-identity/nats-identity-store.ts'
import { natsConnectOptions } from '../../src/nats/nats-connect.ts'
import { SecretBox } from '../../src/secrets/secret-box.ts'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { expectRefusal } from '../support/assertions.ts'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, twoPartners, useTestBank, type TestPartner } from '../support/harness.ts'
import { kycNames, pdf, jpeg, publishMeta, putObjects } from '../kyc/helpers.ts'

// A hostile partner on NATS set up as production runs it (the bank the NATS authority,
// `bank nats init`'s configuration, TLS): partner A holds its own valid creds file and
// token — and B's token, as if stolen — and tries every way to see, capture, answer or
// change what belongs to partner B, the bank or its operators. Each attempt is refused
// (by the server: a permissions violation, no responders, an authorization violation; or
// by the bank: 401/403) and B's traffic goes on untouched.

const tb = useTestBank({ natsAuthority: true, env: { BANK_SANDBOX: 'false' } })
let a: TestPartner
let b: TestPartner
let bEntity: string

before(async () => ({ a, b, bEntity } = await twoPartners(tb)))

const name = (behaviour: string) => `nats isolation - ${behaviour}`

/** Subscribes as asked and resolves with the error the server closed the subscription with. */
async function refusedSubscription(nc: NatsConnection, subject: string,
    options: SubscriptionOptions = {}): Promise<Error> {
  const sub = nc.subscribe(subject, options)
  const closed = sub.closed
  await nc.flush()
  const outcome = await closed
  assert.ok(outcome instanceof Error,
    `subscribing to ${subject} should be refused; the subscription stayed open`)
  assert.match(outcome.message, /permissions violation/i)
  return outcome
}

/** B's traffic is answered by the bank: its own entities, from the bank's reply. */
async function bStillServed(): Promise<void> {
  const { entities } = await b.client.entities.list({})
  assert.ok(entities.some((e) => e.id === bEntity))
}

let applicants = 0
async function applicant(owner: TestPartner): Promise<string> {
  const entityId = (await owner.client.entities.create(businessEntity())).id
  const body = `850630${String(++applicants).padStart(4, '0')}08`
  return (await owner.client.users.create(
    userRequest(entityId, { id_number: body + luhnCheckDigit(body) }))).userId
}

async function expectNoResponders(call: Promise<unknown>): Promise<void> {
  await assert.rejects(call, (error: Error) => /no responders/i.test(error.message) || (error as { code?: number }).code === 503)
}

test(name('A cannot subscribe to svc.>, ops.>, $SRV.>, $SYS.>, $JS.API.> or join the bank\'s queue group; B is still answered by the bank'), async () => {
  for (const subject of ['svc.>', `svc.entity.${b.partnerId}.list-entities`,
      `svc.entity.${a.partnerId}.list-entities`, 'ops.>', '$SRV.>', '$SYS.>', '$JS.API.>', '>']) {
    await refusedSubscription(a.nc, subject)
  }
  await refusedSubscription(a.nc, `svc.entity.${a.partnerId}.list-entities`,
    { queue: 'partner-bank' })
  await refusedSubscription(a.nc, `svc.entity.${b.partnerId}.list-entities`,
    { queue: 'partner-bank' })
  // No request of B's was taken, answered or lost: twenty in a row are the bank's.
  for (let i = 0; i < 20; i++) await bStillServed()
})

test(name("A's inbox wildcard sees A's replies only: none of B's, the operators' or the bank's"), async () => {
  const seen: string[] = []
  const sub =
    a.nc.subscribe('_INBOX.>', { callback: (_error, msg) => void seen.push(msg.string()) })
  await a.nc.flush()
  await bStillServed()
  await tb.operator.partners.list({})
  await b.client.accounts.getByEntity({ entity_id: b.rootEntityId })
  // A's own request: its reply reaches the wildcard too, so the subscription is live.
  await a.client.entities.list({})
  await a.nc.flush()
  sub.unsubscribe()
  assert.ok(seen.length >= 1, "A's own reply reached its wildcard subscription")
  for (const text of seen) {
    assert.ok(!text.includes(b.partnerId) && !text.includes(b.rootEntityId)
      && !text.includes(bEntity), `A saw B's data: ${text.slice(0, 200)}`)
  }
})

test(name("A cannot reach B's subjects, the operators' or the bank's discovery at the NATS level"), async () => {
  const h = natsHeaders()
  h.set('token', a.token)
  for (const subject of [`svc.entity.${b.partnerId}.list-entities`,
      `svc.account.${b.partnerId}.get_details`, 'ops.partner.list', '$SRV.PING',
      '$SRV.INFO.partner-bank', '$SYS.REQ.CLAIMS.UPDATE', '$SYS.REQ.SERVER.PING']) {
    await expectNoResponders(a.nc.request(subject, '{}', { headers: h, timeout: 10_000 }))
  }
  // With B's own (stolen) token too: the subject is not there for A.
  h.set('token', b.token)
  await expectNoResponders(a.nc.request(`svc.entity.${b.partnerId}.list-entities`, '{}',
    { headers: h, timeout: 10_000 }))
})

test(name("B's token arriving through A's account is refused 401, on A's subjects and on B's entity's"), async () => {
  const reply = await rawRequest(tb, `svc.entity.${a.partnerId}.list-entities`, '{}',
    { token: b.token }, a.nc)
  assert.equal(reply.code, 401)
  // An entity-scoped subject reaches the bank from any partner's account; the token must still be
  // the account's.
  const bulk = await rawRequest(tb, `svc.account.${bEntity}.bulk_payment.status`,
    JSON.stringify({ bulk_payment_id: randomUUID() }), { token: b.token }, a.nc)
  assert.equal(bulk.code, 401)
  // And A's own token on B's entity is the bank's tenancy refusal.
  const own = await rawRequest(tb, `svc.account.${bEntity}.bulk_payment.status`,
    JSON.stringify({ bulk_payment_id: randomUUID() }), { token: a.token }, a.nc)
  assert.equal(own.code, 403)
  // An operator's token through a partner's account is refused as well.
  const operator = await rawRequest(tb, `svc.entity.${a.partnerId}.list-entities`, '{}',
    { token: tb.operatorToken }, a.nc)
  assert.equal(operator.code, 401)
  await bStillServed()
})

test(name("a stream or consumer of A's captures only A's own account: none of B's requests, tokens or the operators'"), async () => {
  const jsm = await jetstreamManager(a.nc)
  const stream = `CAPTURE_${randomUUID().slice(0, 8)}`
  await jsm.streams.add({ name: stream, subjects: ['svc.>', 'ops.>', '_INBOX.>', '$SYS.>',
    'hostile.>'] })
  await bStillServed()
  await tb.operator.partners.list({})
  // A control message of A's own, stored once acknowledged, proves the stream records.
  const js = jetstream(a.nc)
  await js.publish('hostile.control', 'control')
  const consumer = await jsm.consumers.add(stream, { durable_name: 'capture' })
  assert.ok(consumer.num_pending >= 1, "A's stream recorded A's own message")
  const messages = await (await js.consumers.get(stream, 'capture')).fetch(
    { max_messages: consumer.num_pending })
  let read = 0
  for await (const msg of messages) {
    const text = `${msg.subject} ${msg.headers?.toString() ?? ''} ${msg.string()}`
    assert.ok(!text.includes(b.token) && !text.includes(b.partnerId)
      && !text.includes(tb.operatorToken), `A's stream captured: ${text.slice(0, 200)}`)
    if (++read === consumer.num_pending) break
  }
  assert.equal(read, consumer.num_pending)
  await jsm.streams.delete(stream)
})

test(name("A cannot read, list, overwrite, delete, source or mirror B's dropbox"), async () => {
  const bUser = await applicant(b)
  const bBucket = `kyc_dropbox_${bUser}`
  const names = kycNames(bUser)
  const front = jpeg()
  await putObjects(b.nc, bBucket, { [names.front]: front, [names.proof]: pdf('B proof') })
  const aObjm = new Objm(a.nc)
  await assert.rejects(aObjm.open(bBucket), /not found/i)
  const listed: string[] = []
  for await (const info of (await jetstreamManager(a.nc)).streams.list()) listed.push(
    info.config.name)
  assert.ok(!listed.includes(`OBJ_${bBucket}`), "A's stream list does not show B's bucket")
  // A makes a bucket of the same name in its own account, writes and deletes there: B's stays as it
  // was.
  const aStore = await aObjm.create(bBucket)
  await aStore.putBlob({ name: names.front }, pdf('swapped by A'))
  await aStore.delete(names.proof)
  await aObjm.open(bBucket).then((s) => s.destroy())
  const bStore = await new Objm(b.nc).open(bBucket)
  assert.deepEqual(Buffer.from((await bStore.getBlob(names.front))!), Buffer.from(front))
  assert.ok(await bStore.info(names.proof))
  // Sourcing and mirroring name streams of A's own account only: B's is not there. A stream
  // of A's own, sourced and mirrored beside it, is the control that sourcing works.
  const jsm = await jetstreamManager(a.nc)
  const tag = randomUUID().slice(0, 8)
  await jsm.streams.add({ name: `CONTROL_${tag}`, subjects: [`control.${tag}`] })
  await jetstream(a.nc).publish(`control.${tag}`, 'control')
  const sourced = `SOURCED_${tag}`
  await jsm.streams.add(
    { name: sourced, sources: [{ name: `OBJ_${bBucket}` }, { name: `CONTROL_${tag}` }] })
  const mirror = `MIRROR_${tag}`
  await jsm.streams.add({ name: mirror, mirror: { name: `OBJ_${bBucket}` } }).catch(() => undefined)
  const ownMirror = `OWNMIRROR_${tag}`
  await jsm.streams.add({ name: ownMirror, mirror: { name: `CONTROL_${tag}` } })
  // Until the control has arrived in both (bounded by the test's own timeout).
  while ((await jsm.streams.info(sourced)).state.messages < 1
      || (await jsm.streams.info(ownMirror)).state.messages < 1) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  assert.equal((await jsm.streams.info(sourced)).state.messages, 1,
    "only A's own stream was sourced")
  const mirrored = await jsm.streams.info(mirror).catch(() => undefined)
  assert.equal(mirrored?.state.messages ?? 0, 0, "B's bucket is not mirrored")
  for (const s of [sourced, mirror, ownMirror, `CONTROL_${tag}`]) await jsm.streams.delete(s).catch(
    () => undefined)
})

test(name("a link in A's dropbox to B's object is refused 400 naming it, and nothing is stored"), async () => {
  const bUser = await applicant(b)
  const bNames = kycNames(bUser)
  await putObjects(b.nc, `kyc_dropbox_${bUser}`,
    { [bNames.front]: jpeg(), [bNames.proof]: pdf('B proof') })
  const aUser = await applicant(a)
  const aBucket = `kyc_dropbox_${aUser}`
  const names = kycNames(aUser)
  await putObjects(a.nc, aBucket, { [names.proof]: pdf('A proof') })
  // The link object as ObjectStore.link writes it, pointing into B's bucket.
  await publishMeta(a.nc, aBucket, {
    name: names.front, bucket: aBucket, nuid: '', size: 0, chunks: 0, digest: '',
      mtime: new Date().toISOString(), deleted: false,
    options: { link: { bucket: `kyc_dropbox_${bUser}`, name: bNames.front } },
  })
  const error = await expectRefusal(a.client.users.uploadKycDocuments({ user_id: aUser,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'id_document')
  assert.match(error.message, new RegExp(names.front))
  assert.equal((await a.client.users.get({ user_id: aUser })).user.kyc_status, 'not_started')
  assert.equal((await tb.operator.kyc.show({ user_id: aUser })).submission, null)
})

test(name('a revoked creds file is disconnected within seconds and refused after; an expired one, a self-made one and none at all are refused'), async () => {
  const issued = await tb.operator.partners.natsCreds(
    { partner_id: a.partnerId, label: 'to revoke' })
  const nc = await tb.partnerConnection(issued.creds)
  await a.client.entities.list({})
  const statuses = (async () => {
    for await (const status of nc.status()) if (status.type === 'error'
      || status.type === 'disconnect') return status.type
    return 'closed'
  })()
  const revoked = await tb.operator.partners.natsRevoke(
    { partner_id: a.partnerId, user_id: issued.id })
  assert.ok(revoked.revoked_at)
  await statuses
  await assert.rejects(connectWith(issued.creds), /authorization violation/i)
  // A's onboarding creds still work.
  await a.client.entities.list({})

  // Expired: a user of A's account whose JWT expired a minute ago.
  const db = tb.bank.database.db
  const row = await accountOf(db, a.partnerId)
  assert.ok(row)
  const box = new SecretBox({ key: tb.config.secretsKey, dataDir: tb.config.dataDir })
  const accountKey =
    fromSeed(new TextEncoder().encode(box.open(row.seed_sealed, sealContext(row.public_key))))
  const expired = await issueUser(accountKey, 'expired', partner_user_permissions,
    epochSecond(new Date()) - 60)
  await assert.rejects(connectWith(expired.creds), /authorization violation/i)

  // Self-made: an account and user A signed itself, not the bank's operator.
  const ownAccount = createAccount()
  await encodeAccount('self-made', ownAccount, {})
  const user = createUser()
  const selfMade =
    new TextDecoder().decode(fmtCreds(await encodeUser('self-made', user, ownAccount, {}), user))
  await assert.rejects(connectWith(selfMade), /authorization violation/i)

  // None.
  await assert.rejects(connect({ servers: tb.natsUrl, reconnect: false, ...natsConnectOptions({ tls: { caFile: tb.authority!.caFile } }) }), /authorization violation/i)
})

test(name('suspending a partner cuts its NATS users and tokens off at once; letting it back restores them'), async () => {
  const c = await onboardPartner(tb, { approve: true })
  await c.client.entities.list({})
  const cut = (async () => {
    for await (const status of c.nc.status()) if (status.type === 'error'
      || status.type === 'disconnect') return status.type
    return 'closed'
  })()
  const suspended = await tb.operator.partners.suspend({ partner_id: c.partnerId })
  assert.equal(suspended.suspended, true)
  await cut
  assert.ok(c.natsCreds)
  await assert.rejects(connectWith(c.natsCreds), /authorization violation/i)
  await expectRefusal(tb.operator.partners.natsCreds({ partner_id: c.partnerId }), 409)
  await bStillServed()
  await tb.operator.partners.unsuspend({ partner_id: c.partnerId })
  const back = await connectWith(c.natsCreds)
  const reply = await rawRequest(tb, `svc.entity.${c.partnerId}.list-entities`, '{}',
    { token: c.token }, back)
  assert.equal(reply.code, 200)
  await back.close()
})

async function connectWith(creds: string): Promise<NatsConnection> {
  return connect({
    servers: tb.natsUrl,
    reconnect: false,
    ...natsConnectOptions({ tls: { caFile: tb.authority!.caFile } }),
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
  })
}

test(name("the NATS operations answer another partner's user, or a partner that does not exist, as missing: nothing is revoked or issued"), async () => {
  const bUser = await tb.operator.partners.natsCreds({ partner_id: b.partnerId, label: 'B kept' })
  // B's user named under A's partner id: 404, and B's user still connects.
  await expectRefusal(tb.operator.partners.natsRevoke(
    { partner_id: a.partnerId, user_id: bUser.id }), 404)
  const stillB = await connectWith(bUser.creds)
  await stillB.close()
  assert.equal((await tb.operator.partners.natsUsers({ partner_id: b.partnerId })).users.find(
    (u) => u.id === bUser.id)?.revoked_at, null)
  const nobody = randomUUID()
  await expectRefusal(tb.operator.partners.natsCreds({ partner_id: nobody }), 404)
  await expectRefusal(tb.operator.partners.natsUsers({ partner_id: nobody }), 404)
  await expectRefusal(tb.operator.partners.natsRevoke({ partner_id: nobody, user_id: bUser.id }),
    404)
  await expectRefusal(tb.operator.partners.suspend({ partner_id: nobody }), 404)
  // A partner's token on the operators' subjects: from its own account they are not there
  // (no responders, above); from the operators' account the token is not that account's: 401.
  const asPartner = await rawRequest(tb, 'ops.partner.nats_creds',
    JSON.stringify({ partner_id: a.partnerId }), { token: a.token })
  assert.equal(asPartner.code, 401)
  assert.equal((await tb.operator.partners.natsUsers({ partner_id: a.partnerId })).users.filter(
    (u) => u.label === '').length, 0, 'nothing issued')
})
