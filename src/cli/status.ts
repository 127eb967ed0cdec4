import { connect, errors, type NatsConnection } from '@nats-io/transport-node'
import { natsAuthFromEnv, natsConnectOptions, natsServerList } from '../nats/nats-connect.ts'
import { natsUrl, UsageError } from './cli-context.ts'
import type { LocalCommand, LocalOutcome } from './local-command.ts'
import { quotaWarning } from '../nats-identity/jetstream-quota.ts'

// `bank status`: every instance of the service that answers the NATS services protocol's
// `$SRV.INFO.<name>` and `$SRV.STATS.<name>` (src/transport/nats/micro.ts publishes them):
// its id, version, uptime and metadata (storage, store), the requests and error replies it
// has counted since it started, and the endpoints that answered with errors. With
// `--endpoints`, every endpoint's counts (about 120 endpoints an instance: some 900 lines of
// JSON, which used to be the default). It needs no credential: NATS answers these subjects to
// anyone who may connect. It warns (in `warnings`, and on stderr) when an instance that is the
// NATS authority counts partners' JetStream disk quotas beyond a server's max_file_store.

/** After the last reply, how long to wait for another instance's. */
const reply_stall_ms = 500
/** The longest the command waits for replies at all. */
const replies_wait_ms = 3_000

interface Identity {
  name: string
  id: string
  version: string
  metadata?: Record<string, string>
}

interface StatsReply extends Identity {
  started: string
  endpoints: Array<{
    name: string; subject: string; num_requests: number; num_errors: number; last_error: string;
      average_processing_time: number }>
}

export const statusCommand: LocalCommand = {
  words: 'status',
  usage: 'status [--service partner-bank] [--endpoints]',
  summary:
    'Every running instance of the bank: id, version, uptime, storage and metadata, its ' +
      'requests and error replies since it started, and the endpoints that answered with ' +
      'errors (from $SRV.INFO and $SRV.STATS).',
  positionals: [],
  flags: [{ word: 'service', example: 'NAME', required: false,
    help: 'the service name (default BANK_SERVICE_NAME, else partner-bank)' },
  { word: 'endpoints', required: false,
    help: "list every endpoint's requests, errors and average time, not only those with errors" }],
  notes: 'Needs only NATS (NATS_URL, else <data dir>/nats-url), no operator credential. With ' +
    '--endpoints and --format table, endpoints that have served no request are left out.',
  run: async (args, env) => {
    if (args.flags.service === true || args.flags.service === '') throw new UsageError(
      '--service needs a value')
    const service = typeof args.flags.service === 'string' ? args.flags.service
      : env.BANK_SERVICE_NAME || 'partner-bank'
    const url = natsUrl(env)
    const nc = await connect({ servers: natsServerList(url), timeout: 5_000,
        ...natsConnectOptions(natsAuthFromEnv(env)) }).catch((error: unknown) => {
      throw new Error(
        `cannot reach NATS at ${url} (NATS_URL, else <data ` +
          `dir>/nats-url): ${error instanceof Error ? error.message : String(error)}`)
    })
    try {
      const [infos, stats] = await Promise.all([gather<Identity>(nc, `$SRV.INFO.${service}`),
        gather<StatsReply>(nc, `$SRV.STATS.${service}`)])
      if (infos.length === 0 && stats.length === 0) throw new Error(
        `no instance of ${service} answered on ${url} ($SRV.INFO.${service}); is the bank ` +
          `running, and is NATS_URL right?`)
      return outcome(service, url, infos, stats, Date.now(), args.flags.endpoints === true)
    } finally {
      await nc.close()
    }
  },
}

/** Every reply to one request until replies stop coming; none when nobody listens. */
async function gather<T>(nc: NatsConnection, subject: string): Promise<T[]> {
  const replies: T[] = []
  try {
    for await (const msg of await nc.requestMany(subject, '',
        { strategy: 'stall', stall: reply_stall_ms, maxWait: replies_wait_ms })) {
      replies.push(msg.json<T>())
    }
  } catch (error) {
    if (!(error instanceof errors.NoRespondersError)) throw error
  }
  return replies
}

/**
 * The instances, one per id (an instance that answered only one of the two is still shown), oldest
 * first: in short, with the endpoints that answered with errors, or with every endpoint (`all`).
 */
export function outcome(service: string, nats: string, infos: Identity[], stats: StatsReply[],
    nowMs: number, all = false): LocalOutcome {
  const ids = [...new Set([...infos, ...stats].map((reply) => reply.id))]
  const instances = ids.map((id) => instanceOf(id, infos, stats, nowMs))
  instances.sort((a, b) => (a.started ?? '').localeCompare(b.started ?? ''))
  const warnings = [...new Set(instances.map((i) => quotaWarning(i.metadata)).filter(
    (w): w is string => w !== undefined))]
  const shown = all ? instancesOutcome(service, nats, instances)
    : shortOutcome(service, nats, instances)
  return { result: { ...(shown.result as object), warnings }, table: shown.table, warnings }
}

/** In short: each instance with the endpoints that answered with errors. */
function shortOutcome(service: string, nats: string,
    instances: Array<ReturnType<typeof instanceOf>>): LocalOutcome {
  const short = instances.map(({ endpoints, ...instance }) => ({ ...instance,
    endpoint_count: endpoints.length, endpoints_with_errors: withErrors(endpoints) }))
  // For people: one row per instance, then one per endpoint that answered with errors.
  const table = { service, nats, instances: instances.map(instanceRow),
    endpoints_with_errors: instances.flatMap((instance) => withErrors(instance.endpoints).map(
      (e) => ({ instance: instance.id, ...e }))) }
  return { result: { service, nats, instances: short }, table }
}

/** Each instance with every endpoint's counts. */
function instancesOutcome(service: string, nats: string,
    instances: Array<ReturnType<typeof instanceOf>>): LocalOutcome {
  // For people: one row per instance, then one per endpoint that has served a request.
  const table = {
    service,
    nats,
    instances: instances.map(instanceRow),
    endpoints: instances.flatMap((instance) =>
      instance.endpoints.filter((e) => e.requests > 0).map(
        (e) => ({ instance: instance.id, ...e })),
    ),
  }
  return { result: { service, nats, instances }, table }
}

/** The endpoints that answered with errors, most errors first: name, counts, last error. */
function withErrors(endpoints: ReturnType<typeof instanceOf>['endpoints']) {
  return endpoints.filter((e) => e.errors > 0).sort((a, b) => b.errors - a.errors)
    .map(({ name, requests, errors, last_error }) => ({ name, requests, errors, last_error }))
}

/** One instance from what it answered to INFO and STATS (either may be missing). */
function instanceOf(id: string, infos: Identity[], stats: StatsReply[], nowMs: number) {
  const info = infos.find((reply) => reply.id === id)
  const stat = stats.find((reply) => reply.id === id)
  const identity = (info ?? stat)!
  const startedMs = stat ? Date.parse(stat.started) : NaN
  const endpoints = (stat?.endpoints ?? []).map((e) => ({
    name: e.name,
    subject: e.subject,
    requests: e.num_requests,
    errors: e.num_errors,
    // The protocol counts processing time in nanoseconds.
    average_ms: Math.round(e.average_processing_time / 1_000) / 1_000,
    last_error: e.last_error,
  }))
  return {
    id,
    version: identity.version,
    started: stat?.started ?? null,
    uptime_seconds: Number.isNaN(startedMs) ? null
      : Math.max(0, Math.floor((nowMs - startedMs) / 1_000)),
    metadata: identity.metadata ?? {},
    requests: endpoints.reduce((sum, e) => sum + e.requests, 0),
    errors: endpoints.reduce((sum, e) => sum + e.errors, 0),
    endpoints,
  }
}

/** An instance's row of the table for people. */
function instanceRow(
  { endpoints: _endpoints, metadata, uptime_seconds, ...instance }: ReturnType<typeof instanceOf>,
) {
  return {
    id: instance.id,
    version: instance.version,
    uptime: uptime_seconds === null ? '' : duration(uptime_seconds),
    storage: metadata.storage ?? '',
    store: metadata.store ?? '',
    sandbox: metadata.sandbox ?? '',
    requests: instance.requests,
    errors: instance.errors,
  }
}

/** `3d 4h`, `2h 5m`, `7m 12s`, `40s`. */
function duration(seconds: number): string {
  const parts: Array<[number, string]> = [
    [Math.floor(seconds / 86_400), 'd'],
    [Math.floor((seconds % 86_400) / 3_600), 'h'],
    [Math.floor((seconds % 3_600) / 60), 'm'],
    [seconds % 60, 's'],
  ]
  const first = parts.findIndex(([value]) => value > 0)
  if (first === -1) return '0s'
  return parts
    .slice(first, first + 2)
    .map(([value, unit]) => `${value}${unit}`)
    .join(' ')
}
