// `npm run bench:flood`: how long partner B waits for the bank while partner A floods NATS,
// on the production set-up (the bank the NATS authority, `bank nats init`'s configuration,
// TLS, issued creds; test/support/authority-nats.ts) with the bank's default limits per
// partner (docs/operations.md, "NATS limits per partner"). Never part of `npm test`: the
// test (test/transport/nats-limits.test.ts) asserts that each flood is refused and B is
// answered; this prints B's latency.
//
// B sends BENCH_FLOOD_RATE requests a second (100: `entities.list`) throughout. Phases, each
// BENCH_FLOOD_SECONDS long (10):
//   baseline      nothing else
//   payload       A announces 900 KB messages over and over (refused by the server on
//                 reading their size; each closes A's connection, so A logs in again)
//   payload-max   A sends requests of 780 KB (under its limit: the bank reads and refuses
//                 them, 400), 8 at a time
//   connections   A opens connections until refused, closes them, again
//   subscriptions A subscribes up to its limit, and one more, on as many connections as it
//                 may have
//   jetstream     A fills a file stream with 64 KiB messages until refused (its disk quota
//                 lowered to 64 MiB for the run, so that the run fills it)
// A floods from a process of its own (this file again, BENCH_FLOOD_ATTACKER set), as a partner
// would from its own machine; the bank, its NATS server and B share this machine's cores with
// it. Prints one JSON line per phase: B's requests, failures, p50 and p99 (ms), and what A did.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect, credsAuthenticator, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { natsConnectOptions } from '../src/nats/nats-connect.ts'
import { onboardPartner, startTestBank, type TestPartner } from '../test/support/harness.ts'
import { businessEntity } from '../test/support/fixtures.ts'
import { announceMessage, type RawLogin } from '../test/support/nats-raw.ts'

const rate = Number(process.env.BENCH_FLOOD_RATE ?? 100)
const phaseMs = Number(process.env.BENCH_FLOOD_SECONDS ?? 10) * 1000

type Stop = () => boolean

/** What the attacker's process is told (BENCH_FLOOD_ATTACKER, JSON). */
interface AttackerOrders {
  phase: string
  ms: number
  natsUrl: string
  login: RawLogin
  token: string
  subject: string
}

async function main(): Promise<void> {
  // The bank's default request budget (the test harness lifts it out of the way of tests):
  // what holds a partner's requests near its payload limit to a few a second.
  const tb = await startTestBank({ natsAuthority: true, persistent: false,
    env: { BANK_SANDBOX: 'false', BANK_RATE_PER_SECOND: '200', BANK_RATE_BURST: '400' } })
  try {
    const [a, b] = await Promise.all([onboardPartner(tb, { approve: true }),
      onboardPartner(tb, { approve: true })])
    await b.client.entities.create(businessEntity())
    // So that the JetStream phase fills A's quota within its time.
    await tb.operator.partners.limits({ partner_id: a.partnerId, jetstream_disk: 64 * 1024 ** 2 })
    const orders = (phase: string): AttackerOrders => ({ phase, ms: phaseMs, natsUrl: tb.natsUrl,
      login: { port: tb.authority!.server.port, caFile: tb.authority!.caFile,
        creds: a.natsCreds! },
      token: a.token, subject: `svc.entity.${a.partnerId}.list-entities` })
    for (const phase of ['baseline', ...Object.keys(floods)]) {
      console.log(JSON.stringify(await run(b, phase === 'baseline' ? undefined : orders(phase),
        phase)))
    }
  } finally {
    await tb.stop()
  }
}

/** B's steady requests while A's process floods, and their latencies. */
async function run(b: TestPartner, orders: AttackerOrders | undefined, phase: string) {
  const attacker = orders ? attack(orders) : Promise.resolve({})
  const latencies: number[] = []
  let failures = 0
  const started = performance.now()
  const pending: Array<Promise<void>> = []
  for (let i = 0; performance.now() - started < phaseMs; i++) {
    const sent = performance.now()
    pending.push(b.client.entities.list({}).then(
      () => void latencies.push(performance.now() - sent), () => void failures++))
    const next = started + ((i + 1) * 1000) / rate
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())))
  }
  await Promise.all(pending)
  const flood = await attacker
  latencies.sort((x, y) => x - y)
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1,
    Math.floor(q * latencies.length))]! * 10) / 10
  return { phase, b_requests: latencies.length + failures, b_failures: failures,
    b_p50_ms: at(0.5), b_p99_ms: at(0.99), a: flood }
}

/** Runs A's flood in a process of its own; resolves with what it did. */
function attack(orders: AttackerOrders): Promise<unknown> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_FLOOD_ATTACKER: JSON.stringify(orders) },
    stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => void (out += chunk.toString('utf8')))
  return new Promise((resolve, reject) => child.once('exit', (code) => code === 0
    ? resolve(JSON.parse(out)) : reject(new Error(`the attacker exited ${code}: ${out}`))))
}

/** The attacker's process: floods as ordered until its time is up, prints what it did. */
async function attackerMain(orders: AttackerOrders): Promise<void> {
  const until = Date.now() + orders.ms
  const connectA = () => connect({ servers: orders.natsUrl, reconnect: false,
    ...natsConnectOptions({ tls: { caFile: orders.login.caFile } }),
    authenticator: credsAuthenticator(new TextEncoder().encode(orders.login.creds)) })
  const nc = await connectA()
  const flood = floods[orders.phase as keyof typeof floods]
  const result = await flood({ ...orders, nc, connect: connectA }, () => Date.now() >= until)
  await nc.close()
  // What the harness's modules hold open must not keep this process.
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0))
}

/** What A floods with: its logins and the subject of one of its operations. */
interface Attacker extends AttackerOrders {
  /** A's connection for its requests and JetStream. */
  nc: NatsConnection
  connect(): Promise<NatsConnection>
}

const idle = () => new Promise((resolve) => setTimeout(resolve, 100))

/** Messages over A's payload limit, announced by hand (no client library would send them). */
async function payloadFlood({ login, subject }: Attacker, stop: Stop) {
  const answers: Record<string, number> = {}
  while (!stop()) {
    const answer = await announceMessage(login, subject, 900_000).then((r) => r.answer,
      (error: Error) => error.message)
    answers[answer] = (answers[answer] ?? 0) + 1
  }
  return answers
}

/** Requests just under A's payload limit, which the bank reads and refuses. */
async function payloadMaxFlood({ nc, token, subject }: Attacker, stop: Stop) {
  const h = natsHeaders()
  h.set('token', token)
  const body = new Uint8Array(780_000).fill(0x20)
  const codes: Record<string, number> = {}
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (!stop()) {
      const reply = await nc.request(subject, body, { headers: h, timeout: 30_000 })
      const code = reply.headers?.get('Nats-Service-Error-Code') || '200'
      codes[code] = (codes[code] ?? 0) + 1
    }
  }))
  return codes
}

/** Connections until refused, closed, and again. */
async function connectionFlood({ connect: connectA }: Attacker, stop: Stop) {
  let opened = 0
  let refused = 0
  while (!stop()) {
    const open: NatsConnection[] = []
    for (;;) {
      try {
        open.push(await connectA())
        opened++
      } catch {
        refused++
        break
      }
    }
    await Promise.all(open.map((nc) => nc.close()))
  }
  return { opened, refused }
}

/** As many connections as A may have, each with one subscription more than its limit. */
async function subscriptionFlood({ connect: connectA }: Attacker, stop: Stop) {
  const open: NatsConnection[] = []
  try {
    for (;;) open.push(await connectA())
  } catch { /* at its connection limit */ }
  // The server refuses the last of each connection's.
  const refusals = open.map((nc) => new Promise<string>((resolve) => void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'error') return resolve(status.error.message)
    }
  })()))
  for (const nc of open) {
    for (let i = 0; i <= 1_000; i++) nc.subscribe(`_INBOX.flood.${i}`)
    await nc.flush().catch(() => {})
  }
  const refused = await Promise.race([Promise.all(refusals),
    new Promise<string[]>((resolve) => setTimeout(() => resolve([]), 5_000))])
  while (!stop()) await idle()
  await Promise.all(open.map((nc) => nc.close()))
  return { connections: open.length, subscriptions: open.length * 1_001,
    refused: [...new Set(refused)].map((m) => `${m} (${refused.length}×)`) }
}

/** A file stream filled with 64 KiB messages until A's disk quota (64 MiB here) refuses. */
async function jetstreamFill({ nc }: Attacker, stop: Stop) {
  const jsm = await jetstreamManager(nc)
  const js = jetstream(nc)
  await jsm.streams.add({ name: 'FLOOD', subjects: ['flood.>'] })
  const chunk = new Uint8Array(64 * 1024)
  let stored = 0
  let refusal = ''
  while (!stop() && !refusal) {
    await js.publish('flood.fill', chunk).then(() => void stored++,
      (error: Error) => void (refusal = error.message))
  }
  while (!stop()) await idle()
  await jsm.streams.delete('FLOOD')
  return { stored_mib: stored / 16, refusal }
}

const floods = { payload: payloadFlood, 'payload-max': payloadMaxFlood,
  connections: connectionFlood, subscriptions: subscriptionFlood, jetstream: jetstreamFill }

const ordered = process.env.BENCH_FLOOD_ATTACKER
if (ordered) await attackerMain(JSON.parse(ordered) as AttackerOrders)
else await main()
