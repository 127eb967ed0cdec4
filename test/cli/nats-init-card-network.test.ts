import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import { decode } from '@nats-io/jwt'
import { openDatabase, pgliteDirFor } from '../../src/db/database.ts'
import { migrations } from '../../src/modules.ts'
import type { Database } from '../../src/schema.ts'
import { credsAccount } from '../../src/nats-identity/nats-init.ts'
import { cleanEnv, emptyDir, json, removeTempDirs, runBank } from './run-bank.ts'

// `bank nats init` and the card network's NATS account: a new authority gets it with the
// others, and card-network.creds beside operator.creds; an authority set up before the card
// network had an account (its columns empty) gets one the next time the command runs, and
// every other key stays. Never over NATS: NATS_URL points where nothing listens.

after(() => removeTempDirs())

type Claims = { nats: { imports?: Array<{ subject: string; account: string }>;
  exports?: Array<{ subject: string }>; pub?: { allow?: string[] }; sub?: { allow?: string[] } } }

/** The account JWT the configuration preloads for `account`. */
function preloaded(config: string, account: string): Claims {
  const jwt = new RegExp(`${account}: "([^"]+)"`).exec(config)?.[1]
  assert.ok(jwt, `the configuration preloads ${account}`)
  return decode(jwt) as unknown as Claims
}

function checkFiles(dir: string, result: { cardNetworkAccount: string; bankAccount: string }) {
  const creds = fs.readFileSync(path.join(dir, 'card-network.creds'), 'utf8')
  assert.equal(credsAccount(creds), result.cardNetworkAccount)
  assert.equal(fs.statSync(path.join(dir, 'card-network.creds')).mode & 0o077, 0)
  const user = decode(/-----BEGIN NATS USER JWT-----\n(\S+)\n/.exec(creds)![1]!) as unknown as
    Claims
  assert.deepEqual(user.nats.pub?.allow, ['net.card.>'])
  assert.deepEqual(user.nats.sub?.allow, ['_INBOX.>'])
  const config = fs.readFileSync(path.join(dir, 'nats-server.conf'), 'utf8')
  const network = preloaded(config, result.cardNetworkAccount)
  assert.deepEqual(network.nats.imports?.map((i) => [i.subject, i.account]),
    [['net.card.>', result.bankAccount]])
  const bank = preloaded(config, result.bankAccount)
  assert.ok(bank.nats.exports?.some((e) => e.subject === 'net.card.>'))
}

test('nats init - the card network gets an account and card-network.creds; an older authority gets them on the next run', async () => {
  const dataDir = emptyDir()
  const dir = path.join(emptyDir(), 'nats')
  const env = cleanEnv({ NATS_URL: 'nats://127.0.0.1:1', BANK_DATA_DIR: dataDir })
  const init = async () => json(await runBank(['nats', 'init', '--dir', dir], env))
  const first = await init()
  assert.match(first.cardNetworkAccount, /^A[A-Z2-7]{55}$/)
  assert.equal(first.files.card_network_creds, path.join(dir, 'card-network.creds'))
  checkFiles(dir, first)
  // Run again: the same account, and the creds file is kept as it was.
  const credsBefore = fs.readFileSync(first.files.card_network_creds, 'utf8')
  const again = await init()
  assert.equal(again.cardNetworkAccount, first.cardNetworkAccount)
  assert.equal(fs.readFileSync(first.files.card_network_creds, 'utf8'), credsBefore)

  // An authority from before the card network had an account.
  const database = await openDatabase<Database>({ pgliteDir: pgliteDirFor(dataDir), poolMax: 1,
    migrations })
  try {
    await database.db.updateTable('nats_authority')
      .set({ card_network_account: null, card_network_seed_sealed: null }).execute()
  } finally {
    await database.close()
  }
  fs.rmSync(first.files.card_network_creds)
  const upgraded = await init()
  assert.equal(upgraded.created, false)
  assert.equal(upgraded.operator, first.operator)
  assert.equal(upgraded.bankAccount, first.bankAccount)
  assert.equal(upgraded.operatorsAccount, first.operatorsAccount)
  assert.match(upgraded.cardNetworkAccount, /^A[A-Z2-7]{55}$/)
  assert.notEqual(upgraded.cardNetworkAccount, first.cardNetworkAccount)
  checkFiles(dir, upgraded)
})
