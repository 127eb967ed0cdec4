import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before } from 'node:test'
import { connect, credsAuthenticator, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { startBank, type Bank } from '../../src/app.ts'
import { BankClient, OperatorClient } from '../../src/client/index.ts'
import { ManualClock, type Clock } from '../../src/clock.ts'
import { loadConfig, type Config } from '../../src/config.ts'
import { createLogger, type Logger } from '../../src/logger.ts'
import {
  findNatsServerBinary,
  natsMissingMessage,
  startNatsServer,
  type PrivateNatsServer,
} from '../../dev/nats-server.ts'
import { businessEntity } from './fixtures.ts'
import { leasePglite, leasePostgresDatabase } from './store-pool.ts'
import { pgliteSeed } from './templates.ts'
import { startAuthorityNats, type AuthorityNats } from './authority-nats.ts'
import { natsConnectOptions } from '../../src/nats/nats-connect.ts'
import { pgliteDirFor } from '../../src/db/database.ts'

// The one shared harness: a real nats-server (private to this test file, so that no two
// suites share a queue group), the real service in-process, and real storage — PGlite, or
// a fresh PostgreSQL database when BANK_TEST_STORAGE=postgres. Storage starts from a
// pre-migrated template (see templates.ts): in memory for a file that never restarts its
// bank, on disk for one that does; on PostgreSQL, a database cloned from the template.
//
// A test file declares its bank once, at top level:
//
//   const tb = useTestBank()                     // started before the first test, stopped
//                                                // after the last
//   const tb = useTestBank({ persistent: true }) // when a test calls tb.restart()
//   before(async () => {
//     await tb.ready                             // a setup hook of the file waits for the bank
//     partner = await onboardPartner(tb)
//   })


/**
 * How long the test clients wait for an answer: the SDK's 10 s default is a partner's choice,
 * not a test's; on a loaded machine an answer may take longer, and a test must then wait for
 * it, bounded by its file's own time limit (4 minutes, scripts/test.mjs), not fail early.
 * Tests of timeouts make clients of their own with short ones.
 */
export const test_request_timeout_ms = 120_000

export type TestStorage = 'pglite' | 'postgres'
export const storage: TestStorage = process.env.BANK_TEST_STORAGE === 'postgres' ? 'postgres'
  : 'pglite'

let natsServer: Promise<PrivateNatsServer> | undefined

/**
 * This process's private NATS server, started on first use. `npm test` runs several test
 * files one after another in one process (see scripts/test.mjs); they share it, one bank at
 * a time. A file that stops it gets a new one on its next call, and so does the next file.
 */
export function testNats(): Promise<PrivateNatsServer> {
  natsServer ??= (async () => {
    const binary = findNatsServerBinary()
    if (!binary) throw new Error(natsMissingMessage)
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-nats-'))
    const server = await startNatsServer({ binary, storeDir })
    // The server is stopped when this process exits (see startNatsServer); its store goes too.
    const removeStore = () => fs.rmSync(storeDir, { recursive: true, force: true })
    process.once('exit', removeStore)
    const current = natsServer
    return {
      ...server,
      async stop() {
        if (natsServer === current) natsServer = undefined
        // The server's child process does not keep this process alive (see startNatsServer),
        // so while waiting for it to exit something else must, or the event loop would drain
        // under the test that waits.
        const keepAlive = setInterval(() => {}, 60_000)
        try {
          await server.stop()
        } finally {
          clearInterval(keepAlive)
        }
        process.removeListener('exit', removeStore)
        removeStore()
      },
    }
  })()
  return natsServer
}

export interface TestBank {
  /** The authority set-up's files and server, with `natsAuthority`. */
  authority?: AuthorityNats | undefined
  /** With `natsAuthority: 'bank'`: partners' clients send on `nc`, a user of the bank's account. */
  partnersShareTestConnection?: boolean
  /** A connection as a partner, with a creds file the bank issued (needs `natsAuthority`). */
  partnerConnection(creds: string): Promise<NatsConnection>
  bank: Bank
  config: Config
  clock: ManualClock
  natsUrl: string
  nc: NatsConnection
  operator: OperatorClient
  operatorToken: string
  /** Stop the service and start it again on the same storage (needs persistent storage). */
  restart(): Promise<void>
  stop(): Promise<void>
}

export interface TestBankOptions {
  clock?: ManualClock
  /** The clock job leases are measured on (the system clock unless given). */
  wallClock?: ManualClock
  env?: Record<string, string>
  /**
   * Run NATS as production does: the bank is the NATS authority (`bank nats init` into a
   * directory of the test's), its own nats-server started on the configuration written
   * there, over TLS; the bank connects with bank.creds, `nc` and `operator` with
   * operator.creds, and each onboarded partner with the creds file it was issued.
   */
  natsAuthority?: boolean | 'bank'
  /*
   * `'bank'`: the same set-up, but `nc` (and so `operator`, and each partner's client) is a
   * user of the bank's own account, as the bank's own tools would be: requests from there
   * carry no calling account, so suites that send as any partner on one connection (the
   * auth matrix, the fuzzing) test the bank's own checks as before, while each partner's
   * `nc` is still its own account's (its dropboxes are there).
   */
  /**
   * Keep the storage where a restart finds it again: PGlite on disk rather than in memory.
   * Without it restart() fails, on both back ends alike. startTestBank() defaults to true,
   * useTestBank() to false.
   */
  persistent?: boolean
}

/** Starts a test bank now; the caller stops it. Most files want useTestBank() instead. */
export async function startTestBank(options: TestBankOptions = {}): Promise<TestBank> {
  const persistent = options.persistent ?? true
  const [nats, database, pglite, seed] = await storesOf(persistent)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-data-'))
  const config = testConfig(dataDir, database?.store.url, options.env)
  const clock = options.clock ?? new ManualClock('2026-11-23T08:00:00Z')
  const pgliteDir = persistent ? undefined : 'memory://'
  const authority = options.natsAuthority
    ? await startAuthorityNats(config, dataDir, { databaseUrl: database?.store.url,
      pglite: pglite?.store, pgliteDir: pgliteDir ?? pgliteDirFor(dataDir), pgliteSeed: seed })
    : undefined
  const natsUrl = authority?.url ?? nats.url
  if (authority) Object.assign(config, { natsAuth: authority.bankLogin })
  const start = bankStarter({
    config, clock, log: createLogger(config.logLevel), natsUrl, pgliteDir, seed, open: !authority,
    pglite: pglite?.store, wallClock: options.wallClock,
  })
  let bank = await start()
  const operatorToken = bank.bootstrapToken
  if (!operatorToken) throw new Error(
    'a fresh test bank should have created an operator credential')
  const nc = await testConnection(natsUrl, authority, options.natsAuthority)
  const operator =
    new OperatorClient({ connection: nc, token: operatorToken, timeoutMs: test_request_timeout_ms })
  const partnerConnections: NatsConnection[] = []
  let stopped: Promise<void> | undefined
  const testBank: TestBank = {
    bank, config, clock, natsUrl, nc, operator, operatorToken, authority,
    partnersShareTestConnection: options.natsAuthority === 'bank',
    partnerConnection: (creds: string) =>
      partnerConnectionOf(authority, natsUrl, creds, partnerConnections),
    async restart() {
      if (!persistent) throw new Error(
        'restart() needs persistent storage: useTestBank({ persistent: true })')
      await bank.stop()
      bank = await start()
      testBank.bank = bank
    },
    stop: () => (stopped ??= (async () => {
      await nc.close()
      await Promise.all(partnerConnections.map((c) => c.close().catch(() => {})))
      await bank.stop()
      await authority?.stop()
      await database?.release()
      await pglite?.release()
      fs.rmSync(dataDir, { recursive: true, force: true })
    })()),
  }
  return testBank
}

/**
 * Starts the bank, each time on the same store: the seed fills an empty store only, so a
 * restart opens what the first start left.
 */
function bankStarter(o: { config: Config; clock: Clock; log: Logger; natsUrl: string
  pgliteDir: string | undefined; seed: Parameters<typeof startBank>[0]['pgliteSeed']
  open: boolean; pglite: Parameters<typeof startBank>[0]['pglite']; wallClock?: Clock }) {
  let pgliteSeedOnce = o.seed
  return async () => {
    const started = await startBank({
      config: o.config, clock: o.clock, log: o.log, natsUrl: o.natsUrl, pgliteDir: o.pgliteDir,
      pgliteSeed: pgliteSeedOnce, validateResponses: true,
      // Tests of production rules on the process's open server; the authority's is the real set-up.
      allowOpenNats: o.open,
      ...(o.pglite ? { pglite: o.pglite } : {}),
      ...(o.wallClock ? { wallClock: o.wallClock } : {}),
    })
    pgliteSeedOnce = undefined
    return started
  }
}

/**
 * The NATS server and the store: an in-memory PGlite, or a PostgreSQL database, comes from this
 * process's pool of stores (store-pool.ts); an on-disk PGlite, which a restart must find again,
 * starts from the seed.
 */
function storesOf(persistent: boolean) {
  return Promise.all([
    testNats(),
    storage === 'postgres' ? leasePostgresDatabase() : undefined,
    storage === 'pglite' && !persistent ? leasePglite() : undefined,
    storage === 'pglite' && persistent ? pgliteSeed() : undefined,
  ])
}

/** A test bank's settings: its data directory and database, and the test's own `env`. */
function testConfig(dataDir: string, databaseUrl: string | undefined,
  env: Record<string, string> | undefined) {
  return loadConfig({
    BANK_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BANK_TEST_LOG_LEVEL ?? 'silent',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    BANK_DB_POOL_MAX: '5',
    BANK_CLEARING_SCHEDULE: 'off',
    // Test banks are sandboxes on both back ends alike (the injected clock is the bank's
    // time and ops.sandbox.* answers); a file testing production passes BANK_SANDBOX=false.
    BANK_SANDBOX: 'true',
    // The sandbox's default folder, set: production starts only with a rail configured
    // (src/config.ts); a second instance of the bank reuses this config, so shares the folder.
    BANK_RAIL_DIR: path.join(dataDir, 'rail'),
    // Request budgets far above what any suite sends (the fuzz, property and load tests send
    // thousands of requests a second through one credential); test/limits sets its own.
    BANK_RATE_PER_SECOND: '1000000',
    BANK_RATE_BURST: '10000000',
    ...env,
  })
}

/** The test's own NATS connection: on the authority's server as the bank or an operator. */
async function testConnection(natsUrl: string, authority: AuthorityNats | undefined,
  as: TestBankOptions['natsAuthority']): Promise<NatsConnection> {
  const testLogin = authority ? (as === 'bank' ? authority.bankLogin
    : authority.operatorLogin) : undefined
  return connect({ servers: natsUrl, ...(testLogin ? natsConnectOptions(testLogin) : {}) })
}

/** A partner's own connection (its creds file) to the authority's server; closed at stop. */
async function partnerConnectionOf(authority: AuthorityNats | undefined, natsUrl: string,
  creds: string, connections: NatsConnection[]): Promise<NatsConnection> {
  if (!authority) throw new Error(
    'partnerConnection() needs useTestBank({ natsAuthority: true })')
  const connection = await connect({
    servers: natsUrl, ...natsConnectOptions({ tls: { caFile: authority.caFile } }),
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
  })
  connections.push(connection)
  return connection
}

/** A file's test bank, as useTestBank() returns it. */
export interface TestBankHandle extends TestBank {
  /** Resolves once the bank has started; a `before` hook of the file awaits it first. */
  ready: Promise<TestBank>
}

/**
 * Declares this file's test bank: started in a `before` hook, stopped in an `after` hook.
 * Call it at the top level of a test file (or of a describe). The handle's fields may be used
 * in tests; a `before` hook of the file must first `await tb.ready`, because Node 20 starts
 * top-level `before` hooks as they are registered, without waiting for the one before.
 */
export function useTestBank(options: TestBankOptions = {}): TestBankHandle {
  let current: TestBank | undefined
  let settle!: { resolve(bank: TestBank): void; reject(error: unknown): void }
  const ready = new Promise<TestBank>((resolve, reject) => (settle = { resolve, reject }))
  // Whoever needs the bank awaits `ready`; the hook below reports a failed start.
  ready.catch(() => {})
  const started = (): TestBank => {
    if (!current) throw new Error(
      'the test bank has not started yet: in a before hook, `await tb.ready` first')
    return current
  }
  before(async () => {
    try {
      current = await startTestBank({ ...options, persistent: options.persistent ?? false })
      settle.resolve(current)
    } catch (error) {
      settle.reject(error)
      throw error
    }
  })
  after(async () => {
    await current?.stop()
  })
  return {
    ready,
    get bank() { return started().bank },
    get config() { return started().config },
    get clock() { return started().clock },
    get natsUrl() { return started().natsUrl },
    get nc() { return started().nc },
    get operator() { return started().operator },
    get operatorToken() { return started().operatorToken },
    get authority() { return started().authority },
    get partnersShareTestConnection() { return started().partnersShareTestConnection },
    partnerConnection: (creds: string) => started().partnerConnection(creds),
    restart: () => started().restart(),
    stop: () => started().stop(),
  }
}

export interface TestPartner {
  partnerId: string
  rootEntityId: string
  credentialId: string
  token: string
  /** The NATS credentials file issued at onboarding (null on an open server). */
  natsCreds: string | null
  /** The partner's NATS connection: its own with the authority, else the test's. */
  nc: NatsConnection
  client: BankClient
}

/**
 * Each onboarded partner's root entity, for suites that send on `<entity_id>` subjects by partner.
 */
export const partnerRootEntities = new Map<string, string>()

/** Onboards a partner through the operator interface; `approve` also approves its root entity. */
export async function onboardPartner(tb: TestBank,
    options: { approve?: boolean } = {}): Promise<TestPartner> {
  const root = businessEntity()
  const created = await tb.operator.partners.create({
    name: root.name,
    email: root.email,
    registration_number: root.registration_number,
    trading_name: root.trading_name,
  })
  if (options.approve) await tb.operator.entities.review({ entity_id: created.root_entity_id,
    decision: 'approve' })
  partnerRootEntities.set(created.partner_id, created.root_entity_id)
  // With the NATS authority, the partner calls through its own account, with the creds it was
  // issued.
  const connection = tb.authority && created.nats_creds
    ? await tb.partnerConnection(created.nats_creds) : tb.nc
  return {
    partnerId: created.partner_id,
    rootEntityId: created.root_entity_id,
    credentialId: created.credential.id,
    token: created.credential.token,
    natsCreds: created.nats_creds,
    nc: connection,
    client: new BankClient({
      connection: tb.partnersShareTestConnection ? tb.nc : connection,
      token: created.credential.token,
      partnerId: created.partner_id,
      timeoutMs: test_request_timeout_ms,
    }),
  }
}

/**
 * Two approved partners, A and B, on the bank (each on its own NATS account with
 * `natsAuthority`), and a business entity of B's beside its root: the hostile-partner suites.
 */
export async function twoPartners(tb: TestBankHandle): Promise<{ a: TestPartner; b: TestPartner
    bEntity: string }> {
  await tb.ready
  const [a, b] = await Promise.all([onboardPartner(tb, { approve: true }),
    onboardPartner(tb, { approve: true })])
  return { a, b, bEntity: (await b.client.entities.create(businessEntity())).id }
}

/**
 * A second operator (the checker of dual control): a credential of its own, and a client that
 * calls as it.
 */
export async function secondOperator(tb: TestBank): Promise<{ id: string; token: string
    client: OperatorClient }> {
  const issued = await tb.bank.services.credentials.issue(tb.bank.database.db,
    { partnerId: null, permissions: [], label: 'checker' })
  return { id: issued.id, token: issued.token, client: new OperatorClient({ connection: tb.nc,
    token: issued.token, timeoutMs: test_request_timeout_ms }) }
}

export function clientFor(tb: TestBank, partnerId: string, token: string): BankClient {
  return new BankClient({ connection: tb.nc, token, partnerId, timeoutMs: test_request_timeout_ms })
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
  /** The connection to send on: the test's, unless a partner's own (with `natsAuthority`). */
  connection: NatsConnection = tb.nc,
): Promise<RawReply> {
  const h = natsHeaders()
  if (auth.token !== undefined) h.set('token', auth.token)
  if (auth.authorization !== undefined) h.set('Authorization', auth.authorization)
  const options = { timeout: test_request_timeout_ms, headers: h }
  const reply = await connection.request(subject, data, options)
  const headers: Record<string, string> = {}
  for (const key of reply.headers?.keys() ?? []) headers[key] = reply.headers!.get(key)
  const text = new TextDecoder().decode(reply.data)
  return { code: Number(headers['Nats-Service-Error-Code'] ?? 200), body: text ? JSON.parse(text)
    : undefined, headers }
}

/**
 * Another instance of the test bank (PostgreSQL only: instances share a store): the same
 * settings, bank clock and NATS server, its job runner stopped so that the test decides
 * what runs where. The test stops it.
 */
export async function startSecondInstance(tb: TestBank): Promise<Bank> {
  const second = await startBank({
    config: tb.config,
    clock: tb.clock,
    log: createLogger('silent'),
    natsUrl: tb.natsUrl,
    validateResponses: true,
  })
  await second.services.jobRunner.stop()
  return second
}

/**
 * A second instance for the enclosing suite (PostgreSQL only), started before its tests and
 * stopped after them; the getter answers it inside a test.
 */
export function useSecondInstance(tb: TestBankHandle): () => Bank {
  let second: Bank | undefined
  before(async () => {
    await tb.ready
    second = await startSecondInstance(tb)
  })
  after(async () => {
    await second?.stop()
  })
  return () => {
    if (!second) throw new Error('the second instance is not started')
    return second
  }
}
