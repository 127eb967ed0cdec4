import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import type { LookupFunction } from 'node:net'
import { addressRefusal, checkUrlForm, literalAddress, systemResolver, type Resolver } from './url-policy.ts'

// The outside world of webhooks behind one interface: a sender POSTs one signed body to
// one URL and says what came of it. The HTTP sender enforces the URL policy at the moment
// of sending (url-policy.ts): it resolves the host itself, refuses when any address is not
// allowed, and hands the connection the address it checked, so the socket cannot go
// anywhere the check did not see. Tests use it as it is, against receivers on loopback in
// sandbox mode: a simulated sender would test less than the real one does there.
//
// A session is a run of attempts that may share connections (keep-alive, one socket per
// origin): a webhook job sending a lane's queued deliveries one after another pays for
// one connection, not one per event. Each new socket is resolved and checked as above,
// and a session lives only as long as one job's run, so a host's address is re-checked
// at the next run. A request on a reused socket that the receiver had just closed (the
// race every keep-alive client meets) is sent once more on a fresh socket.

export interface WebhookRequest {
  url: string
  headers: Record<string, string>
  body: string
  /** Sandbox mode: `http://` and loopback allowed. */
  sandbox: boolean
}

export interface WebhookOutcome {
  /** Any 2xx answer within the timeout. */
  delivered: boolean
  /** The receiver's HTTP status, when it answered. */
  status_code: number | null
  /** Why it was not delivered, in one line (never the receiver's body). */
  error: string | null
}

export interface WebhookSender {
  /** One attempt on a connection of its own. */
  send(request: WebhookRequest): Promise<WebhookOutcome>
  /** Attempts that may share connections until `close()`. */
  session(): WebhookSession
}

export interface WebhookSession {
  send(request: WebhookRequest): Promise<WebhookOutcome>
  /** Closes the session's connections. */
  close(): void
}

export interface HttpWebhookSenderOptions {
  /** The whole attempt, from connecting to the answer's status line. */
  timeout_ms: number
  resolve?: Resolver
}

export class HttpWebhookSender implements WebhookSender {
  private readonly resolve: Resolver

  constructor(private readonly options: HttpWebhookSenderOptions) {
    this.resolve = options.resolve ?? systemResolver
  }

  async send(request: WebhookRequest): Promise<WebhookOutcome> {
    return this.attempt(request, undefined)
  }

  session(): WebhookSession {
    const agents = {
      'http:': new http.Agent({ keepAlive: true, maxSockets: 1 }),
      'https:': new https.Agent({ keepAlive: true, maxSockets: 1 }),
    }
    return {
      send: (request) => this.attempt(request, agents),
      close: () => {
        agents['http:'].destroy()
        agents['https:'].destroy()
      },
    }
  }

  private async attempt(request: WebhookRequest,
      agents: Agents | undefined): Promise<WebhookOutcome> {
    const form = checkUrlForm(request.url, request.sandbox)
    if ('refusal' in form) return refused(`endpoint URL ${form.refusal}`)
    const literal = literalAddress(form.url)
    if (literal) {
      const refusal = addressRefusal(literal, request.sandbox)
      if (refusal) return refused(`refused: ${refusal}`)
    }
    try {
      const status = await this.post(form.url, request, agents).catch((error: unknown) => {
        if (!(error instanceof StaleSocketError)) throw error
        return this.post(form.url, request, undefined)
      })
      const delivered = status >= 200 && status <= 299
      return { delivered, status_code: status, error: delivered ? null
        : `receiver answered ${status}` }
    } catch (error) {
      return { delivered: false, status_code: null, error: (error instanceof Error ? error.message
        : String(error)).slice(0, 300) }
    }
  }

  private post(url: URL, request: WebhookRequest, agents: Agents | undefined): Promise<number> {
    const transport = url.protocol === 'https:' ? https : http
    const body = Buffer.from(request.body, 'utf8')
    return new Promise<number>((resolve, reject) => {
      let answered = false
      const outgoing = transport.request(
        url,
        {
          method: 'POST',
          headers: { ...request.headers, 'content-type': 'application/json',
            'content-length': String(body.length), 'user-agent': 'partner-bank-webhooks' },
          lookup: this.checkedLookup(request.sandbox),
          // Outside a session no pooled sockets: each attempt resolves and checks afresh.
          agent: agents ? agents[url.protocol === 'https:' ? 'https:' : 'http:'] : false,
          signal: AbortSignal.timeout(this.options.timeout_ms),
        },
        (response) => {
          answered = true
          // Only the status matters; the receiver's body is drained unread.
          response.resume()
          resolve(response.statusCode ?? 0)
        },
      )
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        if (error.name === 'AbortError' || error.name === 'TimeoutError') return reject(
          new Error(`no answer within ${this.options.timeout_ms} ms`))
        if (!answered && outgoing.reusedSocket && (error.code === 'ECONNRESET'
          || error.code === 'EPIPE')) return reject(new StaleSocketError(error))
        reject(error)
      })
      outgoing.end(body)
    })
  }

  /**
   * A `lookup` for the socket: resolve, refuse when any address is not allowed, else use the
   * checked ones.
   */
  private checkedLookup(sandbox: boolean): LookupFunction {
    return (hostname, options, callback) => {
      this.resolve(hostname).then(
        (addresses) => {
          const refusal = addresses.length === 0 ? `${hostname} has no address`
            : addresses.map((a) => addressRefusal(a, sandbox)).find(Boolean)
          if (refusal) return callback(Object.assign(new Error(`refused: ${refusal}`),
            { code: 'EWEBHOOKREFUSED' }), '', 0)
          const entries = addresses.map((address) => ({ address, family: net.isIP(address) }))
          if (options.all) return (callback as unknown as (error: null,
            all: typeof entries) => void)(null, entries)
          callback(null, entries[0]!.address, entries[0]!.family)
        },
        (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
      )
    }
  }
}

type Agents = Record<'http:' | 'https:', http.Agent>

/** A kept-alive socket the receiver closed before this request reached it. */
class StaleSocketError extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause })
  }
}

function refused(error: string): WebhookOutcome {
  return { delivered: false, status_code: null, error }
}
