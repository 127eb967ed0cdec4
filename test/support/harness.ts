import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import pg from 'pg'
import { startBank, type Bank } from '../../src/app.ts'
import { BankClient, OperatorClient } from '../../src/client/index.ts'
import { ManualClock } from '../../src/clock.ts'
import { loadConfig, type Config } from '../../src/config.ts'
import { createLogger } from '../../src/logger.ts'
import {
  findNatsServerBinary,
  natsMissingMessage,
  startNatsServer,
  type PrivateNatsServer,
} from '../../src/transport/nats/nats-server.ts'
import { businessEntity } from './fixtures.ts'

// The one shared harness: a real nats-server (private to this test file, so that no two
// suites share a queue group), the real service in-process, and real storage — PGlite, or
// a fresh PostgreSQL database when BANK_TEST_STORAGE=postgres.

export type TestStorage = 'pglite' | 'postgres'
export const storage: TestStorage = process.env.BANK_TEST_STORAGE === 'postgres' ? 'postgres' : 'pglite'
const adminUrl = process.env.BANK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

let natsServer: Promise<PrivateNatsServer> | undefined

export function testNats(): Promise<PrivateNatsServer> {
  natsServer ??= (async () => {
    const binary = findNatsServerBinary()
    if (!binary) throw new Error(natsMissingMessage)
    return startNatsServer({ binary, storeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'bank-nats-')) })
  })()
  return natsServer
}

export interface TestBank {
  bank: Bank
  config: Config
  clock: ManualClock
  natsUrl: string
  nc: NatsConnection
  operator: OperatorClient
  operatorToken: string
  /** Stop the service and start it again on the same storage. */
  restart(): Promise<void>
  stop(): Promise<void>
}

export interface TestBankOptions {
  clock?: ManualClock
  env?: Record<string, string>
}

export async function startTestBank(options: TestBankOptions = {}): Promise<TestBank> {
  const nats = await testNats()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-data-'))
  const database = storage === 'postgres' ? await createPostgresDatabase() : undefined
  const config = loadConfig({
    BANK_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BANK_TEST_LOG_LEVEL ?? 'silent',
    ...(database ? { DATABASE_URL: database.url } : {}),
    BANK_DB_POOL_MAX: '5',
    BANK_CLEARING_SCHEDULE: 'off',
    ...options.env,
  })
  const clock = options.clock ?? new ManualClock('2026-11-23T08:00:00Z')
  const log = createLogger(config.logLevel)
  const start = () => startBank({ config, clock, log, natsUrl: nats.url, validateResponses: true })
  let bank = await start()
  const operatorToken = bank.bootstrapToken
  if (!operatorToken) throw new Error('a fresh test bank should have created an operator credential')
  const nc = await connect({ servers: nats.url })
  const operator = new OperatorClient({ connection: nc, token: operatorToken })
  const testBank: TestBank = {
    bank,
    config,
    clock,
    natsUrl: nats.url,
    nc,
    operator,
    operatorToken,
    async restart() {
      await bank.stop()
      bank = await start()
      testBank.bank = bank
    },
    async stop() {
      await nc.close()
      await bank.stop()
      await database?.drop()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
  return testBank
}

async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bank_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      await client.query(`drop database if exists ${name} with (force)`)
      await client.end()
    },
  }
}

export interface TestPartner {
  partnerId: string
  rootEntityId: string
  credentialId: string
  token: string
  client: BankClient
}

/** Onboards a partner through the operator interface; `approve` also approves its root entity. */
export async function onboardPartner(tb: TestBank, options: { approve?: boolean } = {}): Promise<TestPartner> {
  const root = businessEntity()
  const created = await tb.operator.partners.create({
    name: root.name,
    email: root.email,
    registration_number: root.registration_number,
    trading_name: root.trading_name,
  })
  if (options.approve) await tb.operator.entities.review({ entity_id: created.root_entity_id, decision: 'approve' })
  return {
    partnerId: created.partner_id,
    rootEntityId: created.root_entity_id,
    credentialId: created.credential.id,
    token: created.credential.token,
    client: new BankClient({ connection: tb.nc, token: created.credential.token, partnerId: created.partner_id }),
  }
}

export function clientFor(tb: TestBank, partnerId: string, token: string): BankClient {
  return new BankClient({ connection: tb.nc, token, partnerId })
}

export interface RawReply {
  code: number
  body: any
  headers: Record<string, string>
}

/** A request below the SDK, for malformed bodies and odd headers. */
export async function rawRequest(
  tb: TestBank,
  subject: string,
  data: string | Uint8Array,
  auth: { token?: string; authorization?: string } = {},
): Promise<RawReply> {
  const h = natsHeaders()
  if (auth.token !== undefined) h.set('token', auth.token)
  if (auth.authorization !== undefined) h.set('Authorization', auth.authorization)
  const reply = await tb.nc.request(subject, data, { timeout: 10_000, headers: h })
  const headers: Record<string, string> = {}
  for (const key of reply.headers?.keys() ?? []) headers[key] = reply.headers!.get(key)
  const text = new TextDecoder().decode(reply.data)
  return { code: Number(headers['Nats-Service-Error-Code'] ?? 200), body: text ? JSON.parse(text) : undefined, headers }
}
