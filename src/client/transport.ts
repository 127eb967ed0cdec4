import { connect, errors, type ConnectionOptions as NatsConnectOptions, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node'
import { errorTypes, type ErrorDetail, type ErrorType } from '../contract/error-types.ts'
import { subjectFor, type Operation, type RequestOf, type ResponseOf } from '../contract/operation.ts'
import { blameSetting, default_nats_url, origin, type SettingSources } from './locate.ts'
import { ReplyMux } from './reply-mux.ts'
import { retryPolicyOf, withRetries, type Failure, type RetryOptions, type RetryPolicy } from './retry.ts'
import { fixedHeaders } from '../nats/fixed-headers.ts'
import { natsServerList } from '../nats/nats-connect.ts'

/**
 * How long a client waits for a reply unless told otherwise. Longer than the bank's own
 * bounds on a database that stops answering (by default a pool wait of 5 s, then a query
 * of 7 s), so that a request caught by a stalled database gets the bank's 503, which says
 * what happened, rather than a timeout, which cannot.
 */
export const default_timeout_ms = 15_000

/**
 * What `BankApiError.type` may be: a type of the bank's table (`errorTypes`), or one of the
 * SDK's own: `timeout` (504, no answer in time) and `error` (a reply with no error body).
 * A closed union, so `err.type === 'insufficient_funds'` narrows and a misspelt type does not
 * compile. A bank newer than this SDK may answer with a type this union does not know yet.
 */
export type BankApiErrorType = ErrorType | 'timeout' | 'error'

/** An error reply from the bank: its code, type, message and per-field details. */
export class BankApiError extends Error {
  constructor(
    readonly code: number,
    readonly type: BankApiErrorType,
    message: string,
    /**
     * Each detail names a field and says what is wrong with it (FieldIssue); a `duplicate`'s
     * first carries the original's id (`tx_id`, `debit_order_id`, `bulk_payment_id`), an
     * `idempotency_key_reused` names each differing field with it.
     */
    readonly details: ErrorDetail[] = [],
  ) {
    super(message)
    this.name = 'BankApiError'
  }

  /**
   * How many times the SDK sent the request: more than 1 when the client's `retry` option
   * sent it again after a timeout or a 503 (docs/guides/retries-and-idempotency.md).
   */
  attempts = 1

  /**
   * The original transaction's id when this is a `duplicate` of a transfer (a retry of one
   * the bank took): the answer to the retry. Undefined otherwise.
   */
  get originalTxId(): string | undefined {
    return this.type === 'duplicate' ? this.details[0]?.tx_id : undefined
  }
}

/**
 * No NATS server answered at the URL the client was given: names the URL and, when the
 * client was made by `fromEnv`/`fromDataDir`, where that URL came from. Not a
 * BankApiError, since the bank was never asked.
 */
export class BankConnectionError extends Error {
  constructor(
    readonly url: string,
    readonly from: string | undefined,
    cause: unknown,
  ) {
    const why = cause instanceof Error ? cause.message : String(cause)
    const detail = cause instanceof Error && cause.cause instanceof Error
      && cause.cause.message !== why ? ` (${cause.cause.message})` : ''
    super(`cannot reach NATS at ${url}${from ? ` (${origin(from)})` : ''}: ${why}${detail}`,
      { cause })
    this.name = 'BankConnectionError'
  }
}

export interface ConnectionOptions {
  /**
   * NATS server URL(s): one, several separated by commas, or a list; the client connects to
   * whichever answers. Ignored when `connection` is given.
   */
  servers?: string | string[]
  /** An existing NATS connection to share; the client will not close it. */
  connection?: NatsConnection
  /**
   * How to log in to NATS and TLS, when the server asks for it (nats.js connection options:
   * `authenticator`, `user`/`pass`, `token`, `tls`); `fromEnv` fills it from NATS_CREDS,
   * NATS_NKEY, NATS_USER/NATS_PASSWORD, NATS_TOKEN and NATS_TLS_*.
   */
  login?: Partial<NatsConnectOptions>
  token: string
  /** How long to wait for a reply (default `default_timeout_ms`, 15 s). */
  timeoutMs?: number
  /**
   * Where `servers` and `token` came from (`NATS_URL`, a file's path, …), named in error
   * messages; `fromEnv` and `fromDataDir` fill it.
   */
  sources?: SettingSources
}

const decoder = new TextDecoder()

/** The errors of requests nobody received (no bank instance subscribed): never landed. */
const undelivered = new WeakSet<object>()

/**
 * A client's options, checked when it is made rather than deep inside nats.js on its first
 * call (`token: undefined` failed there with "reading 'trim'"): names the option and what it
 * takes. `client` is `new BankClient` or `new OperatorClient`, as the message says it.
 */
export function checkOptions(
  options: ConnectionOptions,
  client: string,
  extra: Record<string, unknown> = {},
): void {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${client}(options): options must be an object`)
  }
  const want = (name: string, value: unknown, what: string, empty: boolean) => {
    if (typeof value === 'string' && (empty || value.trim() !== '')) return
    const given = value === undefined ? 'missing' : (JSON.stringify(value) ?? String(value))
    throw new TypeError(`${client}({ ${name} }): ${name} is ${given}; it must be ${what}`)
  }
  // An empty token is a string the bank refuses (401), as a caller testing that may want.
  want('token', options.token, 'the credential the bank issued (a string)', true)
  for (const [name, value] of Object.entries(extra)) {
    want(name, value, 'the partner id `bank partner create` printed (a non-empty string)', false)
  }
  const servers = options.servers
  const listed: unknown[] = Array.isArray(servers) ? servers : [servers]
  const badUrl = (url: unknown) => typeof url !== 'string' || url.trim() === ''
  if (servers !== undefined && (listed.length === 0 || listed.some(badUrl))) {
    const what = "a NATS URL or a list of them, e.g. 'nats://127.0.0.1:4222'"
    throw new TypeError(`${client}({ servers }): servers must be ${what}`)
  }
}

// The request/reply plumbing both clients share: one connection, the token header,
// error replies turned into BankApiError.
export class NatsApi {
  private connection: NatsConnection | undefined
  private connecting: Promise<NatsConnection> | undefined
  private mux: ReplyMux | undefined
  private readonly ownsConnection: boolean
  /** The token header, the same on every request: made and encoded once. */
  private tokenHeaders: MsgHdrs | undefined
  /**
   * Each operation's last subject, by the id it was filled with (a partner client's is always its
   * own).
   */
  private readonly subjects = new Map<Operation, { id: string | undefined; subject: string }>()

  /**
   * `partnerId`: the partner client's own id, named when a 403 says the subject is another
   * partner's.
   */
  constructor(
    private readonly options: ConnectionOptions,
    private readonly partnerId?: string,
    /** The partner client's `retry` option (retry.ts); none sends each request once. */
    private readonly retry?: RetryOptions,
  ) {
    this.ownsConnection = options.connection === undefined
    this.connection = options.connection
  }

  /**
   * Sends a request and answers its reply; with the client's `retry` option, sends it again
   * after a timeout or a 503 when that is safe (retry.ts).
   */
  call<O extends Operation>(op: O, body: RequestOf<O>,
      subjectId?: string): Promise<ResponseOf<O>> {
    const retry = this.retry
    const policy = retry && retry.attempts > 1 ? retryPolicyOf(op) : undefined
    if (!retry || !policy || policy.kind === 'none') return this.send(op, body, subjectId)
    const request = (body ?? {}) as Record<string, unknown>
    return withRetries(retry, policy, () => this.send(op, body, subjectId),
      (error) => failureOf(error, policy),
      (originalId) => (policy.kind === 'keyed' ? policy.recover?.((o, b) =>
        this.call(o, b as RequestOf<Operation>, subjectId), request, originalId) : undefined) as
        Promise<ResponseOf<O>> | undefined,
      (error, attempts) => {
        if (error instanceof BankApiError) error.attempts = attempts
        return error
      })
  }

  /** One request and its reply. */
  private async send<O extends Operation>(op: O, body: RequestOf<O>,
      subjectId?: string): Promise<ResponseOf<O>> {
    // Once connected, the request is published before `call` first yields, so requests go
    // out in the order they were made (and before anything the caller sends after them).
    const nc = this.connection ?? (await this.connect())
    const h = (this.tokenHeaders ??= fixedHeaders({ token: this.options.token }))
    let reply
    try {
      if (!this.mux?.usable) this.mux = new ReplyMux(nc)
      reply = await this.mux.request(this.subjectOf(op, subjectId), JSON.stringify(body ?? {}), h,
        this.timeoutOf(op, body))
    } catch (error) {
      throw this.requestError(error)
    }
    const text = decoder.decode(reply.data)
    const code = reply.headers?.get('Nats-Service-Error-Code')
    if (code) throw this.bankError(Number(code), reply.headers, text)
    return resultOf(op, reply.headers, text) as ResponseOf<O>
  }

  /** What a request that got no reply throws: no bank answering, a timeout, else the error. */
  private requestError(error: unknown): unknown {
    // nats.js 3 reports "no responders" as a RequestError whose cause is NoRespondersError.
    const noResponders = error instanceof errors.NoRespondersError
      || (error instanceof errors.RequestError && error.isNoResponders())
    if (noResponders) {
      const unavailable = new BankApiError(errorTypes.unavailable.code, 'unavailable',
        `no bank instance is answering${this.where()}`)
      undelivered.add(unavailable)
      return unavailable
    }
    // `timeout` (504) is the SDK's own type: the bank answered nothing, so there is no bank
    // error.
    if (error instanceof errors.TimeoutError) return new BankApiError(504, 'timeout',
      `the bank did not answer in time${this.where()}`)
    return error
  }

  /** The bank's error reply as a BankApiError. */
  private bankError(code: number, headers: MsgHdrs | undefined, text: string): BankApiError {
    const parsed = safeJson(text) as { error?: { code?: number; type?: BankApiErrorType;
      message?: string; details?: ErrorDetail[] } }
    const e = parsed?.error
    const message = e?.message ?? headers?.get('Nats-Service-Error') ?? ''
    // A refused credential or partner id: say which setting to fix, not only what failed.
    const blame = blameSetting(code, message, this.options.sources ?? {}, this.partnerId)
    return new BankApiError(code, e?.type ?? 'error', blame ? `${message}: ${blame}`
      : message, e?.details ?? [])
  }

  /**
   * The caller's timeout, or the operation's longer one; a long call made with `detach: true`
   * is answered at once with its job, so it keeps the caller's: were the instance that took
   * it to die, the caller learns so in seconds rather than minutes.
   */
  private timeoutOf(op: Operation, body: unknown): number {
    const timeoutMs = this.options.timeoutMs ?? default_timeout_ms
    const detached = (body as { detach?: unknown } | undefined)?.detach === true
    return detached ? timeoutMs : Math.max(timeoutMs, op.replyTimeoutMs ?? 0)
  }

  private subjectOf(op: Operation, id: string | undefined): string {
    const last = this.subjects.get(op)
    if (last && last.id === id) return last.subject
    const subject = subjectFor(op, id)
    this.subjects.set(op, { id, subject })
    return subject
  }

  private async connect(): Promise<NatsConnection> {
    const servers = this.options.servers ?? default_nats_url
    // noAsyncTraces: nats.js would otherwise build Error objects (stack traces included)
    // for its operations in case they fail (for every request, before ReplyMux); the SDK
    // throws its own errors, whose async stack already names the caller.
    this.connecting ??= connect({ servers: natsServerList(servers), maxReconnectAttempts: -1,
        noAsyncTraces: true, ...this.options.login }).catch((error: unknown) => {
      // The next call tries again rather than repeating this failure.
      this.connecting = undefined
      throw new BankConnectionError(String(servers), this.options.sources?.servers, error)
    })
    this.connection = await this.connecting
    return this.connection
  }

  /**
   * ` on <url> (from …)`: on which NATS server nobody answered, when this client opened the
   * connection.
   */
  private where(): string {
    if (!this.ownsConnection) return ''
    const from = this.options.sources?.servers
    return ` ` +
      `on ${String(this.options.servers ?? default_nats_url)}${from ? ` (${origin(from)})` : ''}`
  }

  async close(): Promise<void> {
    this.mux?.close()
    if (!this.ownsConnection) return
    const nc = this.connection ?? (await this.connecting?.catch(() => undefined))
    await nc?.close()
  }
}

/** How a failed attempt counts for the retry loop (retry.ts). */
function failureOf(error: unknown, policy: RetryPolicy): Failure {
  if (!(error instanceof BankApiError)) return { retryable: false, mayHaveLanded: true }
  const retryable = error.type === 'timeout' || error.code === errorTypes.unavailable.code
  const duplicateOf = error.type === 'duplicate' && policy.kind === 'keyed'
    ? error.details[0]?.[policy.originalIdField as 'tx_id'] : undefined
  return { retryable, mayHaveLanded: !undelivered.has(error), duplicateOf }
}

/** A reply's body, with the values the bank keeps out of it (the operation's reply headers). */
function resultOf(op: Operation, headers: MsgHdrs | undefined, text: string) {
  const result = JSON.parse(text) as Record<string, unknown>
  for (const [field, header] of Object.entries(op.replyHeaders ?? {})) {
    const value = headers?.get(header)
    if (value && result[field] === undefined) result[field] = value
  }
  return result
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
