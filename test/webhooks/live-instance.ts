import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { Webhook } from 'standardwebhooks'
import type { Database } from '../../src/schema.ts'
import { EventDispatcher } from '../../src/events/index.ts'
import { JobRunner } from '../../src/jobs/job-runner.ts'
import { createLogger } from '../../src/logger.ts'
import { SecretBox } from '../../src/secrets/secret-box.ts'
import { WebhookSecrets } from '../../src/webhooks/webhook-secrets.ts'
import { HttpWebhookSender } from '../../src/webhooks/webhook-sender.ts'
import { WebhookService } from '../../src/webhooks/webhook-service.ts'
import type { WebhookLimits } from '../../src/webhooks/webhook-limits.ts'
import { storage, type TestBank } from '../support/harness.ts'

// Live delivery for webhook tests (and bench/): instances of the bank's delivery on a test
// bank's database (job runner, outbox dispatcher, webhook service, HTTP sender) polling on
// their own, and real receivers on 127.0.0.1: answering ones, which check each signature
// as a partner's would, and hanging ones, which accept every request and never answer.
// Whatever these start is pushed on `cleanups`, for the test to stop newest first.

const log = createLogger('silent')

/** What a test started and must stop: receivers, instances. */
export const cleanups: Array<() => Promise<void>> = []

/** Stops what the test started, newest first. */
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
}

export interface Arrival {
  id: string
  body: { type: string; data: { payment_id?: string } }
}

/** A receiver that answers 200 to every webhook its partner's secret verifies. */
export async function answeringReceiver(secret: string) {
  const arrivals: Arrival[] = []
  const waiters: Array<() => void> = []
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const header = (name: string) => String(request.headers[name] ?? '')
      const body = new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      }) as Arrival['body']
      arrivals.push({ id: header('webhook-id'), body })
      response.writeHead(200).end('ok')
      for (const wake of waiters.splice(0)) wake()
    })
  })
  const url = await listen(server)
  cleanups.push(() => closeServer(server))
  return {
    url,
    arrivals,
    /** Resolves once every one of these event ids has arrived. */
    async all(ids: string[]): Promise<void> {
      while (!ids.every((id) => arrivals.some((a) => a.id === id))) await new Promise<void>(
        (resolve) => waiters.push(resolve))
    },
  }
}

/** A receiver that accepts every request and never answers, until end() closes them all. */
export async function hangingReceiver() {
  const state = { open: 0, openMax: 0, received: 0, ended: 0 }
  const waiters: Array<() => void> = []
  const server = http.createServer((request, response) => {
    state.received++
    state.open++
    state.openMax = Math.max(state.openMax, state.open)
    response.on('close', () => {
      state.open--
      state.ended++
    })
    request.resume()
    for (const wake of waiters.splice(0)) wake()
  })
  const url = await listen(server)
  let ended = false
  const end = async () => {
    if (ended) return
    ended = true
    server.closeAllConnections()
    await closeServer(server)
  }
  cleanups.push(end)
  return {
    url,
    state,
    /** Resolves once a request is being held open. */
    async holding(): Promise<void> {
      while (state.open === 0) await new Promise<void>((resolve) => waiters.push(resolve))
    },
    end,
  }
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`)),
  )
}

function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

/**
 * An instance of the bank's delivery on the test bank's database: its own job runner (with
 * the bank's settings), outbox dispatcher and webhook service. With `ownPool` on PostgreSQL
 * it has a connection pool of its own, as another process would; PGlite is one connection,
 * shared one transaction at a time.
 */
export function startInstance(tb: TestBank, limits: WebhookLimits,
    options: { ownPool: boolean }): Instance {
  let db = tb.bank.database.db
  if (options.ownPool && storage === 'postgres') {
    const pool = new pg.Pool({ connectionString: tb.config.databaseUrl, max: 3 })
    // pool.end() resolves before its sockets close: a late error from them is nobody's concern.
    pool.on('error', () => {})
    const own = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    cleanups.push(() => own.destroy())
    db = own
  }
  const runner = new JobRunner(db, tb.clock, log, { poll_ms: tb.config.jobsPollMs,
    concurrency_max: tb.config.jobsConcurrencyMax })
  const events = new EventDispatcher(db)
  let ticks = 0
  const waiters: Array<() => void> = []
  // The runner hands events over once per tick: counting those calls counts its ticks.
  runner.dispatchEventsWith({
    batchLimit: events.batchLimit,
    dispatchPending: async () => {
      ticks++
      for (const wake of waiters.splice(0)) wake()
      return events.dispatchPending()
    },
  })
  const secrets = new WebhookSecrets(db, tb.clock,
    new SecretBox({ key: tb.config.secretsKey, dataDir: tb.config.dataDir }))
  const webhooks = new WebhookService(db, tb.clock, runner, events, secrets,
    new HttpWebhookSender({ timeout_ms: limits.attempt_timeout_ms }), { sandbox: true, limits })
  runner.start()
  cleanups.push(() => runner.stop())
  return {
    webhooks,
    async nextTicks(count) {
      const target = ticks + count
      while (ticks < target) await new Promise<void>((resolve) => waiters.push(resolve))
    },
  }
}

export interface Instance {
  webhooks: WebhookService
  /** Resolves once the instance's runner has ticked `count` more times. */
  nextTicks: (count: number) => Promise<void>
}
