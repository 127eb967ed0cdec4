import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { BankClient, BankSettingError, OperatorClient } from '../../src/client/index.ts'
import { dataDirOf, default_nats_url, locateNatsUrl, locateOperatorToken, locatePartner } from '../../src/client/locate.ts'

// Where the SDK's fromEnv/fromDataDir and the CLI find the bank, without a bank: which
// setting wins, and what a missing one says.

const dirs: string[] = []
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function dataDir(files: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-locate-'))
  dirs.push(dir)
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text)
  return dir
}

test('client locate - the NATS URL: NATS_URL, else <BANK_DATA_DIR>/nats-url, else the default, each with where it came from', () => {
  const dir = dataDir({ 'nats-url': 'nats://127.0.0.1:4999\n' })
  const file = path.join(dir, 'nats-url')
  assert.deepEqual(locateNatsUrl({ NATS_URL: ' nats://10.0.0.1:4222 ', BANK_DATA_DIR: dir }), { value: 'nats://10.0.0.1:4222', from: 'NATS_URL' })
  assert.deepEqual(locateNatsUrl({ BANK_DATA_DIR: dir }), { value: 'nats://127.0.0.1:4999', from: file })
  const empty = dataDir()
  const fallback = locateNatsUrl({ BANK_DATA_DIR: empty })
  assert.equal(fallback.value, default_nats_url)
  assert.equal(fallback.from,
    `the default: NATS_URL is unset and ${path.join(empty, 'nats-url')} does not exist`)
  // An empty file is no URL.
  assert.equal(locateNatsUrl({ BANK_DATA_DIR: dataDir({ 'nats-url': '\n' }) }).value,
    default_nats_url)
})

test('client locate - a data directory given outright: its files only, the environment not consulted', () => {
  const dir = dataDir({ 'nats-url': 'nats://127.0.0.1:4999', 'operator-token': 'opk_from_file\n' })
  const env = { NATS_URL: 'nats://10.0.0.1:4222', BANK_OPERATOR_TOKEN: 'opk_from_env' }
  assert.deepEqual(locateNatsUrl(env, dir), { value: 'nats://127.0.0.1:4999', from: path.join(dir, 'nats-url') })
  assert.deepEqual(locateOperatorToken(env, dir),
    { value: 'opk_from_file', from: path.join(dir, 'operator-token') })
  assert.equal(locateNatsUrl(env, dataDir()).value, default_nats_url)
})

test('client locate - the operator credential: BANK_OPERATOR_TOKEN, else <data dir>/operator-token', () => {
  const dir = dataDir({ 'operator-token': 'opk_from_file\n' })
  assert.deepEqual(locateOperatorToken({ BANK_OPERATOR_TOKEN: 'opk_from_env ',
    BANK_DATA_DIR: dir }), { value: 'opk_from_env', from: 'BANK_OPERATOR_TOKEN' })
  assert.deepEqual(locateOperatorToken({ BANK_DATA_DIR: dir }),
    { value: 'opk_from_file', from: path.join(dir, 'operator-token') })
})

test('client locate - no operator credential names the variable and the file it looked for', () => {
  const dir = dataDir()
  const file = path.join(dir, 'operator-token')
  const error = catchSync(() => OperatorClient.fromEnv({ env: { BANK_DATA_DIR: dir } }))
  assert.ok(error instanceof BankSettingError)
  assert.deepEqual(error.settings, ['BANK_OPERATOR_TOKEN', file])
  assert.match(error.message, /^no operator credential: set BANK_OPERATOR_TOKEN, or run where .+operator-token exists/)
  assert.ok(error.message.includes(file))
  // An empty token file is no credential either.
  fs.writeFileSync(file, '\n')
  assert.ok(catchSync(() => OperatorClient.fromEnv({ env: { BANK_DATA_DIR: dir } }))
    instanceof BankSettingError)
  const fromDir = catchSync(() => OperatorClient.fromDataDir(dir,
    { env: { BANK_OPERATOR_TOKEN: 'opk_ignored' } }))
  assert.ok(fromDir instanceof BankSettingError)
  assert.deepEqual(fromDir.settings, [file])
  assert.equal(fromDir.message.includes('BANK_OPERATOR_TOKEN'), false,
    'fromDataDir does not read the variable, so it does not send one there')
})

test('client locate - the data directory defaults to ./.data, BANK_DATA_DIR resolved from the working directory', () => {
  assert.equal(dataDirOf({}), path.resolve('.data'))
  assert.equal(dataDirOf({ BANK_DATA_DIR: 'some/dir' }), path.resolve('some/dir'))
})

test('client locate - a partner client needs BANK_PARTNER_ID and BANK_PARTNER_TOKEN; every missing one named at once', () => {
  const none = catchSync(() => BankClient.fromEnv({ env: {} }))
  assert.ok(none instanceof BankSettingError)
  assert.deepEqual(none.settings, ['BANK_PARTNER_ID', 'BANK_PARTNER_TOKEN'])
  assert.match(none.message, /^no partner id or credential: set BANK_PARTNER_ID and BANK_PARTNER_TOKEN/)
  const noToken =
    catchSync(() => BankClient.fromDataDir(dataDir(), { env: { BANK_PARTNER_ID: 'p' } }))
  assert.ok(noToken instanceof BankSettingError)
  assert.deepEqual(noToken.settings, ['BANK_PARTNER_TOKEN'])
  assert.match(noToken.message, /^no partner credential: set BANK_PARTNER_TOKEN /)
  const noId = catchSync(
    () => BankClient.fromEnv({ env: { BANK_PARTNER_TOKEN: 'pbk_x', BANK_PARTNER_ID: '  ' } }))
  assert.ok(noId instanceof BankSettingError)
  assert.match(noId.message, /^no partner id: set BANK_PARTNER_ID /)
  assert.deepEqual(locatePartner({ BANK_PARTNER_ID: ' id ', BANK_PARTNER_TOKEN: 'pbk_x\n' }), {
    partnerId: { value: 'id', from: 'BANK_PARTNER_ID' },
    token: { value: 'pbk_x', from: 'BANK_PARTNER_TOKEN' },
  })
})

function catchSync(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  assert.fail('expected an error')
}
