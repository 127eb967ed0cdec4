// `node --import tsx bench/micro.ts`: micro-benchmarks of the payment path's per-request and
// per-row steps, in one process, without NATS or a database. Each prints CPU µs per
// operation (process.cpuUsage over many repetitions, after a warm-up; the median of five
// rounds). Made to compare versions of these steps (docs/performance.md, the sixth
// round); the figures differ from hour to hour on a shared machine, so compare runs made
// side by side. Never part of `npm test`.
//
//   endpoint wrapper   a transfer request through the endpoint wrapper (decode, the text
//                      and null rules, zod, tenancy, reply encoding), the handler answering
//                      at once; and again with the request-origin check the bank makes
//                      when it is the NATS authority (the header's account against the token);
//                      and again with the request budget (src/limits/rate-limiter.ts), its
//                      leases from a bucket in memory instead of the database's
//   rate limiter       the request budget's take alone, per request
//   reply headers      making and encoding a payment reply's status header per message,
//                      against fixed headers (made once)
//   column values      a batch's 96 transaction rows turned into 27 column arrays
//   binary uuids       four uuid columns of 96 rows in PostgreSQL's binary array format
//   fresh row ids      96 new row ids (newRowId) made and written in the binary format, as
//                      a batch does with its rows' ids (each id new, its text not yet read)
//   insert statement   a batch's 96 transaction rows as its `insert … select * from unnest(…)`
//                      statement, built and compiled by Kysely to its text and parameters
//   hash chain         one transaction row's canonical form and SHA-256 link
import { randomUUID } from 'node:crypto'
import { headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/transport-node'
import pino from 'pino'
import { contract } from '../src/contract/index.ts'
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely'
import { arrayParameter, binaryArray, columnValues, insertUnnestStatement, type PgType } from '../src/db/speed/arrays.ts'
import type { Database } from '../src/schema.ts'
import { newRowId } from '../src/ledger/row-id.ts'
import { chainHash } from '../src/ledger/tx-chain.ts'
import { fixedHeaders } from '../src/nats/fixed-headers.ts'
import { endpoint, wrapEndpoint } from '../src/transport/nats/endpoint.ts'
import { requestOrigin } from '../src/nats-identity/request-origin.ts'
import { RateLimiter, rate_limiter_defaults, type TokenSource } from '../src/limits/rate-limiter.ts'
import { systemClock } from '../src/clock.ts'
import { benchPayment } from './payment.ts'

const rounds = 5

/** CPU µs per call of `step` (which does `per` operations), the median of `rounds` rounds. */
async function measure(step: () => unknown, calls: number, per = 1): Promise<number> {
  for (let i = 0; i < Math.min(calls, 2000); i++) await step()
  const results: number[] = []
  for (let r = 0; r < rounds; r++) {
    const start = process.cpuUsage()
    for (let i = 0; i < calls; i++) await step()
    const used = process.cpuUsage(start)
    results.push((used.user + used.system) / calls / per)
  }
  return results.sort((a, b) => a - b)[rounds >> 1]!
}

function report(name: string, us: number, unit: string): void {
  process.stdout.write(`${name.padEnd(34)} ${us.toFixed(2).padStart(8)} µs ${unit}\n`)
}

// The endpoint wrapper, as the service builds it, on the transfer operation.
const partnerId = randomUUID()
const caller = { role: 'partner' as const, credentialId: randomUUID(), label: 'bench', partnerId,
  permissions: new Set(['payments']) }
const wrapperDeps = {
  credentials: { verify: async () => caller } as never,
  entityPartner: async () => undefined,
  log: pino({ level: 'warn' }),
  requestBytesMax: 1 << 20,
  validateResponses: false,
  sandbox: false,
  metrics: { request: () => {} },
}
const wrapped = wrapEndpoint(
  endpoint(contract.transfers.transfer, async (r) => ({ tx_id: newRowId(), amount: String(r.amount),
    status: 'Pending' as const })),
  wrapperDeps,
)
const tokenHeaders = fixedHeaders({ token: 'a'.repeat(43) })
const encoder = new TextEncoder()
const requests = Array.from({ length: 1000 }, () => {
  const body = benchPayment(randomUUID())
  return { subject: `svc.account.${partnerId}.transfer_eft_rtc`,
    data: encoder.encode(JSON.stringify(body)), headers: tokenHeaders } as unknown as Msg
})
let next = 0
report('endpoint wrapper', await measure(() => wrapped(requests[next++ % requests.length]!),
  50_000), 'per request')

// The same with the bank the NATS authority: each request carries the Nats-Request-Info
// header the server adds (about 1.3 kB: it holds the user's JWT), whose account is checked
// against the token's partner (src/nats-identity/request-origin.ts); the account is known.
const account = `A${'B'.repeat(55)}`
const requestInfo = JSON.stringify({
  start: new Date().toISOString(), host: '127.0.0.1', id: 7, acc: account,
    user: `U${'C'.repeat(55)}`, lang: 'nats.js', ver: '3.4.0',
  rtt: 9662469, server: `N${'D'.repeat(55)}`,
    jwt: `eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.${'e'.repeat(900)}.${'s'.repeat(86)}`,
  issuer_key: account, name_tag: 'partner', kind: 'Client', client_type: 'nats',
})
const withOrigin = wrapEndpoint(endpoint(contract.transfers.transfer,
    async (r) => ({ tx_id: newRowId(), amount: String(r.amount), status: 'Pending' as const })), {
  ...wrapperDeps,
  origin: requestOrigin({ operatorsAccount: `A${'O'.repeat(55)}`,
    knownPartnerOfAccount: () => partnerId, partnerOfAccount: async () => partnerId }),
})
const originHeaders = fixedHeaders({ token: 'a'.repeat(43), 'Nats-Request-Info': requestInfo })
const originRequests = requests.map(
  (msg) => ({ subject: msg.subject, data: msg.data, headers: originHeaders }) as unknown as Msg)
report('endpoint wrapper, request origin', await measure(
  () => withOrigin(originRequests[next++ % originRequests.length]!), 50_000), 'per request')

// The same with the request budget, at limits as high as the bench's (bench/run.ts): a lease
// takes 100 ms worth of the rate, so nearly every request spends a token at hand. Leases
// come from a bucket in memory that always has them (in the bank, one upsert each, about
// once a second per credential at these limits).
const benchLimits = { requests_per_second: 1_000_000, burst: 10_000_000 }
const inMemoryTokens: TokenSource = {
  lease: async (request) => {
    const chunk = Math.min(request.defaults.burst,
      Math.ceil(request.defaults.requests_per_second * request.leaseSeconds))
    return { ...request.defaults, leased: chunk, tokens: request.defaults.burst - chunk }
  },
}
const limiter = new RateLimiter(inMemoryTokens, systemClock,
  { ...rate_limiter_defaults, defaults: benchLimits })
const withLimiter = wrapEndpoint(endpoint(contract.transfers.transfer,
    async (r) => ({ tx_id: newRowId(), amount: String(r.amount), status: 'Pending' as const })), {
  ...wrapperDeps,
  limiter,
})
report('endpoint wrapper, rate limiter',
  await measure(() => withLimiter(requests[next++ % requests.length]!), 50_000), 'per request')
report('rate limiter', await measure(() => {
  for (let i = 0; i < 100; i++) limiter.take(caller as never)
}, 20_000, 100), 'per request')

const encode = (h: MsgHdrs) => (h as MsgHdrs & { encode(): Uint8Array }).encode()
let sink = 0
report('reply headers, made per message', await measure(() => {
  const h = natsHeaders()
  h.set('Bank-Tx-Status', 'Pending')
  sink += encode(h).length
}, 200_000), 'per message')
const fixed = fixedHeaders({ 'Bank-Tx-Status': 'Pending' })
report('reply headers, fixed', await measure(() => (sink += encode(fixed).length), 200_000),
  'per message')

// A spread batch's rows: 48 payments, each a transfer row and a fee row of one account.
const now = new Date()
const partner = randomUUID()
const rows = Array.from({ length: 96 }, (_, i) => ({
  id: newRowId(), partner_id: partner,
    account_id: `00000000-0000-4000-8000-${String(i >> 1).padStart(12, '0')}`,
  seq: BigInt(1000 + i), parent_tx_id: i % 2 ? newRowId() : null, created_at: now, tx_type: i % 2
    ? 'fee' : 'transfer',
  tx_payment_type: 'EFT', status: 'Pending', amount: 100n, fee: 5n, credit: 0n, debit: 100n,
    hold_amount: 105n,
  running_balance: 100_000n, posted_order: null, ref: i % 2 ? 'EFT fee' : 'bench', own_ref: i % 2
    ? '' : 'bench payment',
  recipient_name: 'Bench Recipient', recipient_account: '62000000001', recipient_branch: '250655',
    user_id: '',
  added_by: caller.credentialId, status_reason: null, status_at: now, prev_sha: 'a'.repeat(64),
    tx_sha: 'b'.repeat(64),
}))
const columns = Object.keys(rows[0]!).map(
  (name) => [name, 'text'] as [keyof (typeof rows)[number] & string, PgType])
report('column values (96 rows × 27)',
  await measure(() => (sink += columnValues(rows, columns).length), 20_000), 'per batch')
const uuidColumns = [rows.map((r) => r.id), rows.map((r) => r.partner_id),
  rows.map((r) => r.account_id), rows.map((r) => r.parent_tx_id)]
report('binary uuids (4 columns × 96 rows)', await measure(() => {
  for (const values of uuidColumns) sink += binaryArray(arrayParameter('uuid', values))!.length
}, 20_000), 'per batch')
report('fresh row ids (96, made and written)', await measure(() => {
  const ids = new Array<string>(96)
  for (let i = 0; i < 96; i++) ids[i] = newRowId()
  sink += binaryArray(arrayParameter('uuid', ids))!.length
}, 20_000), 'per batch')
// Kysely compiling without a database (its documented DummyDriver set-up).
const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
})
report('insert statement (96 rows × 27)', await measure(() => {
  sink += insertUnnestStatement('transactions', rows as never[], columns as never).compile(compiler)
    .sql.length
}, 20_000), 'per batch')
let link = 'c'.repeat(64)
report('hash chain', await measure(() => {
  for (const row of rows) link = chainHash(link, row)
}, 2_000, rows.length), 'per row')
if (sink < 0) process.stdout.write(`${link}\n`)
