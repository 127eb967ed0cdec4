import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { businessEntity, registrationNumber, userRequest } from '../support/fixtures.ts'
import { clientFor, onboardPartner, useTestBank } from '../support/harness.ts'
import { expectRefusal, iso } from '../support/assertions.ts'
import { bankEnv, json, removeTempDirs, runBank } from './run-bank.ts'

const tb = useTestBank()
after(async () => {
  removeTempDirs()
})

const bank = (...args: string[]) => runBank(args, bankEnv(tb))

const issue2Commands = [
  'partner create',
  'partner list',
  'credential create',
  'credential revoke',
  'credential list',
  'entity review',
  'entity list',
  'user kyc',
  'account list',
]

test('cli - help lists every command and exits 0', async () => {
  const [help, bare, dashed] = await Promise.all([bank('help'), bank(), bank('--help')])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /^usage: bank <command>/)
  for (const words of issue2Commands) assert.ok(help.stdout.includes(`  bank ${words}`), words)
  assert.equal(help.stderr, '')
  assert.deepEqual(bare, help)
  assert.deepEqual(dashed, help)
})

test('cli - partner create prints the partner id, root entity id and a working credential as JSON', async () => {
  const registration = registrationNumber()
  const run = await bank(
    'partner', 'create',
    '--name', 'Ubuntu Pay (Pty) Ltd',
    '--email', 'ops@ubuntupay.example',
    '--registration-number', registration,
    '--trading-name', 'Ubuntu Pay',
  )
  const created = json(run)
  assert.equal(run.stderr, '')
  assert.deepEqual(Object.keys(created).sort(), ['credential', 'nats_creds', 'partner_id',
    'root_entity_id', 'webhook_secret'])
  assert.deepEqual(Object.keys(created.credential).sort(), ['id', 'token'])
  assert.match(created.credential.token, /^pbk_[A-Za-z0-9_-]{43}$/)

  const partner = clientFor(tb, created.partner_id, created.credential.token)
  const info = await partner.entities.info({ entity_id: created.root_entity_id })
  assert.equal(info.name, 'Ubuntu Pay (Pty) Ltd')
  assert.equal(info.entity_type === 'business' && info.trading_name, 'Ubuntu Pay')
  assert.equal(info.approved, false)

  const listed = json(await bank('partner', 'list'))
  const mine = listed.partners.find((p: { partner_id: string }) => p.partner_id
    === created.partner_id)
  assert.deepEqual(mine, {
    partner_id: created.partner_id,
    name: 'Ubuntu Pay (Pty) Ltd',
    email: 'ops@ubuntupay.example',
    root_entity_id: created.root_entity_id,
    created_at: iso(tb.clock.now().getTime()),
  })
  assert.deepEqual(listed, await tb.operator.partners.list())
})

test('cli - partner create --country is passed on', async () => {
  const created = json(
    await bank('partner', 'create', '--name', 'Gaborone Pay', '--email', 'a@gp.example',
      '--registration-number', registrationNumber(), '--trading-name', 'GP', '--country', 'BWA'),
  )
  await tb.operator.entities.review({ entity_id: created.root_entity_id, decision: 'approve' })
  const account = await clientFor(tb, created.partner_id, created.credential.token).accounts.create(
    { entity_id: created.root_entity_id })
  assert.equal(account.country, 'BWA')
})

test('cli - partner create takes --registration-number as on the CIPC certificate (YYYY/NNNNNN/NN)', async () => {
  const digits = registrationNumber()
  const slashed = `${digits.slice(0, 4)}/${digits.slice(4, 10)}/${digits.slice(10)}`
  const company = ['--name', 'Cert Ltd', '--email', 'c@cert.example', '--trading-name', 'Cert']
  const run = await bank('partner', 'create', ...company, '--registration-number', slashed)
  const created = json(run)
  const root = await tb.operator.entities.list({ partner_id: created.partner_id })
  const entity = root.entities.find((e) => e.id === created.root_entity_id)
  assert.equal(entity?.registration_number, digits)
})

test('cli - credential create with permissions, expiry and label; list; revoke', async () => {
  const p = await onboardPartner(tb)
  tb.clock.advance(60_000)
  const issued = json(
    await bank('credential', 'create', '--partner', p.partnerId, '--permissions', 'read',
      '--expires-in', '2h', '--label', 'reporting'),
  )
  assert.deepEqual(Object.keys(issued).sort(), ['id', 'token'])
  const reader = clientFor(tb, p.partnerId, issued.token)
  await reader.users.list()
  await expectRefusal(reader.entities.create(businessEntity()), 403)

  const listRun = await bank('credential', 'list', '--partner', p.partnerId)
  const { credentials } = json(listRun)
  assert.doesNotMatch(listRun.stdout, /pbk_|opk_/)
  assert.ok(!listRun.stdout.includes(issued.token))
  assert.deepEqual(
    credentials.map((c: { id: string }) => c.id),
    [p.credentialId, issued.id],
  )
  assert.deepEqual(credentials[1], {
    id: issued.id,
    partner_id: p.partnerId,
    permissions: ['read'],
    label: 'reporting',
    created_at: iso(tb.clock.now().getTime()),
    expires_at: iso(tb.clock.now().getTime() + 2 * 3600_000),
    revoked_at: null,
  })

  const revoked = json(await bank('credential', 'revoke', issued.id))
  assert.equal(revoked.id, issued.id)
  assert.equal(revoked.revoked_at, iso(tb.clock.now().getTime()))
  await expectRefusal(reader.users.list(), 401)
  const again = await bank('credential', 'revoke', issued.id)
  assert.equal(again.code, 0)
  assert.deepEqual(json(again), revoked)
  await p.client.users.list()
})

test('cli - credential create reads durations in days, minutes and seconds, and comma lists with spaces', async () => {
  const p = await onboardPartner(tb)
  const now = tb.clock.now().getTime()
  const [days, minutes, seconds] = await Promise.all([
    bank('credential', 'create', '--partner', p.partnerId, '--permissions', 'read, write',
      '--expires-in', '30d'),
    bank('credential', 'create', `--partner=${p.partnerId}`, '--permissions=payments',
      '--expires-in', '90m'),
    bank('credential', 'create', '--partner', p.partnerId, '--permissions', 'read,write,payments',
      '--expires-in', '3600'),
  ])
  const ids = [json(days).id, json(minutes).id, json(seconds).id]
  const { credentials } = await tb.operator.credentials.list({ partner_id: p.partnerId })
  const byId = new Map(credentials.map((c) => [c.id, c]))
  assert.equal(byId.get(ids[0])?.expires_at, iso(now + 30 * 86_400_000))
  assert.deepEqual(byId.get(ids[0])?.permissions, ['read', 'write'])
  assert.equal(byId.get(ids[1])?.expires_at, iso(now + 90 * 60_000))
  assert.deepEqual(byId.get(ids[1])?.permissions, ['payments'])
  assert.equal(byId.get(ids[2])?.expires_at, iso(now + 3600_000))
  assert.deepEqual(byId.get(ids[2])?.permissions, ['read', 'write', 'payments'])
})

test('cli - entity review --reject --reason, then --approve opens the account; entity list and account list show it', async () => {
  const p = await onboardPartner(tb)
  const { id } = await p.client.entities.create(
    businessEntity({ name: 'Spaza Supplies (Pty) Ltd' }))

  const rejected = json(await bank('entity', 'review', id, '--reject', '--reason',
    'CIPC certificate unreadable'))
  assert.deepEqual(rejected, { entity_id: id, review_status: 'rejected', approved: false,
    account: null })
  let listed = json(await bank('entity', 'list', '--partner', p.partnerId))
  assert.deepEqual(
    listed.entities.map((e: { id: string; review_status: string; is_root: boolean }) => [e.id,
      e.review_status, e.is_root]),
    [
      [p.rootEntityId, 'pending', true],
      [id, 'rejected', false],
    ],
  )
  assert.deepEqual(json(await bank('account', 'list', '--entity', id)),
    { entity_id: id, accounts: [] })

  const approved = json(await bank('entity', 'review', id, '--approve'))
  assert.equal(approved.review_status, 'approved')
  assert.equal(approved.approved, true)
  assert.equal(approved.account.kind, 'standard')
  listed = json(await bank('entity', 'list', '--partner', p.partnerId))
  assert.equal(listed.entities[1].review_status, 'approved')
  assert.deepEqual(listed, await tb.operator.entities.list({ partner_id: p.partnerId }))

  const accounts = json(await bank('account', 'list', '--entity', id))
  assert.equal(accounts.entity_id, id)
  assert.deepEqual(
    accounts.accounts.map((a: { account_id: string; account_number: string; partner_id: string }) =>
      [a.account_id, a.account_number, a.partner_id]),
    [[approved.account.account_id, approved.account.account_number, p.partnerId]],
  )
  assert.equal((await p.client.entities.info({ entity_id: id })).approved, true)
})

test('cli - user kyc moves a user through pending, rejected (with reason) and approved', async () => {
  const p = await onboardPartner(tb)
  const { id } = await p.client.entities.create(businessEntity())
  const { userId } = await p.client.users.create(userRequest(id))

  const pending = json(await bank('user', 'kyc', userId, '--status', 'pending'))
  assert.equal(pending.user.id, userId)
  assert.equal(pending.user.kyc_status, 'pending')
  assert.equal(typeof pending.user.kyc_submitted_at, 'string')

  const rejected = json(await bank('user', 'kyc', userId, '--status', 'rejected', '--reason',
    'ID photo is blurred'))
  assert.equal(rejected.user.kyc_status, 'rejected')
  assert.equal(rejected.user.kyc_rejection_reason, 'ID photo is blurred')
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_rejection_reason,
    'ID photo is blurred')

  json(await bank('user', 'kyc', userId, '--status', 'pending'))
  const approved = json(await bank('user', 'kyc', userId, '--status', 'approved'))
  assert.equal(approved.user.kyc_status, 'approved')
  assert.equal(approved.user.verified, true)
  assert.deepEqual((await p.client.users.get({ user_id: userId })).user, approved.user)
})
