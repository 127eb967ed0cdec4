import { createInbox, errors, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node'

// Request/reply over one inbox subscription per connection, as nats.js's own `request`
// does (a reply subject `<inbox>.<token>` per request, one subscription to `<inbox>.*`),
// without the garbage nats.js makes for each request: after a reply it cancels the request
// by rejecting its already-settled promise with a new RequestError, stack trace included,
// even with `noAsyncTraces`; with a timer promise raced against the reply besides. That
// was about a sixth of a busy client's CPU. The errors are nats.js's own (TimeoutError,
// NoRespondersError, RequestError), so callers tell them apart as before.

interface Waiting {
  resolve: (msg: Msg) => void
  reject: (error: unknown) => void
  timer: NodeJS.Timeout
  subject: string
}

export class ReplyMux {
  private readonly prefix: string
  private readonly waiting = new Map<string, Waiting>()
  private readonly subscription: Subscription
  private next = 0
  /** False once the inbox subscription failed or the connection closed: make a new mux. */
  usable = true

  constructor(private readonly nc: NatsConnection) {
    // A connection opened with `inboxPrefix` (NATS permissions that allow only some inboxes)
    // gets its replies there, as nats.js's `request` would.
    const inboxPrefix = (nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix
    this.prefix = `${createInbox(inboxPrefix)}.`
    this.subscription = nc.subscribe(`${this.prefix}*`,
      { callback: (error, msg) => this.dispatch(error, msg) })
    void nc.closed().then(() => this.fail(new errors.RequestError('connection closed')))
  }

  /**
   * Publishes at once (before the caller's next await), then waits for the reply or the timeout.
   */
  request(subject: string, data: string, headers: MsgHdrs, timeoutMs: number): Promise<Msg> {
    const token = (this.next++).toString(36)
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token)
        reject(new errors.TimeoutError())
      }, timeoutMs)
      this.waiting.set(token, { resolve, reject, timer, subject })
      try {
        this.nc.publish(subject, data, { reply: `${this.prefix}${token}`, headers })
      } catch (error) {
        clearTimeout(timer)
        this.waiting.delete(token)
        reject(error)
      }
    })
  }

  private dispatch(error: Error | null, msg: Msg): void {
    if (error) {
      // The inbox subscription itself failed (a permissions violation): no reply can come.
      this.fail(new errors.RequestError(error.message, { cause: error }))
      return
    }
    const token = msg.subject.slice(this.prefix.length)
    const waiting = this.waiting.get(token)
    if (!waiting) return // answered after its timeout
    this.waiting.delete(token)
    clearTimeout(waiting.timer)
    // The server answers a request nobody subscribes to with an empty 503 status message.
    if (msg.data.length === 0 && msg.headers?.code === 503) waiting.reject(
      new errors.NoRespondersError(waiting.subject))
    else waiting.resolve(msg)
  }

  /** Fails every waiting request, and this mux for good. */
  private fail(error: Error): void {
    if (!this.usable) return
    this.usable = false
    for (const waiting of this.waiting.values()) {
      clearTimeout(waiting.timer)
      waiting.reject(error)
    }
    this.waiting.clear()
    if (!this.nc.isClosed()) this.subscription.unsubscribe()
  }

  close(): void {
    this.fail(new errors.RequestError('the client was closed'))
  }
}
