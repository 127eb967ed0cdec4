import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from '../logger.ts'
import type { NatsLimits } from './nats-limits.ts'

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
const jsz_subject = '$SYS.REQ.SERVER.PING.JSZ'

/** The smallest JetStream file storage any server answering the system account's ping has. */
export async function serversFileStore(system: NatsConnection): Promise<number | undefined> {
  const sizes: number[] = []
  for await (const msg of await system.requestMany(jsz_subject, '',
      { strategy: 'stall', stall: 100, maxWait: 2_000 })) {
    const reply = msg.json<{ data?: { config?: { max_storage?: number } } }>()
    const size = reply.data?.config?.max_storage
    if (typeof size === 'number' && size > 0) sizes.push(size)
  }
  return sizes.length > 0 ? Math.min(...sizes) : undefined
}

/** Keeps `metadata` told of the quotas and the servers' storage; returns how to stop. */
export function watchJetStreamQuota(system: NatsConnection, limits: NatsLimits,
    metadata: Record<string, string>, log: Logger): () => void {
  const recount = async () => {
    try {
      const [partners, server] = await Promise.all([limits.partnersJetStreamDisk(),
        serversFileStore(system)])
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
