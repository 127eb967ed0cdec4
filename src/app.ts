import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node'
import { sql, type Kysely } from 'kysely'
import type { Clock } from './clock.ts'
import type { Config } from './config.ts'
import { allOperations, subscriptionSubject } from './contract/index.ts'
import { openDatabase, pgliteDirFor, type DatabaseHandle } from './db/database.ts'
import { migrations } from './modules.ts'
import type { Database } from './schema.ts'
import { owner_only_dir_mode, owner_only_file_mode } from './data-dir.ts'
import type { Logger } from './logger.ts'
import { sandboxClockFor } from './sandbox/sandbox-clock.ts'
import { createServices, type Services } from './services.ts'
import { NatsDropbox } from './kyc/dropbox.ts'
import { NatsIdentity } from './nats-identity/nats-identity.ts'
import { natsIsolationProblem, open_nats_warning } from './nats-identity/nats-isolation.ts'
import { serversStorage, watchJetStreamQuota } from './nats-identity/jetstream-quota.ts'
import { card_decider_role, decisionTransport, partnerLinks, PartnerConnections, openSystemLink } from './nats-identity/nats-links.ts'
import { requestOrigin } from './nats-identity/request-origin.ts'
import { SecretBox } from './secrets/secret-box.ts'
import { serveMetrics } from './metrics/bank-metrics.ts'
import type { ReadinessCheck } from './metrics/readiness.ts'
import { serveConsole } from './console/console-server.ts'
import { natsConnectOptions, natsServerList } from './nats/nats-connect.ts'
import { wrapEndpoint } from './transport/nats/endpoint.ts'
import { unboundOperations } from './transport/nats/endpoint-table.ts'
import { endpointsOf, migrationsOf, undeclared, type Module } from './module.ts'
import { modules } from './modules.ts'
import { MicroService } from './transport/nats/micro.ts'
import { unknownSubjectFallback } from './transport/nats/unknown-subject.ts'

export const serviceVersion = '0.1.0'
const credentialRevokedSubject = 'bank.internal.credential.revoked'
const cardDecisionsChangedSubject = 'bank.internal.card.decisions.changed'

export interface BankOptions {
  config: Config
  clock: Clock
  log: Logger
  natsUrl: string
  /**
   * The clock job leases and request budgets are measured on (the system clock unless a test
   * controls it); `clock` is the bank's time, which the sandbox moves forward.
   */
  wallClock?: Clock
  /** PGlite directory override (tests use `memory://`). */
  pgliteDir?: string
  /**
   * A dump of a PGlite data directory (`PGlite.dumpDataDir`) to start an empty store from,
   * instead of creating the cluster afresh; tests start each bank from one already migrated.
   */
  pgliteSeed?: Blob
  /** An open PGlite for the bank to use and leave open when it stops (tests reuse one per file). */
  pglite?: PGlite
  validateResponses?: boolean
  /**
   * Start in production on an open NATS server. Only for tests of production rules that
   * have nothing to do with NATS (the hostile-partner suite runs the real set-up); main.ts
   * never sets it, so a deployment cannot.
   */
  allowOpenNats?: boolean
  /**
   * The capabilities to run (src/modules.ts unless given): tests start a bank with a fixture
   * module added, as adding its line to src/modules.ts would.
   */
  modules?: readonly Module[]
}

export interface Bank {
  services: Services
  database: DatabaseHandle<Database>
  nc: NatsConnection
  micro: MicroService
  /** The operator token created on first start, if this start created one. */
  bootstrapToken: string | undefined
  /** The port Prometheus metrics are served on (BANK_METRICS_PORT), when they are. */
  metricsPort: number | undefined
  /** The port the operators' web console is served on (BANK_CONSOLE_PORT), when it is. */
  consolePort: number | undefined
  stop(): Promise<void>
}

// Starts one instance of the service: storage (with migrations), services, and the NATS
// micro service in its queue group. Many instances may run against one PostgreSQL.
export async function startBank(options: BankOptions): Promise<Bank> {
  const { config, log } = options
  const { database, sandboxClock, clock } = await openStore(options)
  const { secretBox, identity, tls, nc } = await connectNats(options, database, clock)
  const links = partnerLinksOf(identity, options.natsUrl, tls, nc)
  const services = createServices(options.modules ?? modules, database.db, clock, config, log, {
    sandboxClock, wallClock: options.wallClock, dropbox: links.dropbox, secretBox,
    natsIdentity: identity, cardDecisions: links.cardDecisions,
  })
  const systemLink = identity
    ? await linkSystemAccount(identity, options.natsUrl, tls, log).catch(async (error: unknown) => {
        await nc.close()
        await database.close()
        throw error
      })
    : undefined
  if (!identity) log.warn(open_nats_warning)
  const bootstrapToken = config.bootstrapOperator
    ? await bootstrapOperator(database, services, config, log).catch(async (error: unknown) => {
        await nc.close()
        throw error
      })
    : undefined

  void watchConnection(nc, log)
  shareAcrossInstances(nc, services)
  const metadata = instanceMetadata(options, database.storage)
  const { micro, endpoints } = endpointService(options, { nc, services, identity, metadata })
  // The partners' JetStream quotas against the servers', for `bank status` (jetstream-quota.ts).
  const stopQuota = systemLink
    ? watchJetStreamQuota(systemLink, services.natsLimits, metadata, log) : undefined
  micro.start()
  await nc.flush()
  const servers = await serveHttp(config, { services, nc, db: database.db }, log)
  services.jobRunner.start()
  logStarted(options, { storage: database.storage, endpoints, now: clock.now() })
  const stop = stopOnce(async () => {
    // The service leaves the queue group first, at once: the caller may rely on that
    // having been sent when stop() returns its promise (the lifecycle tests flush after it).
    await micro.stop(config.shutdownGraceMs)
    stopQuota?.()
    await servers.closeConsole()
    await servers.closeMetrics()
    await services.jobRunner.stop()
    await links.dropboxConnections?.close()
    await links.deciders?.close()
    await systemLink?.close().catch(() => {})
    await nc.drain().catch(() => nc.close())
    await database.close()
    log.info('bank stopped')
  })
  return { services, database, nc, micro, bootstrapToken, metricsPort: servers.metricsPort,
    consolePort: servers.consolePort, stop }
}

function logStarted({ config, log, natsUrl }: BankOptions, started: {
  storage: string; endpoints: number; now: Date }) {
  log.info(
    { storage: started.storage, nats: natsUrl, endpoints: started.endpoints,
      sandbox: config.sandbox, now: started.now.toISOString() },
    config.sandbox
      ? 'bank started in sandbox mode (ops.sandbox.* answered; the clock may be moved forward)'
      : 'bank started in production mode (ops.sandbox.* refused)',
  )
  // Production with only one of its two rails configured (src/config.ts, railWarnings).
  for (const warning of config.railWarnings) log.warn(warning)
}

/** `stop` run once, however often it is called: every call gets the same promise. */
function stopOnce(stop: () => Promise<void>): () => Promise<void> {
  let stopped: Promise<void> | undefined
  return () => (stopped ??= stop())
}

/** The store (migrated), and the bank's clock: in the sandbox, moved by the shared offset. */
async function openStore(options: BankOptions) {
  const { config } = options
  const database = await openDatabase<Database>({
    migrations: options.modules ? migrationsOf(options.modules) : migrations,
    databaseUrl: config.databaseUrl,
    pgliteDir: options.pgliteDir ?? pgliteDirFor(config.dataDir),
    pgliteSeed: options.pgliteSeed,
    pglite: options.pglite,
    poolMax: config.dbPoolMax,
    bounds: config.dbBounds,
  })
  // In the sandbox the bank's time is the given clock moved forward by the shared offset.
  const sandboxClock = config.sandbox ? sandboxClockFor(database.db, options.clock) : undefined
  await sandboxClock?.refresh()
  return { database, sandboxClock, clock: sandboxClock ?? options.clock }
}

/**
 * The bank's NATS connection, after its isolation is checked: as the NATS authority of its
 * partners (`bank nats init`) when it is one. The store is closed when this fails.
 */
async function connectNats(options: BankOptions, database: DatabaseHandle<Database>,
    clock: Clock) {
  const { config } = options
  const secretBox = new SecretBox({ key: config.secretsKey, dataDir: config.dataDir })
  const login = natsConnectOptions(config.natsAuth)
  const tls = login.tls ? { tls: login.tls } : {}
  const identity = await NatsIdentity.load(database.db, secretBox, clock).catch(
      async (error: unknown) => {
    await database.close()
    throw error
  })
  const problem = await natsIsolationProblem({ config, identity, servers: options.natsUrl, tls,
    allowOpen: options.allowOpenNats === true })
  if (problem) {
    await database.close()
    throw new Error(problem)
  }
  const nc = await connect({
    servers: natsServerList(options.natsUrl),
    name: `${config.serviceName}-${process.pid}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    ...login,
  }).catch(async (error: unknown) => {
    // Nothing else holds the store open: close it, or the process would never end.
    await database.close()
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`cannot connect to NATS at ${options.natsUrl}: ${reason}` +
      natsLoginHint(error))
  })
  return { secretBox, identity, tls, nc }
}

/** Where the bank reaches partners: their KYC/KYB dropboxes and their card deciders. */
function partnerLinksOf(identity: NatsIdentity | undefined, natsUrl: string,
    tls: Partial<ConnectionOptions>, nc: NatsConnection) {
  // The partners' KYC/KYB dropboxes are JetStream Object Store buckets: in each partner's
  // own NATS account when the bank is the authority, else on the one open account.
  const dropboxConnections = identity ? new PartnerConnections(identity, natsUrl, tls)
    : undefined
  const dropbox = new NatsDropbox(dropboxConnections ? dropboxConnections.of : async () => nc)
  // Partners' card decisions are asked likewise: in the partner's account, else on the open one.
  const deciders = partnerLinks(identity, natsUrl, tls, card_decider_role)
  const cardDecisions = decisionTransport(deciders, nc)
  return { dropboxConnections, dropbox, deciders, cardDecisions }
}

/** What every instance's caches hear from the others. */
function shareAcrossInstances(nc: NatsConnection, services: Services) {
  // Revocations reach every instance's credential cache at once (see CredentialStore).
  nc.subscribe(credentialRevokedSubject,
    { callback: (_error, msg) => services.credentials.forget(msg.string()) })
  services.credentials.onRevoked = (credentialId) => nc.publish(credentialRevokedSubject,
    credentialId)
  // So do changes of a partner's card decision subject (see PartnerDecisions).
  nc.subscribe(cardDecisionsChangedSubject, { callback: () => services.cardDecisions.forget() })
  services.cardDecisions.onChanged = () => nc.publish(cardDecisionsChangedSubject)
}

/**
 * What the instance's `$SRV.INFO` shows of it (its storage, store and mode; the partners'
 * JetStream quotas join it when the bank is the NATS authority).
 */
function instanceMetadata({ config, pgliteDir }: BankOptions,
    storage: string): Record<string, string> {
  return { storage, store: storeIdentity(config, pgliteDir), sandbox: String(config.sandbox) }
}

/**
 * The micro service with an endpoint for every operation (not started); throws when an
 * operation has no handler or the modules and the services disagree.
 */
function endpointService(options: BankOptions, { nc, services, identity, metadata }: {
  nc: NatsConnection; services: Services; identity: NatsIdentity | undefined
  metadata: Record<string, string> }) {
  const { config, log } = options
  const micro = new MicroService(
    nc,
    {
      name: config.serviceName,
      version: serviceVersion,
      description: 'Partner banking service',
      queue: config.queueGroup,
      metadata,
    },
    (error) => log.error({ err: error }, 'endpoint wrapper fault'),
  )
  const list = options.modules ?? modules
  const table = endpointsOf(list, services)
  const missing = unboundOperations(table, allOperations())
  if (missing.length > 0) throw new Error(
    `operations without a handler: ${missing.map((o) => o.name).join(', ')}`)
  const problems = undeclared(list, {
    jobKinds: services.jobRunner.kindNames(),
    subscriptions: services.events.patterns(),
  })
  if (problems.length > 0) throw new Error(`modules and services disagree: ${problems.join('; ')}`)
  const deps = {
    credentials: services.credentials,
    entityPartner: (id: string) => services.entities.partnerOf(id),
    log,
    requestBytesMax: config.requestBytesMax,
    validateResponses: options.validateResponses ?? false,
    sandbox: config.sandbox,
    metrics: services.metrics,
    origin: identity ? requestOrigin(identity) : undefined,
    limiter: services.limiter,
    audit: services.audit,
  }
  for (const entry of table) {
    const op = entry.operation
    micro.addEndpoint(op.name, subscriptionSubject(op), wrapEndpoint(entry, deps), {
      permission: op.permission,
    })
  }
  // Subjects no operation serves are answered 404 at once (transport/nats/unknown-subject.ts).
  micro.setFallback(unknownSubjectFallback(deps))
  return { micro, endpoints: table.length }
}

/**
 * The instance's HTTP servers, each when its port is set: Prometheus metrics, and the
 * operators' console (a client of the ops. subjects on this instance's NATS connection).
 */
async function serveHttp(config: Config, parts: { services: Services; nc: NatsConnection
    db: Kysely<Database> }, log: Logger) {
  const { metrics, console: web } = config
  const { services, nc } = parts
  const metricsServer = metrics
    ? await serveMetrics(services.metrics, metrics.host, metrics.port, log,
      { readiness: readinessChecks(parts) })
    : undefined
  const consoleServer = web ? await serveConsole({ ...web, connection: nc, log }) : undefined
  return {
    metricsPort: metricsServer?.port,
    consolePort: consoleServer?.port,
    closeConsole: async () => consoleServer?.close(),
    closeMetrics: async () => metricsServer?.close(),
  }
}

/** What `/readyz` asks (metrics/readiness.ts): a query, a NATS ping, the job runner's polling. */
function readinessChecks({ services, nc, db }: { services: Services; nc: NatsConnection
    db: Kysely<Database> }): Record<string, ReadinessCheck> {
  return {
    database: async () => {
      await sql`select 1`.execute(db)
    },
    nats: async () => {
      if (nc.isClosed()) throw new Error('the connection is closed')
      await nc.rtt()
    },
    job_runner: async () => {
      const problem = services.jobRunner.readiness()
      if (problem) throw new Error(problem)
    },
  }
}

/**
 * Names the storage an instance serves from, without secrets: instances of one bank share
 * one PostgreSQL database; an embedded PGlite store belongs to one process on one host.
 */
export function storeIdentity(config: Config, pgliteDir?: string): string {
  let source: string
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl)
    source = `postgres:${url.hostname}:${url.port || '5432'}${url.pathname}`
  } else {
    source = `pglite:${os.hostname()}:${path.resolve(pgliteDir ?? pgliteDirFor(config.dataDir))}`
  }
  return createHash('sha256').update(source).digest('hex').slice(0, 16)
}

async function watchConnection(nc: NatsConnection, log: Logger): Promise<void> {
  for await (const status of nc.status()) {
    if (status.type === 'disconnect' || status.type === 'reconnect') log.warn({ nats: status.type },
      'NATS connection changed')
  }
}

/**
 * On the first start of a bank, create an operator credential and write it to
 * `<data dir>/operator-token` (mode 0600) for the CLI. An advisory lock keeps two
 * instances starting together from both creating one.
 */
async function bootstrapOperator(database: DatabaseHandle<Database>, services: Services,
    config: Config, log: Logger) {
  const token = await database.db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(727001)`.execute(trx)
    if (await services.credentials.hasOperator(trx)) return undefined
    return (await services.credentials.issue(trx, { partnerId: null, permissions: [],
      label: 'bootstrap' })).token
  })
  if (!token) return undefined
  saveOperatorToken(config.dataDir, token, storeIdentity(config), log)
  return token
}

/**
 * Writes a new store's first operator token for the CLI: to `<data dir>/operator-token`,
 * unless that file exists — it then holds the credential of another store (the same
 * directory once started on PGlite, now on PostgreSQL, or the reverse), and overwriting it
 * would lock the operator out of that one. The new token goes beside it, in
 * `operator-token-<store>`, and the log says how to use it. Resolves with the file written.
 */
export function saveOperatorToken(dataDir: string, token: string, store: string,
    log: Logger): string {
  fs.mkdirSync(dataDir, { recursive: true, mode: owner_only_dir_mode })
  const usual = path.join(dataDir, 'operator-token')
  try {
    fs.writeFileSync(usual, `${token}\n`, { mode: owner_only_file_mode, flag: 'wx' })
    log.info({ file: usual },
      'created the first operator credential; the CLI reads it from this file')
    return usual
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const beside = path.join(dataDir, `operator-token-${store}`)
  fs.writeFileSync(beside, `${token}\n`, { mode: owner_only_file_mode })
  log.warn(
    { file: beside, kept: usual },
    `created this store's first operator credential; ${usual} belongs to another store and was ` +
      `kept. Use this one with BANK_OPERATOR_TOKEN=$(cat ${beside}) npx bank …`,
  )
  return beside
}

/**
 * Connects to the system account and brings the servers' resolver up to date: accounts of
 * partners onboarded before `bank nats init` are made, and every account is pushed.
 */
async function linkSystemAccount(identity: NatsIdentity, servers: string,
    tls: Partial<ConnectionOptions>, log: Logger): Promise<NatsConnection> {
  const link = await openSystemLink(identity, servers, tls, log).catch((error: unknown) => {
    throw new Error(`cannot connect to the NATS system account ` +
      `at ${servers}: ${error instanceof Error ? error.message : String(error)} (is the server ` +
      `running the configuration \`bank nats init\` wrote?)`)
  })
  try {
    // Partners onboarded before `bank nats init` get their accounts even past the servers'
    // JetStream storage (`bank status` then warns); from here on, onboarding and raised quotas
    // are held to it (jetstream-quota.ts).
    const made = await identity.ensurePartnerAccounts()
    const pushed = await identity.publishAll()
    identity.storage = () => serversStorage(link)
    log.info({ accounts_made: made, accounts_pushed: pushed, bank_account: identity.bankAccount },
      'the bank is the NATS authority: partners are walled off in accounts of their own')
    return link
  } catch (error) {
    await link.close()
    throw error
  }
}

/** What to check when NATS refused the login. */
function natsLoginHint(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return /authori[sz]ation|authentication|permission/i.test(message)
    ? ' (the server wants a login: set NATS_CREDS, NATS_NKEY, NATS_USER and NATS_PASSWORD, or ' +
      'NATS_TOKEN)'
    : ''
}
