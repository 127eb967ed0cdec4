import { randomUUID } from 'node:crypto'
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node'

// A small implementation of the NATS services protocol (ADR-32, "micro") on the official
// client. We wrote it rather than use `@nats-io/services`, whose only npm releases are
// prereleases that pull a second copy of nats-core, and whose stats neither count error
// replies nor time async handlers. Here every reply, error or not, is counted and timed
// from receipt to reply, so `$SRV.STATS` tells the truth. `$SRV.PING`, `$SRV.INFO` and
// `$SRV.STATS` answer on all three subject forms; the official client's `Svcm` reads them.

export interface Reply {
  body: Uint8Array
  /** Set for error replies: becomes `Nats-Service-Error-Code` / `Nats-Service-Error`. */
  error?: { code: number; message: string }
  /** Headers of a success reply (paging cursors, values kept out of the body). */
  headers?: Record<string, string>
  /**
   * The same headers made once for many replies (src/nats/fixed-headers.ts), sent instead of making
   * them anew.
   */
  fixedHeaders?: MsgHdrs
}

export type MicroHandler = (msg: Msg) => Promise<Reply>

export interface MicroServiceOptions {
  name: string
  version: string
  description: string
  queue: string
  metadata?: Record<string, string>
}

interface EndpointState {
  name: string
  subject: string
  metadata: Record<string, string>
  handler: MicroHandler
  subscription?: Subscription
  num_requests: number
  num_errors: number
  last_error: string
  processing_time: number
}

/**
 * Subjects no endpoint serves: answered by a fallback (a 404 at once, rather than a caller left
 * waiting for its timeout when its request crossed an import to the bank's account, where the
 * server cannot tell it that nobody answers).
 */
export interface Fallback {
  /** Wildcard subjects it subscribes to, in the endpoints' queue group (e.g. `svc.>`). */
  subjects: readonly string[]
  handler: MicroHandler
}

export class MicroService {
  readonly id = randomUUID().replaceAll('-', '')
  private readonly endpoints: EndpointState[] = []
  private fallback: { subjects: readonly string[]; state: EndpointState } | undefined
  private readonly internal: Subscription[] = []
  /** Requests being served; `stop` waits for none to be left. */
  private inFlight = 0
  private drained: (() => void) | undefined
  private started = ''

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: MicroServiceOptions,
    private readonly onHandlerFault: (error: unknown, msg: Msg) => void,
  ) {}

  addEndpoint(name: string, subject: string, handler: MicroHandler, metadata: Record<string,
      string> = {}): void {
    if (this.started) throw new Error('endpoints must be added before start()')
    this.endpoints.push({ name, subject, metadata, handler, num_requests: 0, num_errors: 0,
      last_error: '', processing_time: 0 })
  }

  /**
   * Answers requests on `subjects` that no endpoint serves. Its subscriptions are in the
   * endpoints' queue group, so a request on a served subject goes to one member of the group
   * only: an endpoint's subscription or a fallback's, which then serves it as that endpoint
   * would (never a second reply, never a request dropped).
   */
  setFallback(fallback: Fallback): void {
    if (this.started) throw new Error('the fallback must be set before start()')
    this.fallback = { subjects: fallback.subjects, state: { name: '(unknown subject)',
      subject: fallback.subjects.join(' '), metadata: {}, handler: fallback.handler,
      num_requests: 0, num_errors: 0, last_error: '', processing_time: 0 } }
  }

  start(): void {
    this.started = new Date().toISOString()
    for (const endpoint of this.endpoints) {
      endpoint.subscription = this.nc.subscribe(endpoint.subject, {
        queue: this.options.queue,
        callback: (error, msg) => {
          if (!error) void this.serve(endpoint, msg)
        },
      })
    }
    if (this.fallback) this.startFallback(this.fallback)
    const verbs: Record<string, () => unknown> = {
      PING: () => ({ type: 'io.nats.micro.v1.ping_response', ...this.identity() }),
      INFO: () => this.info(),
      STATS: () => this.stats(),
    }
    for (const [verb, answer] of Object.entries(verbs)) {
      for (const subject of [`$SRV.${verb}`, `$SRV.${verb}.${this.options.name}`,
          `$SRV.${verb}.${this.options.name}.${this.id}`]) {
        this.internal.push(
          this.nc.subscribe(subject, {
            callback: (error, msg) => {
              if (!error) msg.respond(JSON.stringify(answer()))
            },
          }),
        )
      }
    }
  }

  private startFallback({ subjects, state }: { subjects: readonly string[]
      state: EndpointState }): void {
    const served = new ServedSubjects(this.endpoints)
    for (const subject of subjects) {
      this.internal.push(this.nc.subscribe(subject, {
        queue: this.options.queue,
        callback: (error, msg) => {
          if (error) return
          const endpoint = served.of(msg.subject)
          if (endpoint) void this.serve(endpoint, msg)
          // Nobody waits for a reply to a message published without a reply subject.
          else if (msg.reply) void this.serve(state, msg)
        },
      }))
    }
  }

  /** Stop taking requests, then wait (at most `graceMs`) for those in flight to be answered. */
  async stop(graceMs: number): Promise<void> {
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref())
    // Drain, not unsubscribe: the server may already have routed requests to this instance
    // that the client has not read yet. Unsubscribing would drop them and leave each caller
    // waiting for its timeout; draining serves every message that arrives until the server
    // has confirmed the UNSUB, after which the queue group sends new work elsewhere.
    const subscriptions = [...this.endpoints.map((e) => e.subscription), ...this.internal].filter(
      (s) => s !== undefined)
    await Promise.race([Promise.allSettled(subscriptions.map((s) => s.drain())), deadline])
    if (this.inFlight > 0) await Promise.race(
      [new Promise<void>((resolve) => (this.drained = resolve)), deadline])
  }

  info() {
    return {
      type: 'io.nats.micro.v1.info_response',
      ...this.identity(),
      description: this.options.description,
      endpoints: this.endpoints.map((e) => ({
        name: e.name,
        subject: e.subject,
        queue_group: this.options.queue,
        metadata: e.metadata,
      })),
    }
  }

  stats() {
    return {
      type: 'io.nats.micro.v1.stats_response',
      ...this.identity(),
      started: this.started,
      endpoints: this.endpoints.map((e) => ({
        name: e.name,
        subject: e.subject,
        queue_group: this.options.queue,
        num_requests: e.num_requests,
        num_errors: e.num_errors,
        last_error: e.last_error,
        processing_time: e.processing_time,
        average_processing_time: e.num_requests === 0 ? 0
          : Math.round(e.processing_time / e.num_requests),
      })),
    }
  }

  private identity() {
    return { name: this.options.name, id: this.id, version: this.options.version,
      metadata: this.options.metadata ?? {} }
  }

  /** Serves one request; never rejects (a fault is answered as a 500 and reported). */
  private async serve(endpoint: EndpointState, msg: Msg): Promise<void> {
    this.inFlight++
    try {
      const start = performance.now()
      let reply: Reply
      try {
        reply = await endpoint.handler(msg)
      } catch (error) {
        // The endpoint wrapper maps every error; reaching here is a fault in the wrapper itself.
        this.onHandlerFault(error, msg)
        reply =
          { body: new TextEncoder().encode(
          '{"error":{"code":500,"type":"internal_error","message":"internal error","details":[]}}'),
          error: { code: 500, message: 'internal error' } }
      }
      endpoint.num_requests++
      if (reply.error) {
        endpoint.num_errors++
        endpoint.last_error = `${reply.error.code}:${reply.error.message}`
      }
      // Nanoseconds, as ADR-32 counts them.
      endpoint.processing_time += Math.round((performance.now() - start) * 1e6)
      if (!msg.reply) return
      try {
        respond(msg, reply)
      } catch (error) {
        // A reply NATS will not carry (over the server's max_payload) or a connection that
        // closed under us: the caller gets a short error if anything can still be sent, and
        // the process keeps serving.
        this.onHandlerFault(error, msg)
        try {
          respond(msg, { body: new TextEncoder().encode(replyTooLarge),
            error: { code: 500, message: 'the reply could not be sent' } })
        } catch {
          // Nothing more can be sent on this connection; the caller's request times out.
        }
      }
    } finally {
      if (--this.inFlight === 0) this.drained?.()
    }
  }
}

/**
 * Which endpoint serves a concrete subject. Endpoint subjects are literal tokens and `*`s (no
 * `>`): a subject is looked up once per distinct set of `*` positions, those tokens masked.
 */
export class ServedSubjects<E extends { subject: string } = EndpointState> {
  private readonly byMasked = new Map<string, E>()
  private readonly wildcardSets: number[][] = []

  constructor(endpoints: readonly E[]) {
    const seen = new Set<string>()
    for (const endpoint of endpoints) {
      const tokens = endpoint.subject.split('.')
      if (tokens.includes('>')) throw new Error(
        `endpoint subject ${endpoint.subject}: a fallback needs endpoints without '>'`)
      const wildcards = tokens.flatMap((token, i) => (token === '*' ? [i] : []))
      const key = wildcards.join(',')
      if (!seen.has(key)) {
        seen.add(key)
        this.wildcardSets.push(wildcards)
      }
      this.byMasked.set(endpoint.subject, endpoint)
    }
  }

  of(subject: string): E | undefined {
    const exact = this.byMasked.get(subject)
    if (exact) return exact
    const tokens = subject.split('.')
    for (const wildcards of this.wildcardSets) {
      if (wildcards.length === 0 || wildcards.some((i) => i >= tokens.length)) continue
      const masked = [...tokens]
      for (const i of wildcards) masked[i] = '*'
      const endpoint = this.byMasked.get(masked.join('.'))
      if (endpoint) return endpoint
    }
    return undefined
  }
}

const replyTooLarge =
  '{"error":{"code":500,"type":"internal_error","message":"the reply could not be sent (too ' +
    'large for the NATS server); narrow the request","details":[]}}'

function respond(msg: Msg, reply: Reply): void {
  if (reply.error) {
    const h = natsHeaders()
    h.set('Nats-Service-Error-Code', String(reply.error.code))
    h.set('Nats-Service-Error', reply.error.message)
    if (reply.headers) for (const [name, value] of Object.entries(reply.headers)) h.set(name, value)
    msg.respond(reply.body, { headers: h })
  } else if (reply.fixedHeaders) {
    msg.respond(reply.body, { headers: reply.fixedHeaders })
  } else if (reply.headers) {
    const h = natsHeaders()
    for (const [name, value] of Object.entries(reply.headers)) h.set(name, value)
    msg.respond(reply.body, { headers: h })
  } else {
    msg.respond(reply.body)
  }
}
