import { connect, errors, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { errorTypes } from '../contract/error-types.ts'
import { subjectFor, type Operation, type RequestOf, type ResponseOf } from '../contract/operation.ts'

/** An error reply from the bank: the code, type, message and per-field details of RULINGS.md. */
export class BankApiError extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
    readonly details: unknown[] = [],
  ) {
    super(message)
    this.name = 'BankApiError'
  }
}

export interface ConnectionOptions {
  /** NATS server URL(s); ignored when `connection` is given. */
  servers?: string | string[]
  /** An existing NATS connection to share; the client will not close it. */
  connection?: NatsConnection
  token: string
  /** How long to wait for a reply. */
  timeoutMs?: number
}

const decoder = new TextDecoder()

// The request/reply plumbing both clients share: one connection, the token header,
// error replies turned into BankApiError.
export class NatsApi {
  private connection: NatsConnection | undefined
  private connecting: Promise<NatsConnection> | undefined
  private readonly ownsConnection: boolean

  constructor(private readonly options: ConnectionOptions) {
    this.ownsConnection = options.connection === undefined
    this.connection = options.connection
  }

  async call<O extends Operation>(op: O, body: RequestOf<O>, subjectId?: string): Promise<ResponseOf<O>> {
    // Once connected, the request is published before `call` first yields, so requests go
    // out in the order they were made (and before anything the caller sends after them).
    const nc = this.connection ?? (await this.connect())
    const h = natsHeaders()
    h.set('token', this.options.token)
    let reply
    try {
      reply = await nc.request(subjectFor(op, subjectId), JSON.stringify(body ?? {}), {
        timeout: Math.max(this.options.timeoutMs ?? 10_000, op.replyTimeoutMs ?? 0),
        headers: h,
      })
    } catch (error) {
      // nats.js 3 reports "no responders" as a RequestError whose cause is NoRespondersError.
      const noResponders = error instanceof errors.NoRespondersError || (error instanceof errors.RequestError && error.isNoResponders())
      if (noResponders) throw new BankApiError(errorTypes.unavailable.code, 'unavailable', 'no bank instance is answering')
      // `timeout` (504) is the SDK's own type: the bank answered nothing, so there is no bank error.
      if (error instanceof errors.TimeoutError) throw new BankApiError(504, 'timeout', 'the bank did not answer in time')
      throw error
    }
    const text = decoder.decode(reply.data)
    const code = reply.headers?.get('Nats-Service-Error-Code')
    if (code) {
      const parsed = safeJson(text) as { error?: { code?: number; type?: string; message?: string; details?: unknown[] } }
      const e = parsed?.error
      throw new BankApiError(Number(code), e?.type ?? 'error', e?.message ?? reply.headers?.get('Nats-Service-Error') ?? '', e?.details ?? [])
    }
    const result = JSON.parse(text) as Record<string, unknown>
    // Values the bank keeps out of the body (the operation's reply headers) come back here.
    for (const [field, header] of Object.entries(op.replyHeaders ?? {})) {
      const value = reply.headers?.get(header)
      if (value && result[field] === undefined) result[field] = value
    }
    return result as ResponseOf<O>
  }

  private async connect(): Promise<NatsConnection> {
    this.connecting ??= connect({ servers: this.options.servers ?? 'nats://127.0.0.1:4222', maxReconnectAttempts: -1 })
    this.connection = await this.connecting
    return this.connection
  }

  async close(): Promise<void> {
    if (!this.ownsConnection) return
    const nc = this.connection ?? (await this.connecting)
    await nc?.close()
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
