import type { NatsConnection } from '@nats-io/transport-node'
import { sql, type Kysely } from 'kysely'
import { Conflict } from '../errors.ts'
import type { Logger } from '../logger.ts'
import type { Database } from '../schema.ts'
import type { PartnerNatsLimits } from './nats-claims.ts'
import { partnersJetStream } from './nats-identity-store.ts'

// Whether the partners' JetStream disk quotas fit the servers: each instance that is the
// NATS authority counts them together and asks the servers, through the system account, how
// much JetStream file storage each has (`max_file_store`, which `bank nats init` writes), and
// shows both in its `$SRV.INFO` metadata; `bank status` warns when the quotas add up to more
// than the smallest server's. Counted at start, every minute and after a change of limits.

/** The `$SRV.INFO` metadata keys (bytes, as decimal strings). */
export const quota_metadata = {
  partners: 'jetstream_partners_disk',
  server: 'jetstream_server_disk',
} as const

const recount_ms = 60_000
/** Taken by a change of a partner's quotas until it commits: two cannot both fit the last room. */
const quota_lock_key = 727003
const jsz_subject = '$SYS.REQ.SERVER.PING.JSZ'

/** JetStream storage (bytes): a server's, or partners' quotas together. */
export interface JetStreamStorage {
  disk: number
  memory: number
}

/**
 * The smallest JetStream file and memory storage any server answering the system account's
 * ping has (`max_file_store`, `max_memory_store`); undefined when none answers.
 */
export async function serversStorage(system: NatsConnection):
    Promise<JetStreamStorage | undefined> {
  const disks: number[] = []
  const memories: number[] = []
  for await (const msg of await system.requestMany(jsz_subject, '',
      { strategy: 'stall', stall: 100, maxWait: 2_000 })) {
    const reply = msg.json<{ data?: { config?: { max_storage?: number, max_memory?: number } } }>()
    const config = reply.data?.config
    if (typeof config?.max_storage === 'number' && config.max_storage > 0) {
      disks.push(config.max_storage)
    }
    if (typeof config?.max_memory === 'number' && config.max_memory > 0) {
      memories.push(config.max_memory)
    }
  }
  if (disks.length === 0 || memories.length === 0) return undefined
  return { disk: Math.min(...disks), memory: Math.min(...memories) }
}

/** What counts the partners' quotas (nats-limits.ts's NatsLimits), told to recount on a change. */
export interface QuotaCount {
  partnersJetStreamDisk(): Promise<number>
  onChanged: (() => Promise<void>) | undefined
}

/** Keeps `metadata` told of the quotas and the servers' storage; returns how to stop. */
export function watchJetStreamQuota(system: NatsConnection, limits: QuotaCount,
    metadata: Record<string, string>, log: Logger): () => void {
  const recount = async () => {
    try {
      const [partners, server] = await Promise.all([limits.partnersJetStreamDisk(),
        serversStorage(system).then((storage) => storage?.disk)])
      metadata[quota_metadata.partners] = String(partners)
      if (server === undefined) delete metadata[quota_metadata.server]
      else metadata[quota_metadata.server] = String(server)
    } catch (error) {
      log.warn({ err: error }, 'the partners\' JetStream quotas could not be counted')
    }
  }
  const timer = setInterval(() => void recount(), recount_ms)
  timer.unref()
  limits.onChanged = recount
  void recount()
  return () => {
    clearInterval(timer)
    limits.onChanged = undefined
  }
}

/**
 * The warning `bank status` gives for an instance's metadata: the partners' quotas together
 * over the servers' JetStream file storage; undefined when they fit or are not known.
 */
export function quotaWarning(metadata: Record<string, string>): string | undefined {
  const partners = Number(metadata[quota_metadata.partners])
  const server = Number(metadata[quota_metadata.server])
  if (!(partners > 0 && server > 0) || partners <= server) return undefined
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB (${bytes} bytes)`
  return `the partners' JetStream disk quotas add up to ${gib(partners)}, more than the ` +
    `${gib(server)} of JetStream file storage a NATS server has (max_file_store): partners ` +
    'filling their dropboxes could fill it and be refused. Lower quotas (bank partner limits ' +
    '<partner_id> --jetstream-disk BYTES) or give JetStream more disk (bank nats init ' +
    '--jetstream-disk BYTES, then restart the servers)'
}

/**
 * Refuses (409) quotas for a partner that would take the partners' JetStream storage together
 * past a server's: a single nats-server reserves each account's quota out of its own
 * `max_file_store`/`max_memory_store` and enables no JetStream at all for an account that no
 * longer fits (its dropboxes would fail), and in a cluster the quotas would promise disk the
 * servers do not have. Called in the transaction that gives the partner `limits`; `servers`
 * undefined (the servers' storage unknown) lets it through.
 */
export async function assertQuotaFits(trx: Kysely<Database>, servers: JetStreamStorage | undefined,
    partnerId: string, limits: PartnerNatsLimits): Promise<void> {
  if (!servers) return
  await sql`select pg_advisory_xact_lock(${sql.lit(quota_lock_key)})`.execute(trx)
  const others = await partnersJetStream(trx, partnerId)
  const over = ([['disk', 'jetstream_disk', 'max_file_store'],
    ['memory', 'jetstream_memory', 'max_memory_store']] as const).find(([kind, limit]) =>
    others[kind] + limits[limit] > servers[kind])
  if (!over) return
  const [kind, limit, setting] = over
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB (${bytes} bytes)`
  throw new Conflict(`the partners' JetStream ${kind} quotas would add up to ` +
    `${gib(others[kind] + limits[limit])}, more than the ${gib(servers[kind])} a NATS server ` +
    `has (${setting}): the servers would give this partner's account no JetStream (no KYC/KYB ` +
    `dropboxes). Lower this or another partner's quota (bank partner limits <partner_id> ` +
    `--${limit.replace('_', '-')} BYTES) or give JetStream more room (bank nats init ` +
    `--${limit.replace('_', '-')} BYTES, then restart the servers)`,
  [{ field: limit, requested: limits[limit], others: others[kind], servers: servers[kind] }])
}
