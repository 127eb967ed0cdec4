import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { formatRand } from '../../src/contract/format.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { bankEnv, json, removeTempDirs, runBank } from './run-bank.ts'

// `bank account show`, `bank account list`, `bank account transactions`
// (ops.account.show/list/transactions, an operator's view of any partner's account),
// `--format table` (money in rand), and `bank status` read from the test bank's `$SRV.INFO`
// and `$SRV.STATS` (short by default, every endpoint with --endpoints).

const tb = useTestBank()
let p: TestPartner
let accountId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  accountId = accounts[0]!.account_id
})
after(() => removeTempDirs())

const bank = (...args: string[]) => runBank(args, bankEnv(tb))

test('cli accounts - account show: the account of any partner with the balances its partner sees', async () => {
  json(await bank('account', 'deposit', accountId, '150000', '--ref', 'first'))
  const shown = json(await bank('account', 'show', accountId))
  const details = await p.client.accounts.getDetails({ account_id: accountId })
  assert.deepEqual(shown, {
    ...details,
    partner_id: p.partnerId,
    entity_id: p.rootEntityId,
    kind: 'pool',
    country: 'ZAF',
    created_at: shown.created_at,
  })
  assert.equal(shown.balance, details.balance)
  assert.equal(BigInt(shown.available_balance) <= BigInt(shown.balance), true)

  const unknown = await bank('account', 'show', randomUUID())
  assert.equal(unknown.code, 1)
  assert.equal(JSON.parse(unknown.stderr).error.code, 404)
  const badId = await bank('account', 'show', 'not-a-uuid')
  assert.equal(badId.code, 1)
  assert.deepEqual(JSON.parse(badId.stderr).error.details.map((d: { field: string }) => d.field),
    ['account_id'])
})

test('cli accounts - account transactions: newest first, --limit pages with next_cursor, --cursor goes on', async () => {
  const other = await onboardPartner(tb, { approve: true })
  const account = (await other.client.accounts.getByEntity(
    { entity_id: other.rootEntityId })).accounts[0]!.account_id
  const deposits = []
  for (const amount of ['100', '200', '300']) deposits.push(
    json(await bank('account', 'deposit', account, amount, '--ref', `d${amount}`)).tx_id)

  const all = json(await bank('account', 'transactions', account))
  assert.equal(all.account_id, account)
  assert.deepEqual(all.transactions.map((t: { tx_id: string }) => t.tx_id), [...deposits].reverse())
  assert.deepEqual(all.transactions.map((t: { running_balance: string }) => t.running_balance),
    ['600', '300', '100'])
  assert.equal(all.next_cursor, undefined)
  // The same rows the partner reads.
  const partnerView = await other.client.accounts.listTransactions(
    { account_id: account, limit: 100 })
  assert.deepEqual(all.transactions, partnerView.transactions)

  const first = json(await bank('account', 'transactions', account, '--limit', '2'))
  assert.deepEqual(first.transactions.map((t: { tx_id: string }) => t.tx_id),
    [deposits[2], deposits[1]])
  assert.equal(typeof first.next_cursor, 'string')
  const rest = json(await bank('account', 'transactions', account, '--limit', '2', '--cursor',
    first.next_cursor))
  assert.deepEqual(rest.transactions.map((t: { tx_id: string }) => t.tx_id), [deposits[0]])
  assert.equal(rest.next_cursor, undefined)

  for (const limit of ['0', '1001']) {
    const refused = await bank('account', 'transactions', account, '--limit', limit)
    assert.equal(refused.code, 1, limit)
    assert.deepEqual(JSON.parse(refused.stderr).error.details.map(
      (d: { field: string }) => d.field), ['limit'])
  }
  assert.equal(json(await bank('account', 'transactions', account, '--limit', '1000'))
    .transactions.length, 3)
  assert.equal(JSON.parse((await bank('account', 'transactions', randomUUID())).stderr).error.code,
    404)
})

test('cli accounts - a mistyped flag (--reff) is refused with exit 2 and deposits nothing', async () => {
  const before = await p.client.accounts.getDetails({ account_id: accountId })
  const run = await bank('account', 'deposit', accountId, '500', '--reff', 'typo')
  assert.equal(run.code, 2)
  assert.equal(run.stdout, '')
  assert.match(run.stderr, /unknown option '--reff'/)
  assert.deepEqual(await p.client.accounts.getDetails({ account_id: accountId }), before)
})

test('cli accounts - --format table prints key/value lines and the list as a table', async () => {
  const shown = await bank('account', 'show', accountId, '--format', 'table')
  assert.equal(shown.code, 0, shown.stderr)
  const lines = shown.stdout.split('\n')
  const details = await p.client.accounts.getDetails({ account_id: accountId })
  // Money in rand, as the console shows it; the JSON keeps the integer-cent strings.
  const balance = formatRand(BigInt(details.balance))
  assert.ok(lines.includes(`balance            ${balance}`), shown.stdout)
  assert.match(details.balance, /^\d+$/)
  assert.ok(lines.some((line) => /^metadata\.currency +ZAR$/.test(line)), shown.stdout)
  assert.ok(lines.includes(`partner_id         ${p.partnerId}`), shown.stdout)

  // The flag may come before the command's words too.
  const listed = await bank('--format', 'table', 'account', 'transactions', accountId)
  assert.equal(listed.code, 0, listed.stderr)
  const rows = listed.stdout.split('\n')
  const header = rows.findIndex((line) => line.startsWith('tx_id '))
  assert.ok(header > 0, listed.stdout)
  assert.match(rows[header - 1]!, /^transactions \(\d+\):$/)
  assert.match(rows[header + 1]!, /^-+( +-+)+$/)
  const { transactions } = await p.client.accounts.listTransactions(
    { account_id: accountId, limit: 100 })
  assert.deepEqual(rows.slice(header + 2, header + 2 + transactions.length).map((line) => line.split(/ +/)[0]), transactions.map((t) => t.tx_id))

  const empty = await bank('credential', 'list', '--partner', p.partnerId, '--format', 'json')
  assert.deepEqual(json(empty), await tb.operator.credentials.list({ partner_id: p.partnerId }))
})

test('cli accounts - account list: each account with its status, balance and available balance, as account show reads them', async () => {
  const other = await onboardPartner(tb, { approve: true })
  const pool = (await other.client.accounts.getByEntity(
    { entity_id: other.rootEntityId })).accounts[0]!.account_id
  json(await bank('account', 'deposit', pool, '123456', '--ref', 'list'))
  const { accounts } = json(await bank('account', 'list', '--entity', other.rootEntityId))
  const shown = json(await bank('account', 'show', pool))
  assert.deepEqual(accounts, [{ account_id: pool, account_number: shown.account_number,
    created_at: shown.created_at, account_type: 'current', metadata: shown.metadata,
    kind: 'pool', partner_id: other.partnerId, status: 'active', balance: '123456',
    available_balance: shown.available_balance }])
  assert.equal(shown.balance, '123456')

  const table = await bank('account', 'list', '--entity', other.rootEntityId, '--format', 'table')
  assert.equal(table.code, 0, table.stderr)
  const rows = table.stdout.split('\n')
  const header = rows.findIndex((line) => line.startsWith('account_id '))
  assert.match(rows[header]!, / status +balance +available_balance$/)
  assert.ok(rows[header + 2]!.startsWith(pool), table.stdout)
  assert.match(rows[header + 2]!, / active +R1,234\.56 +R[\d,]+\.\d\d$/)
})

type Status = {
  service: string
  instances: Array<{ id: string; version: string; uptime_seconds: number; metadata: Record<string,
    string>; requests: number; errors: number; endpoints: Array<{
    name: string; requests: number; errors: number }> }>
}

test('cli accounts - status lists the running instance with its storage and counts each endpoint’s requests and errors', async () => {
  const mine = (status: Status) => status.instances.find((i) => i.id === tb.bank.micro.id)!
  const endpoint = (status: Status, name: string) => mine(status).endpoints.find(
    (e) => e.name === name)!
  const before: Status = json(await bank('status', '--endpoints'))
  assert.equal(before.service, tb.config.serviceName)
  const instance = mine(before)
  assert.ok(instance, JSON.stringify(before.instances.map((i) => i.id)))
  assert.equal(instance.version, '0.1.0')
  assert.equal(instance.metadata.storage, tb.bank.database.storage)
  assert.equal(typeof instance.metadata.store, 'string')
  assert.ok(instance.uptime_seconds >= 0)
  assert.equal(instance.endpoints.length, tb.bank.micro.info().endpoints.length)
  assert.equal(instance.requests, instance.endpoints.reduce((sum, e) => sum + e.requests, 0))

  json(await bank('account', 'show', accountId))
  assert.equal((await bank('account', 'show', randomUUID())).code, 1)
  const after: Status = json(await bank('status', '--endpoints'))
  assert.equal(endpoint(after, 'ops_account_show').requests - endpoint(before, 'ops_account_show')
    .requests, 2)
  assert.equal(endpoint(after, 'ops_account_show').errors - endpoint(before, 'ops_account_show')
    .errors, 1)
  assert.equal(mine(after).errors - mine(before).errors, 1)

  const table = await bank('status', '--endpoints', '--format', 'table')
  assert.equal(table.code, 0, table.stderr)
  const lines = table.stdout.split('\n')
  assert.ok(lines.some((line) => line.startsWith(tb.bank.micro.id)
    && line.includes(` ${tb.bank.database.storage} `)), table.stdout)
  assert.ok(lines.some((line) => line.startsWith(tb.bank.micro.id) && /\bops_account_show\b/.test(line)), table.stdout)
  assert.ok(lines.some((line) => line.startsWith(tb.bank.micro.id) && /\bops_account_deposit\b/.test(line)), table.stdout)
  assert.ok(!lines.some((line) => /\bops_clearing_run\b/.test(line)), 'endpoints without requests are left out of the table')
})

test('cli accounts - status by default is short: each instance’s totals and only the endpoints that answered with errors', async () => {
  assert.equal((await bank('account', 'show', randomUUID())).code, 1)
  const run = await bank('status')
  assert.equal(run.code, 0, run.stderr)
  const status = JSON.parse(run.stdout)
  const mine = status.instances.find((i: { id: string }) => i.id === tb.bank.micro.id)
  const full: Status = json(await bank('status', '--endpoints'))
  const fullMine = full.instances.find((i) => i.id === tb.bank.micro.id)!
  assert.equal(mine.endpoints, undefined)
  assert.equal(mine.endpoint_count, fullMine.endpoints.length)
  assert.equal(mine.metadata.storage, tb.bank.database.storage)
  assert.deepEqual(mine.endpoints_with_errors.map((e: { name: string }) => e.name),
    fullMine.endpoints.filter((e) => e.errors > 0).sort((a, b) => b.errors - a.errors)
      .map((e) => e.name))
  const show = mine.endpoints_with_errors.find(
    (e: { name: string }) => e.name === 'ops_account_show')
  assert.ok(show.errors >= 1 && show.requests >= show.errors, JSON.stringify(show))
  assert.match(show.last_error, /account/)
  // A few dozen lines for an instance, where every endpoint's counts made about 900.
  const perInstance = run.stdout.split('\n').length / status.instances.length
  assert.ok(perInstance < 60, `${perInstance} lines per instance`)

  const table = await bank('status', '--format', 'table')
  const lines = table.stdout.split('\n')
  const header = lines.findIndex((line) => line.startsWith('instance '))
  assert.match(lines[header - 1]!, /^endpoints_with_errors \(\d+\):$/)
  assert.ok(lines.some((line) => line.startsWith(tb.bank.micro.id) && /\bops_account_show\b/.test(line)), table.stdout)
  assert.ok(!lines.some((line) => /\bops_account_deposit\b/.test(line)), table.stdout)
})

test('cli accounts - status without any instance of the named service exits 1 and says so', async () => {
  const name = `nobody-${randomUUID().slice(0, 8)}`
  const run = await bank('status', '--service', name)
  assert.equal(run.code, 1)
  assert.equal(run.stdout, '')
  assert.match(run.stderr, new RegExp(`^bank: no instance of ${name} answered on ${tb.natsUrl.replace(/[.]/g, '\\.')}`))
  const unreachable = await runBank(['status'], bankEnv(tb, { NATS_URL: 'nats://127.0.0.1:1' }))
  assert.equal(unreachable.code, 1)
  assert.match(unreachable.stderr, /^bank: cannot reach NATS at nats:\/\/127\.0\.0\.1:1/)
})
