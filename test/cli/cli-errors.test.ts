import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { businessEntity, registrationNumber, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { bankEnv, cleanEnv, emptyDir, json, removeTempDirs, runBank, type BankRun } from './run-bank.ts'

// Exit codes of `bank`: 0 done, 1 the bank refused (error JSON on stderr), 2 a usage mistake.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb)
})
after(async () => {
  removeTempDirs()
})

const bank = (...args: string[]) => runBank(args, bankEnv(tb))
/** NATS on a port where nothing listens: a command that got that far would exit 1, not 2. */
const offline = (...args: string[]) => runBank(args, cleanEnv({ NATS_URL: 'nats://127.0.0.1:1', BANK_OPERATOR_TOKEN: tb.operatorToken }))

function refusal(run: BankRun, code: number, type: string) {
  assert.equal(run.code, 1, `exit code; stderr: ${run.stderr}`)
  assert.equal(run.stdout, '')
  const body = JSON.parse(run.stderr) as {
    error: { code: number; type: string; message: string; details: Array<{ field: string }> } }
  assert.deepEqual(Object.keys(body), ['error'])
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message', 'type'])
  assert.equal(body.error.code, code)
  assert.equal(body.error.type, type)
  assert.ok(body.error.message.length > 0)
  return body.error
}

function usage(run: BankRun, message: RegExp) {
  assert.equal(run.code, 2, `exit code; stdout: ${run.stdout} stderr: ${run.stderr}`)
  assert.equal(run.stdout, '')
  assert.match(run.stderr, message)
}

test('cli - an unknown command in a group exits 2 with the usage of the group\'s commands', async () => {
  const cases: Array<[string[], string, string]> = [
    [['partner', 'delete'], 'delete', 'usage: bank partner <command>'],
    [['user', 'kyc-all'], 'kyc-all', 'usage: bank user <command>'],
  ]
  for (const [args, word, listing] of cases) {
    const run = await offline(...args)
    usage(run, new RegExp(`^error: unknown command '${word}'\n`))
    assert.ok(run.stderr.includes(listing), run.stderr)
  }
  assert.ok((await offline('partner', 'delete')).stderr.includes('  bank partner list\n'))
})

test('cli - an unknown top-level command exits 2 with "did you mean" and one line, not every command', async () => {
  const typo = await offline('partnr', 'list')
  usage(typo, /^error: unknown command 'partnr'\n/)
  assert.deepEqual(typo.stderr.split('\n'), [
    "error: unknown command 'partnr'",
    '(Did you mean partner?)',
    '(bank --help lists every command)',
    '',
  ])
  const pointer = '(bank --help lists every command)\n'
  const unknown = await offline('frobnicate')
  assert.equal(unknown.stderr, `error: unknown command 'frobnicate'\n${pointer}`)
  assert.equal((await offline('--frob')).stderr, `error: unknown option '--frob'\n${pointer}`)
})

test('cli - missing words and flags exit 2 with a message, before anything reaches the bank', async () => {
  const id = randomUUID()
  const cases: Array<[string[], RegExp]> = [
    [['partner', 'create', '--name', 'X Ltd'], /--email is required/],
    [['partner', 'create', '--name', '--email', 'a@b.example'], /--name is required/],
    [['credential', 'create', '--permissions', 'read'], /--partner is required/],
    [['credential', 'create', '--partner', id], /--permissions is required/],
    [['credential', 'create', '--partner', id, '--permissions', 'read', '--expires-in', 'soon'], /cannot read the duration "soon"/],
    [['credential', 'create', '--partner', id, '--permissions', 'read', '--expires-in', '1w'], /cannot read the duration/],
    [['credential', 'revoke'], /<credential_id> is required/],
    [['credential', 'list'], /--partner is required/],
    [['entity', 'review', id], /exactly one of --approve and --reject/],
    [['entity', 'review', id, '--approve', '--reject', '--reason', 'x'], /exactly one of --approve and --reject/],
    [['entity', 'review', id, '--reject'], /--reason is required/],
    [['entity', 'review', '--approve'], /<entity_id> is required/],
    [['entity', 'list'], /--partner is required/],
    [['user', 'kyc', id], /--status is required/],
    [['user', 'kyc', '--status', 'approved'], /<user_id> is required/],
    [['account', 'list'], /--entity is required/],
  ]
  const runs = await Promise.all(cases.map(([args]) => offline(...args)))
  runs.forEach((run, i) => usage(run, cases[i]![1]))
})

test('cli - a usage mistake changes nothing in the bank', async () => {
  const before = await tb.operator.partners.list()
  usage(await bank('partner', 'create', '--name', 'Half Ltd', '--email', 'h@half.example'), /--registration-number is required/)
  assert.deepEqual(await tb.operator.partners.list(), before)
  const { id } = await p.client.entities.create(businessEntity())
  usage(await bank('entity', 'review', id, '--reject'), /--reason is required/)
  const { entities } = await tb.operator.entities.list({ partner_id: p.partnerId })
  assert.equal(entities.find((e) => e.id === id)?.review_status, 'pending')
})

test('cli - without an operator credential exits 2 and says where to put one', async () => {
  const dataDir = emptyDir()
  const run = await runBank(['partner', 'list'],
    cleanEnv({ NATS_URL: tb.natsUrl, BANK_DATA_DIR: dataDir }))
  usage(run, /no operator credential/)
  assert.ok(run.stderr.includes('BANK_OPERATOR_TOKEN'))
  assert.ok(run.stderr.includes(path.join(dataDir, 'operator-token')))
})

test('cli - bank refusals exit 1 with the error JSON on stderr', async () => {
  refusal(await bank('credential', 'list', '--partner', randomUUID()), 404, 'not_found')
  refusal(await bank('credential', 'revoke', randomUUID()), 404, 'not_found')
  refusal(await bank('account', 'list', '--entity', randomUUID()), 404, 'not_found')
  refusal(await bank('user', 'kyc', randomUUID(), '--status', 'approved'), 404, 'not_found')

  const badId = refusal(await bank('entity', 'list', '--partner', 'acme'), 400, 'invalid_request')
  assert.deepEqual(badId.details.map((d) => d.field), ['partner_id'])
  const badPermission = refusal(await bank('credential', 'create', '--partner', p.partnerId,
    '--permissions', 'read,admin'), 400, 'invalid_request')
  assert.deepEqual(badPermission.details.map((d) => d.field), ['permissions.1'])
  const tooShort = refusal(await bank('credential', 'create', '--partner', p.partnerId,
    '--permissions', 'read', '--expires-in', '59s'), 400, 'invalid_request')
  assert.deepEqual(tooShort.details.map((d) => d.field), ['expires_in_seconds'])
  const badStatus = refusal(await bank('user', 'kyc', randomUUID(), '--status', 'done'), 400,
    'invalid_request')
  assert.deepEqual(badStatus.details.map((d) => d.field), ['status'])
})

test('cli - a refusal names the flags the fields were given as, and keeps the fields in details', async () => {
  const credential = ['credential', 'create', '--partner', p.partnerId, '--permissions']
  const permission = refusal(await bank(...credential, 'read,admin'), 400, 'invalid_request')
  const must = 'must be read, write, payments or card_details'
  assert.equal(permission.message, `invalid request: --permissions (item 2) ${must}`)
  const flag = '--permissions (item 2)'
  assert.deepEqual(permission.details, [{ field: 'permissions.1', message: must, flag }])
  const shortRun = await bank(...credential, 'read', '--expires-in', '59s')
  const short = refusal(shortRun, 400, 'invalid_request')
  assert.match(short.message, /^invalid request: --expires-in /)
  assert.deepEqual(short.details.map((d) => (d as { flag?: string }).flag), ['--expires-in'])
  const badId = refusal(await bank('entity', 'list', '--partner', 'acme'), 400, 'invalid_request')
  assert.equal(badId.message, 'invalid request: --partner must be a UUID')
})

test('cli - partner create refusals: invalid fields → 1 with 400 details; a duplicate registration → 1 with 409', async () => {
  const before = await tb.operator.partners.list()
  const invalid = refusal(
    await bank('partner', 'create', '--name', 'Bad Ltd', '--email', 'not-an-email',
      '--registration-number', '2020-123456-07', '--trading-name', 'Bad', '--country', 'ZA'),
    400,
    'invalid_request',
  )
  assert.deepEqual(invalid.details.map((d) => d.field).sort(),
    ['country', 'email', 'registration_number'])

  const registration = registrationNumber()
  tb.clock.advance(60_000) // partners list oldest first; a later partner sorts after `before`
  const args = ['partner', 'create', '--name', 'Twice Ltd', '--email', 't@twice.example',
    '--registration-number', registration, '--trading-name', 'Twice']
  const first = json(await bank(...args))
  refusal(await bank(...args), 409, 'conflict')
  const { partners } = await tb.operator.partners.list()
  assert.deepEqual(partners.slice(0, before.partners.length), before.partners)
  assert.deepEqual(partners.slice(before.partners.length).map((x) => x.partner_id),
    [first.partner_id])
})

test('cli - rejecting an approved entity or a KYC without a reason → 1 with 400', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  json(await bank('entity', 'review', id, '--approve'))
  refusal(await bank('entity', 'review', id, '--reject', '--reason', 'too late'), 400,
    'invalid_request')
  const { userId } = await p.client.users.create(userRequest(id))
  const noReason = refusal(await bank('user', 'kyc', userId, '--status', 'rejected'), 400,
    'invalid_request')
  assert.deepEqual(noReason.details.map((d) => d.field), ['reason'])
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'not_started')
})

test('cli - a wrong or partner credential → 1 with 401 or 403', async () => {
  refusal(await runBank(['partner', 'list'],
    bankEnv(tb, { BANK_OPERATOR_TOKEN: `opk_${'C'.repeat(43)}` })), 401, 'unauthorized')
  refusal(await runBank(['partner', 'list'], bankEnv(tb, { BANK_OPERATOR_TOKEN: 'not a token' })),
    401, 'unauthorized')
  refusal(await runBank(['partner', 'list'], bankEnv(tb, { BANK_OPERATOR_TOKEN: p.token })), 403,
    'forbidden')
})

test('cli - a 401 names the token file or variable the CLI used, and how to choose another', async () => {
  const dataDir = emptyDir()
  const file = path.join(dataDir, 'operator-token')
  fs.writeFileSync(file, `opk_${'E'.repeat(43)}\n`, { mode: 0o600 })
  const env = cleanEnv({ NATS_URL: tb.natsUrl, BANK_DATA_DIR: dataDir })
  const fromFile = refusal(await runBank(['partner', 'list'], env), 401, 'unauthorized')
  assert.ok(fromFile.message.includes(`the credential from ${file} was refused`), fromFile.message)
  assert.match(fromFile.message, /to use another, set BANK_OPERATOR_TOKEN, or BANK_DATA_DIR to the data directory/)
  const wrong = bankEnv(tb, { BANK_OPERATOR_TOKEN: 'not a token' })
  const fromEnv = refusal(await runBank(['partner', 'list'], wrong), 401, 'unauthorized')
  assert.match(fromEnv.message, /the credential from BANK_OPERATOR_TOKEN was refused/)
})

test('cli - an unreachable NATS server → 1 with a one-line message', async () => {
  const run = await offline('partner', 'list')
  assert.equal(run.code, 1)
  assert.equal(run.stdout, '')
  assert.match(run.stderr, /^bank: .+\n$/)
})

test('cli - finds the operator token and the NATS URL in BANK_DATA_DIR', async () => {
  const dataDir = emptyDir()
  fs.writeFileSync(path.join(dataDir, 'operator-token'), `${tb.operatorToken}\n`, { mode: 0o600 })
  fs.writeFileSync(path.join(dataDir, 'nats-url'), `${tb.natsUrl}\n`)
  const fromFiles = await runBank(['partner', 'list'], cleanEnv({ BANK_DATA_DIR: dataDir }))
  assert.equal(fromFiles.stderr, '')
  assert.deepEqual(json(fromFiles), await tb.operator.partners.list())

  // The environment wins over the files.
  refusal(await runBank(['partner', 'list'], cleanEnv(
    { BANK_DATA_DIR: dataDir, BANK_OPERATOR_TOKEN: `opk_${'D'.repeat(43)}` })), 401, 'unauthorized')
  const deadUrlDir = emptyDir()
  fs.writeFileSync(path.join(deadUrlDir, 'operator-token'), tb.operatorToken)
  fs.writeFileSync(path.join(deadUrlDir, 'nats-url'), 'nats://127.0.0.1:1')
  const envUrl = await runBank(['partner', 'list'],
    cleanEnv({ BANK_DATA_DIR: deadUrlDir, NATS_URL: tb.natsUrl }))
  assert.deepEqual(json(envUrl), await tb.operator.partners.list())
  const fileUrl = await runBank(['partner', 'list'], cleanEnv({ BANK_DATA_DIR: deadUrlDir }))
  assert.equal(fileUrl.code, 1, 'the nats-url file is read when NATS_URL is unset')
})
