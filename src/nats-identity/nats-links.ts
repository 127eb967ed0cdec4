import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node'
import type { Logger } from '../logger.ts'
import { Unavailable } from '../errors.ts'
import { dropbox_reader_inbox } from './nats-claims.ts'
import type { NatsIdentity } from './nats-identity.ts'

// The bank's connections besides its own: one to the system account, through which it
// pushes account JWTs to the servers' resolver, and short-lived ones into a partner's
// account, through which it reads that partner's dropboxes (the partner's JetStream is its
// own account's and nobody else's).

const claims_update_subject = '$SYS.REQ.CLAIMS.UPDATE'
const push_timeout_ms = 5_000
const reader_idle_ms = 60_000

/** Connects to the system account and makes `identity.push` send through it; re-pushes every account after a reconnect. */
export async function openSystemLink(identity: NatsIdentity, servers: string, tls: Partial<ConnectionOptions>, log: Logger): Promise<NatsConnection> {
  const creds = await identity.systemCreds()
  const nc = await connect({
    servers,
    name: `bank-system-${process.pid}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    ...tls,
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
  })
  identity.push = async (jwt) => {
    let reply
    try {
      reply = await nc.request(claims_update_subject, jwt, { timeout: push_timeout_ms })
    } catch (error) {
      throw new Unavailable(`the NATS servers could not be told of an account change (${error instanceof Error ? error.message : String(error)}); it is recorded and sent again when the bank reconnects`)
    }
    const answer = JSON.parse(reply.string()) as { data?: { code?: number }; error?: { code?: number; description?: string } }
    if (answer.error || answer.data?.code !== 200) throw new Error(`a NATS server refused an account JWT: ${answer.error?.description ?? reply.string().slice(0, 200)}`)
  }
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type !== 'reconnect') continue
      // The server may be new, or have lost its resolver's store: it gets every account again.
      identity.publishAll().then(
        (count) => log.info({ accounts: count }, 'NATS reconnected: partner accounts pushed to the resolver again'),
        (error: unknown) => log.warn({ err: error }, 'NATS reconnected but the partner accounts could not be pushed again'),
      )
    }
  })()
  return nc
}

/** Connections into partners' accounts for reading their dropboxes, each closed after a minute unused. */
export class DropboxConnections {
  private readonly open = new Map<string, { nc: Promise<NatsConnection>; timer: NodeJS.Timeout | undefined }>()

  constructor(
    private readonly identity: NatsIdentity,
    private readonly servers: string,
    private readonly tls: Partial<ConnectionOptions>,
  ) {}

  readonly of = async (partnerId: string): Promise<NatsConnection> => {
    let entry = this.open.get(partnerId)
    if (!entry) {
      entry = { nc: this.connect(partnerId), timer: undefined }
      this.open.set(partnerId, entry)
      entry.nc.catch(() => this.open.delete(partnerId))
    }
    if (entry.timer) clearTimeout(entry.timer)
    const current = entry
    current.timer = setTimeout(() => {
      this.open.delete(partnerId)
      void current.nc.then((nc) => nc.close()).catch(() => {})
    }, reader_idle_ms)
    current.timer.unref()
    const nc = await current.nc
    // Closed under us (the server restarted; readers do not reconnect): open a new one.
    if (nc.isClosed() && this.open.get(partnerId) === current) {
      clearTimeout(current.timer)
      this.open.delete(partnerId)
      return this.of(partnerId)
    }
    return nc
  }

  async close(): Promise<void> {
    const entries = [...this.open.values()]
    this.open.clear()
    for (const entry of entries) if (entry.timer) clearTimeout(entry.timer)
    await Promise.all(entries.map((entry) => entry.nc.then((nc) => nc.close()).catch(() => {})))
  }

  private async connect(partnerId: string): Promise<NatsConnection> {
    const creds = await this.identity.dropboxReaderCreds(partnerId)
    if (!creds) throw new Unavailable('the partner has no NATS account for its dropboxes')
    try {
      return await connect({
        servers: this.servers,
        name: `bank-dropbox-reader-${process.pid}`,
        inboxPrefix: dropbox_reader_inbox,
        reconnect: false,
        ...this.tls,
        authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
      })
    } catch (error) {
      throw new Unavailable(`the partner's dropbox could not be reached (${error instanceof Error ? error.message : String(error)}); try again`)
    }
  }
}
