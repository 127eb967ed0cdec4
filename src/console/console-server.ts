import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { NatsConnection } from '@nats-io/transport-node'
import { BankApiError } from '../client/transport.ts'
import { page } from './console-html.ts'
import {
  auditBody,
  errorBody,
  kyc_states,
  kycListBody,
  kycShowBody,
  signInBody,
  type KycState,
  type Rendered,
} from './console-pages.ts'
import {
  ConsoleSessions,
  randomToken,
  sameSecret,
  type ConsoleSession,
  type SessionLimits,
} from './console-sessions.ts'
import { consoleCss } from './console-style.ts'
import { asset } from './console-assets.ts'
import type { Download, PageRequest } from './console-kit.ts'
import { get_routes, post_routes, route } from './console-routes.ts'
import { FormError } from './console-sandbox.ts'
import { checkHost } from './console-host.ts'
import {
  SignInThrottle,
  throttleKeys,
  type ThrottleLimits,
} from './console-throttle.ts'

// The operators' web console (BANK_CONSOLE_PORT): its own HTTP server, a client of the
// `ops.` subjects like the CLI. Security: a session id in an HttpOnly, SameSite=Strict cookie
// (Secure unless the console listens on loopback only), a CSRF token in every form checked on
// every POST (before sign-in, a double-submit cookie), a Content-Security-Policy allowing
// nothing but the console's own files (no inline script or style), no framing (documents
// only by the console's own pages), and nothing secret in a URL. It answers under a host name
// of its own only (console-host.ts), and refused sign-ins are throttled (console-throttle.ts).

export interface ConsoleLog {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

export interface ConsoleOptions {
  host: string
  /** The host name the console answers to (BANK_CONSOLE_HOST_NAME, lower case). */
  hostName?: string
  /** 0: any free port. */
  port: number
  /** The NATS connection the operators' clients send on. */
  connection: NatsConnection
  log?: ConsoleLog
  limits?: SessionLimits
  throttle?: ThrottleLimits
  timeoutMs?: number
  /** The clock of sessions and the sign-in throttle (tests give their own). */
  now?: () => number
}

export interface ConsoleServer {
  port: number
  close(): Promise<void>
}

export const session_cookie = 'bank_console'
export const pre_session_cookie = 'bank_console_pre'
export const form_bytes_max = 16 * 1024
/** A body past this is not read to its end: the connection is closed after the 413. */
const drain_bytes_max = 1024 * 1024
export const default_host_name = 'bank-console.localhost'

const page_headers: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
    "object-src 'none'; frame-src 'self'; frame-ancestors 'none'; form-action 'self'; " +
    "base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

interface Context {
  sessions: ConsoleSessions
  throttle: SignInThrottle
  hostName: string
  secure: boolean
  log: ConsoleLog | undefined
}

interface Request {
  req: http.IncomingMessage
  res: http.ServerResponse
  url: URL
  ctx: Context
}

export async function serveConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const ctx: Context = {
    sessions: new ConsoleSessions(options.connection, options.limits, options.timeoutMs,
      options.now),
    throttle: new SignInThrottle(options.throttle, options.now),
    hostName: options.hostName ?? default_host_name,
    secure: !isLoopback(options.host),
    log: options.log,
  }
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://console.invalid')
    handle({ req, res, url, ctx }).catch((error: unknown) => failed({ req, res, url, ctx }, error))
  })
  server.headersTimeout = 10_000
  server.requestTimeout = 60_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  const url = `${ctx.secure ? 'https' : 'http'}://${ctx.hostName}:${port}/`
  options.log?.info({ host: options.host, port, url }, 'operator console listening')
  return {
    port,
    close: async () => {
      await ctx.sessions.endAll()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function cookies(req: http.IncomingMessage): Map<string, string> {
  const found = new Map<string, string>()
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=')
    if (at > 0) found.set(part.slice(0, at).trim(), part.slice(at + 1).trim())
  }
  return found
}

function cookie(r: Request, name: string, value: string, maxAge?: number): string {
  const age = maxAge === undefined ? '' : `; Max-Age=${maxAge}`
  const secure = r.ctx.secure ? '; Secure' : ''
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict${secure}${age}`
}

function send(
  r: Request,
  status: number,
  body: string | Buffer,
  headers: Record<string, string | string[]> = {},
) {
  r.res.writeHead(status, {
    ...page_headers,
    'Content-Type': 'text/html; charset=utf-8',
    ...headers,
  })
  r.res.end(body)
}

function redirect(r: Request, location: string, headers: Record<string, string | string[]> = {}) {
  r.res.writeHead(303, { ...page_headers, Location: location, ...headers })
  r.res.end()
}

/** C0 controls and DEL, but tab, CR and LF (a text area's lines). */
const form_controls = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/
/** Any control character: no query value has lines. */
const query_controls = /[\x00-\x1f\x7f]/

/**
 * The POST's form. Larger than form_bytes_max: a 413 (the body read to its end, up to
 * drain_bytes_max, so that the browser sees the answer; past that the connection closes). A
 * value holding a control character (but a text area's tab and line breaks): a 400.
 */
async function readForm(r: Request): Promise<URLSearchParams> {
  const { req } = r
  const type = req.headers['content-type'] ?? ''
  if (!type.startsWith('application/x-www-form-urlencoded')) return new URLSearchParams()
  let size = 0
  const chunks: Buffer[] = []
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size <= form_bytes_max) chunks.push(chunk)
    else if (size > drain_bytes_max) {
      r.res.setHeader('Connection', 'close')
      break
    }
  }
  if (size > form_bytes_max) {
    throw new FormError(`The form is larger than the console takes (${form_bytes_max / 1024
    } KB).`, 413)
  }
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
  for (const [name, value] of form) {
    if (form_controls.test(name) || form_controls.test(value)) {
      throw new FormError('The form held a control character, which no field takes.')
    }
  }
  return form
}

function checkQuery(url: URL): void {
  for (const [name, value] of url.searchParams) {
    if (query_controls.test(name) || query_controls.test(value)) {
      throw new FormError('The address held a control character, which no field takes.')
    }
  }
}

/** The sign-in page, with a fresh pre-session CSRF token in its form and in a cookie. */
function signInPage(
  r: Request,
  status = 200,
  problem?: string,
  headers: Record<string, string> = {},
) {
  // A second sign-in page (another tab, a redirected request) keeps the token the first set.
  const kept = cookies(r.req).get(pre_session_cookie)
  const pre = kept && /^[\w-]{43}$/.test(kept) ? kept : randomToken()
  send(r, status, page({ title: 'Sign in', body: signInBody(pre, problem) }), {
    ...headers,
    'Set-Cookie': cookie(r, pre_session_cookie, pre, 3600),
  })
}

/** A credential is printable ASCII, no space or control (an empty one the bank refuses). */
const credential_shape = /^[\x21-\x7e]*$/

async function signIn(r: Request) {
  const form = await readForm(r)
  if (!sameSecret(form.get('csrf'), cookies(r.req).get(pre_session_cookie))) {
    return signInPage(r, 403, 'The form had expired. Sign in again.')
  }
  const token = (form.get('token') ?? '').trim()
  const address = r.req.socket.remoteAddress
  const keys = throttleKeys(address, token)
  const waitMs = r.ctx.throttle.waitMs(keys)
  if (waitMs > 0) {
    const seconds = Math.ceil(waitMs / 1000)
    r.ctx.log?.warn({ address }, 'operator console: sign-in throttled')
    return signInPage(r, 429, 'Too many refused sign-ins from here or with this credential: ' +
      `try again in ${Math.ceil(seconds / 60)} minute(s).`, { 'Retry-After': String(seconds) })
  }
  if (!credential_shape.test(token)) return refused(r, keys, 400, 'malformed')
  let session: ConsoleSession
  try {
    session = await r.ctx.sessions.signIn(token, address)
  } catch (error) {
    if (!(error instanceof BankApiError)) throw error
    return refused(r, keys, 401, error.code)
  }
  redirect(r, '/', {
    'Set-Cookie': [cookie(r, session_cookie, session.id), cookie(r, pre_session_cookie, '', 0)],
  })
}

/** A refused sign-in: counted by the throttle, logged with its address (never the token). */
function refused(r: Request, keys: string[], status: 400 | 401, code: number | string) {
  r.ctx.throttle.refuse(keys)
  const address = r.req.socket.remoteAddress
  r.ctx.log?.warn({ code, address }, 'operator console: sign-in refused')
  const problem = status === 400
    ? 'This is not an operator credential: a credential is one word, with no spaces or ' +
      'control characters.'
    : 'The bank refused this credential: it is not a valid operator credential.'
  return signInPage(r, status, problem)
}

async function handle(r: Request): Promise<void> {
  const { pathname } = r.url
  const method = r.req.method ?? 'GET'
  const verdict = checkHost(r.req.headers.host, { method, path: pathname + r.url.search },
    r.ctx)
  if (verdict.kind === 'redirect') return redirect(r, verdict.location)
  if (verdict.kind === 'refused') {
    const body = errorBody(verdict.message)
    return send(r, verdict.status, page({ title: 'Wrong address', body }))
  }
  if (method !== 'GET' && method !== 'POST')
    return send(r, 405, 'method not allowed', { Allow: 'GET, POST' })
  checkQuery(r.url)
  if (pathname === '/console.css') {
    return send(r, 200, consoleCss, { 'Content-Type': 'text/css; charset=utf-8' })
  }
  if (pathname === '/favicon.ico') return send(r, 404, '')
  const file = method === 'GET' ? asset(pathname) : undefined
  if (file) return send(r, 200, file.body, { 'Content-Type': file.type })
  if (pathname === '/sign-in') return method === 'POST' ? signIn(r) : signInPage(r)
  const session = r.ctx.sessions.get(cookies(r.req).get(session_cookie))
  if (!session) return method === 'POST' ? signInPage(r, 403) : redirect(r, '/sign-in')
  if (method === 'POST') {
    const form = await readForm(r)
    if (!sameSecret(form.get('csrf'), session.csrf)) {
      return send(
        r,
        403,
        page({
          title: 'Refused',
          csrf: session.csrf,
          body: errorBody("The form was not the console's own (CSRF token missing or wrong)."),
        }),
      )
    }
    return post(r, session, form)
  }
  return get(r, session)
}

async function post(r: Request, session: ConsoleSession, form: URLSearchParams): Promise<void> {
  if (r.url.pathname === '/sign-out') {
    await r.ctx.sessions.end(session.id, 'signed_out')
    return redirect(r, '/sign-in', { 'Set-Cookie': cookie(r, session_cookie, '', 0) })
  }
  const decide = /^\/kyc\/([0-9a-f-]{36})\/decide$/.exec(r.url.pathname)
  if (decide) return decideKyc(r, session, decide[1]!, form)
  const found = route(post_routes, r.url.pathname)
  if (!found) return notFound(r, session)
  const answer = await found.route.act(pageRequest(r, session), form, found.ids)
  if (typeof answer === 'string') return redirect(r, answer)
  return render(r, session, answer, answer.status)
}

async function decideKyc(
  r: Request,
  session: ConsoleSession,
  userId: string,
  form: URLSearchParams,
) {
  const decision = form.get('decision') === 'reject' ? 'reject' : 'approve'
  const reason = (form.get('reason') ?? '').trim()
  try {
    await session.client.kyc.decide({ user_id: userId, decision, ...(reason ? { reason } : {}) })
  } catch (error) {
    if (!(error instanceof BankApiError) || error.code === 401) throw error
    const shown = await session.client.kyc.show({ user_id: userId })
    const notice = `The bank refused the decision: ${error.message}`
    return render(
      r,
      session,
      { title: 'KYC review', current: '/kyc', body: kycShowBody(shown, session.csrf, notice) },
      400,
    )
  }
  redirect(r, `/kyc/${userId}?decided=${decision}`)
}

function render(r: Request, session: ConsoleSession, rendered: Rendered, status = 200) {
  send(r, rendered.status ?? status, page({ ...rendered, csrf: session.csrf,
    sandbox: session.sandbox }))
}

function pageRequest(r: Request, session: ConsoleSession): PageRequest {
  return { url: r.url, client: session.client, operator: session.operator, csrf: session.csrf }
}

function notFound(r: Request, session: ConsoleSession) {
  render(r, session, { title: 'Not found', current: '', body: errorBody('No such page.') }, 404)
}

async function get(r: Request, session: ConsoleSession): Promise<void> {
  const path = r.url.pathname
  if (path === '/kyc') return render(r, session, await kycQueue(r, session))
  if (path === '/audit') return render(r, session, await audit(r, session))
  const user = /^\/kyc\/([0-9a-f-]{36})$/.exec(path)
  if (user) return render(r, session, await kycUser(r, session, user[1]!))
  const doc = /^\/documents\/([0-9a-f-]{36})$/.exec(path)
  if (doc) return streamDocument(r, session, doc[1]!)
  const found = route(get_routes, path)
  if (!found) return notFound(r, session)
  const answer = await found.route.page(pageRequest(r, session), found.ids)
  if ('download' in answer) return sendDownload(r, answer.download)
  return render(r, session, answer)
}

/**
 * A file a page answered, as an attachment under the console's own headers (its policy,
 * no-store, nosniff): the file name reduced to letters, digits, `.`, `_` and `-`.
 */
function sendDownload(r: Request, file: Download['download']) {
  const name = file.file_name.replace(/[^\w.-]/g, '_').replace(/^\.+/, '').slice(0, 100)
  send(r, 200, file.content, {
    'Content-Type': file.content_type,
    'Content-Length': String(file.content.length),
    'Content-Disposition': `attachment; filename="${name || 'download'}"`,
  })
}

function pageNumber(url: URL): number {
  const n = Number(url.searchParams.get('page') ?? '1')
  return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : 1
}

async function kycQueue(r: Request, session: ConsoleSession): Promise<Rendered> {
  const asked = r.url.searchParams.get('state') ?? 'pending'
  const state: KycState = (kyc_states as readonly string[]).includes(asked)
    ? (asked as KycState)
    : 'pending'
  const list = await session.client.kyc.list({ state, limit: 500 })
  return { title: 'KYC review', current: '/kyc', body: kycListBody(list, state, pageNumber(r.url)) }
}

async function kycUser(r: Request, session: ConsoleSession, userId: string): Promise<Rendered> {
  const shown = await session.client.kyc.show({ user_id: userId })
  const decided = r.url.searchParams.get('decided')
  const notice =
    decided === 'approve' || decided === 'reject' ? `Decision recorded: ${decided}.` : undefined
  return { title: 'KYC review', current: '/kyc', body: kycShowBody(shown, session.csrf, notice) }
}

async function audit(r: Request, session: ConsoleSession): Promise<Rendered> {
  const q = r.url.searchParams
  const filter = {
    action: q.get('action')?.trim() || undefined,
    subject_id: q.get('subject_id')?.trim() || undefined,
    actor: q.get('actor')?.trim() || undefined,
    target: q.get('target')?.trim() || undefined,
    cursor: q.get('cursor') || undefined,
  }
  const list = await session.client.audit.list({ ...filter, limit: 50 })
  return { title: 'Audit log', current: '/audit', body: auditBody(list, filter) }
}

/** Shown inline: images and PDFs; anything else is a download. */
const inline_types = new Set([
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
  'application/pdf',
])

/** Streams a KYC/KYB document from `ops.document.get`, chunk by chunk (each call audited). */
async function streamDocument(r: Request, session: ConsoleSession, documentId: string) {
  let chunk = await session.client.kyc.document({ document_id: documentId })
  const inline = inline_types.has(chunk.content_type)
  r.res.writeHead(200, {
    ...page_headers,
    'Content-Security-Policy': "default-src 'none'; frame-ancestors 'self'",
    'X-Frame-Options': 'SAMEORIGIN',
    'Content-Type': inline ? chunk.content_type : 'application/octet-stream',
    'Content-Length': String(chunk.size),
    'Content-Disposition': inline ? 'inline' : 'attachment',
  })
  for (;;) {
    r.res.write(Buffer.from(chunk.data, 'base64'))
    if (chunk.next_offset === null) break
    chunk = await session.client.kyc.document({
      document_id: documentId,
      offset: chunk.next_offset,
    })
  }
  r.res.end()
}

function failed(r: Request, error: unknown) {
  if (r.res.headersSent) {
    r.res.destroy()
    return
  }
  const session = r.ctx.sessions.get(cookies(r.req).get(session_cookie))
  if (error instanceof BankApiError && error.code === 401 && session) {
    // The credential was revoked: the session ends with it.
    void r.ctx.sessions.end(session.id)
    return redirect(r, '/sign-in', { 'Set-Cookie': cookie(r, session_cookie, '', 0) })
  }
  const known = error instanceof BankApiError
  const form = error instanceof FormError
  if (!known && !form) r.ctx.log?.warn({ err: error }, 'operator console: request failed')
  let status = known && error.code >= 400 && error.code < 600 ? error.code : 500
  let message = known ? `${error.type}: ${error.message}` : 'The console failed to answer.'
  if (form) [status, message] = [error.status, error.message]
  send(
    r,
    status,
    page({ title: 'Error', ...(session ? { csrf: session.csrf, sandbox: session.sandbox } : {}),
      body: errorBody(message) }),
  )
}
