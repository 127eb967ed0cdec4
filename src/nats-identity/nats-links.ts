import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node'
import type { Logger } from '../logger.ts'
import { natsServerList } from '../nats/nats-connect.ts'
import { Unavailable } from '../errors.ts'
import { card_decider_inbox, dropbox_reader_inbox } from './nats-claims.ts'
import type { NatsIdentity } from './nats-identity.ts'

// The bank's connections besides its own: one to the system account, through which it
// pushes account JWTs to the servers' resolver, and short-lived ones into a partner's
// account, through which it reads that partner's dropboxes (the partner's JetStream is its
// own account's and nobody else's) or asks its card authorization decisions.

const claims_update_subject = '$SYS.REQ.CLAIMS.UPDATE'
const push_timeout_ms = 5_000
const reader_idle_ms = 60_000

/**
 * Connects to the system account and makes `identity.push` send through it; re-pushes every account
 * after a reconnect.
 */
export async function openSystemLink(identity: NatsIdentity, servers: string,
    tls: Partial<ConnectionOptions>, log: Logger): Promise<NatsConnection> {
  const creds = await identity.systemCreds()
  const nc = await connect({
    servers: natsServerList(servers),
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
      throw new Unavailable(`the NATS servers could not be told of an account change ` +
        `(${error instanceof Error ? error.message : String(error)}); it is recorded and sent ` +
        `again when the bank reconnects`)
    }
    const answer = JSON.parse(reply.string()) as { data?: { code?: number }; error?: {
      code?: number; description?: string } }
    if (answer.error || answer.data?.code !== 200) throw new Error(`a NATS server refused an ` +
      `account JWT: ${answer.error?.description ?? reply.string().slice(0, 200)}`)
  }
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type !== 'reconnect') continue
      // The server may be new, or have lost its resolver's store: it gets every account again.
      identity.publishAll().then(
        (count) => log.info({ accounts: count },
          'NATS reconnected: partner accounts pushed to the resolver again'),
        (error: unknown) => log.warn({ err: error },
          'NATS reconnected but the partner accounts could not be pushed again'),
      )
    }
  })()
  return nc
}

/** Who the bank is inside a partner's account: the dropbox reader or the card decider. */
export interface PartnerLinkRole {
  name: string
  inboxPrefix: string
  creds(identity: NatsIdentity, partnerId: string): Promise<string | undefined>
  /** The refusal when the link cannot be made. */
  unreachable: string
}

export const dropbox_reader_role: PartnerLinkRole = {
  name: 'dropbox-reader',
  inboxPrefix: dropbox_reader_inbox,
  creds: (identity, partnerId) => identity.dropboxReaderCreds(partnerId),
  unreachable: "the partner's dropbox could not be reached",
}

export const card_decider_role: PartnerLinkRole = {
  name: 'card-decider',
  inboxPrefix: card_decider_inbox,
  creds: (identity, partnerId) => identity.cardDeciderCreds(partnerId),
  unreachable: "the partner's decision service could not be reached",
}

/** Connections into partners' accounts in one role, each closed after a minute unused. */
export class PartnerConnections {
  private readonly open = new Map<string,
    { nc: Promise<NatsConnection>; timer: NodeJS.Timeout | undefined }>()

  constructor(
    private readonly identity: NatsIdentity,
    private readonly servers: string,
    private readonly tls: Partial<ConnectionOptions>,
    private readonly role: PartnerLinkRole = dropbox_reader_role,
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
    const creds = await this.role.creds(this.identity, partnerId)
    if (!creds) throw new Unavailable('the partner has no NATS account of its own')
    try {
      return await connect({
        servers: natsServerList(this.servers),
        name: `bank-${this.role.name}-${process.pid}`,
        inboxPrefix: this.role.inboxPrefix,
        reconnect: false,
        ...this.tls,
        authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
      })
    } catch (error) {
      throw new Unavailable(`${this.role.unreachable} ` +
        `(${error instanceof Error ? error.message : String(error)}); try again`)
    }
  }
}

/** Connections into partners' accounts in `role`, when the bank is their NATS authority. */
export function partnerLinks(
  identity: NatsIdentity | undefined,
  servers: string,
  tls: Partial<ConnectionOptions>,
  role: PartnerLinkRole,
): PartnerConnections | undefined {
  return identity ? new PartnerConnections(identity, servers, tls, role) : undefined
}

/**
 * How the bank asks a partner's card decision: a request inside the partner's own account
 * (`links`), or on the bank's own connection when NATS is open; rejects on no answer.
 */
export function decisionTransport(links: PartnerConnections | undefined, nc: NatsConnection) {
  return async (partnerId: string, subject: string, payload: string, timeout: number) => {
    const link = links ? await links.of(partnerId) : nc
    return (await link.request(subject, payload, { timeout })).string()
  }
}
