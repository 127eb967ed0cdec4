import { randomUUID } from 'node:crypto'
import type { Msg, MsgHdrs } from '@nats-io/transport-node'
import type { z } from 'zod'
import type { Caller, CredentialStore } from '../../auth/credential-store.ts'
import { placeholderIndex, scopeOf, type HeaderFieldsOf, type Operation, type Permission } from '../../contract/operation.ts'
import {
  BankError,
  Forbidden,
  Invalid,
  InvalidJson,
  PayloadTooLarge,
  Unavailable,
  internalErrorBody,
  type FieldIssue,
} from '../../errors.ts'
import { isDatabaseUnavailable } from '../../db/errors.ts'
import { onPartnerClock } from '../../clock.ts'
import type { Logger } from '../../logger.ts'
import { mayHoldUnstorableText, unstorableTextIssues } from '../../contract/text-rules.ts'
import { withoutNulls } from '../../contract/null-as-absent.ts'
import { fieldName } from '../../contract/field-path.ts'
import type { Reply } from './micro.ts'
import { FixedHeadersCache } from '../../nats/fixed-headers.ts'
import type { RequestOrigin } from '../../nats-identity/request-origin.ts'
import type { AuditedCall } from '../../audit/operator-audit.ts'
import { requestCost } from '../../limits/rate-limiter.ts'

// The one endpoint wrapper: decode, authenticate, check tenancy and permission, validate,
// call the service, encode, map errors. Every operation goes through it, so none can
// forget a step. Order matters: a caller learns nothing about a body before it has shown
// who it is and that it may use the subject.

export interface RequestContext {
  caller: Caller
  requestId: string
  log: Logger
  /**
   * The `<partner_id>` or `<entity_id>` token of the subject, already checked to be the caller's.
   */
  subjectId: string | null
}

export type Handler<O extends Operation> = (
  request: z.output<O['request']>,
  context: RequestContext,
) => Promise<ReplyOf<O> | WithHeaders<ReplyOf<O>>>

/** What a handler answers: the response's fields, and those the bank sends as headers. */
type ReplyOf<O extends Operation> = z.input<O['response']> & HeaderFieldsOf<O>

/** A reply body with headers of the handler's own choosing (e.g. a paging cursor). */
export class WithHeaders<T> {
  constructor(
    readonly body: T,
    readonly headers: Record<string, string | undefined>,
  ) {}
}

export function withHeaders<T>(body: T, headers: Record<string,
    string | undefined>): WithHeaders<T> {
  return new WithHeaders(body, headers)
}

export interface Endpoint {
  operation: Operation
  handler: Handler<Operation>
}

/** The caller's partner, in a handler of a partner operation (the wrapper checked it is one). */
export function partnerOf(context: { caller: { partnerId: string | null } }): string {
  return context.caller.partnerId as string
}

/**
 * The `<entity_id>` of a bulk or debit subject; a request that repeats it in its body must
 * repeat it exactly.
 */
export function subjectEntity(
  request: { entity_id?: string | undefined },
  context: { subjectId: string | null },
): string {
  const entityId = (context.subjectId as string).toLowerCase()
  if (request.entity_id !== undefined && request.entity_id !== entityId) {
    throw Invalid.field('entity_id', 'must be the entity the subject names')
  }
  return entityId
}

export function endpoint<O extends Operation>(operation: O, handler: Handler<O>): Endpoint {
  return { operation, handler: handler as Handler<Operation> }
}

export interface EndpointDependencies {
  credentials: CredentialStore
  /** Which partner owns an entity, for `<entity_id>` subjects. */
  entityPartner(entityId: string): Promise<string | undefined>
  log: Logger
  requestBytesMax: number
  /** Check every reply against its response schema (tests turn this on). */
  validateResponses: boolean
  /** Sandbox mode; production refuses every `ops.sandbox.` subject. */
  sandbox: boolean
  /** Counts each request by endpoint and reply code, with its latency. */
  metrics?: { request(endpoint: string, code: number, seconds: number): void } | undefined
  /**
   * When partners have NATS accounts of their own: refuses a credential that arrived through
   * an account it does not belong to (nats-identity/request-origin.ts).
   */
  origin?: RequestOrigin | undefined
  /**
   * The credential's request budget (limits/): nothing when a request may go on, a promise
   * when the budget must be asked of the database first; throws (or rejects) RateLimited
   * when it is spent. Taken right after the credential is known, before anything is read: a
   * request costs a token for each 64 KiB of it begun (limits/rate-limiter.ts, requestCost).
   */
  limiter?: { take(caller: Caller, cost?: number): Promise<void> | undefined } | undefined
  /**
   * The operator audit (audit/operator-audit.ts): an audited `ops.` operation's handler runs
   * through it, so that its audit row commits with the handler's change.
   */
  audit?: { forOperation(operation: Operation): AuditedCall | undefined } | undefined
}

/** The subjects only a sandbox answers (its clock, messages and OTPs). */
export const sandbox_subject_prefix = 'ops.sandbox.'
/** A partner's own sandbox subjects (its clock): answered in sandbox mode only too. */
export const partner_sandbox_subject_prefix = 'svc.sandbox.'

const encoder = new TextEncoder()
/**
 * Refuses bytes that are not UTF-8 (one decoder for every request: decode() keeps no state between
 * calls).
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function wrapEndpoint(target: Endpoint, deps: EndpointDependencies): (
    msg: Msg) => Promise<Reply> {
  const { operation } = target
  const scope = scopeOf(operation)
  const tokenIndex = placeholderIndex(operation)
  const toReply = replyEncoder(operation)
  // One rule for every sandbox operation, present and future: production refuses them
  // after learning who calls (a missing credential is still a 401) and before the body.
  const sandboxOnly = !deps.sandbox && (operation.subject.startsWith(sandbox_subject_prefix) ||
    operation.subject.startsWith(partner_sandbox_subject_prefix))
  // Which account a request came through, when partners have NATS accounts of their own.
  const origin = deps.origin
  const limiter = deps.limiter
  const audited = deps.audit?.forOperation(operation)
  return async (msg) => {
    const started = performance.now()
    const context = new Context(operation.name, deps.log)
    let reply: Reply
    try {
      const caller = await deps.credentials.verify(credentialFrom(msg.headers))
      context.caller = caller
      if (limiter) {
        const waiting = limiter.take(caller, requestCost(msg.data.length))
        if (waiting) await waiting
      }
      if (origin) {
        const through = origin.check(caller, msg.headers)
        if (through) await through
      }
      const subjectId = tokenIndex < 0 ? null : subjectToken(msg.subject, tokenIndex)
      // Only an entity's owner is looked up: every other check needs nothing to wait for.
      const owned = authorize(caller, operation, scope, subjectId, deps)
      if (owned) await owned
      if (sandboxOnly) throw new Forbidden(
        'sandbox subjects are answered in sandbox mode only (BANK_SANDBOX=true)')
      const request = decode(msg.data, operation, operation.requestBytesMax ?? deps.requestBytesMax)
      context.subjectId = subjectId
      const handle = () => onCallersClock(deps.sandbox, caller,
        () => target.handler(request, context))
      const result = audited
        ? await audited.run(caller, request, subjectId, handle)
        : await handle()
      reply = toReply(result, deps.validateResponses)
    } catch (error) {
      reply = errorReply(error, context)
    }
    const ms = performance.now() - started
    const code = reply.error?.code ?? 200
    if (deps.log.isLevelEnabled('info')) logRequest(context, code, ms,
      { scope, subject: msg.subject, tokenIndex })
    deps.metrics?.request(operation.name, code, ms / 1000)
    return reply
  }
}

/** In the sandbox a partner's request runs by its own clock (src/clock.ts). */
function onCallersClock<T>(sandbox: boolean, caller: Caller, fn: () => T): T {
  return sandbox && caller.partnerId ? onPartnerClock(caller.partnerId, fn) : fn()
}

/**
 * The request's log line. A refusal's (4xx) and a failure's also name the error type and the
 * partner: the caller's, or the one the subject names when no credential was accepted (null
 * for an operator's or a card network's own subjects); an entity subject's also its entity.
 */
export function logRequest(context: Context, code: number, ms: number,
    { scope, subject, tokenIndex }: { scope: string; subject: string; tokenIndex: number }): void {
  const rounded = Math.round(ms * 10) / 10
  if (code < 400) {
    context.log.info({ code, ms: rounded }, 'request')
    return
  }
  const token = tokenIndex < 0 ? null : subjectToken(subject, tokenIndex)
  const partnerId = (context.caller as Caller | undefined)?.partnerId
    ?? (scope === 'partner' ? token : null)
  context.log.info({ code, ms: rounded, error_type: context.errorType ?? null,
    partner_id: partnerId, ...(scope === 'entity' ? { entity_id: token } : {}) }, 'request')
}

/**
 * A request's context. Its id and logger are made when first needed (a log line, an internal
 * error's body): most requests log nothing below `info`, and an id and a pino child per
 * request are garbage the busy path need not make. A class, so that the lazy `log` is one
 * getter on the prototype rather than a new accessor (and closure) in every request's object.
 */
export class Context implements RequestContext {
  caller!: Caller
  subjectId: string | null = null
  /** The refusal's or failure's error type, for the request's log line. */
  errorType: string | undefined
  private requestLog: Logger | undefined
  private id: string | undefined

  constructor(
    private readonly endpoint: string,
    private readonly parentLog: Logger,
  ) {}

  get requestId(): string {
    return (this.id ??= randomUUID())
  }

  get log(): Logger {
    return (this.requestLog ??= this.parentLog.child(
      { request_id: this.requestId, endpoint: this.endpoint }))
  }
}

/** The subject's `index`th dot-separated token ('' when it has fewer). */
export function subjectToken(subject: string, index: number): string {
  let start = 0
  for (let i = 0; i < index; i++) {
    const dot = subject.indexOf('.', start)
    if (dot < 0) return ''
    start = dot + 1
  }
  const end = subject.indexOf('.', start)
  return end < 0 ? subject.slice(start) : subject.slice(start, end)
}

/**
 * Encodes a handler's result: headers it chose (`withHeaders`), then each of the
 * operation's `replyHeaders` fields that the response schema does not have, moved out of
 * the body into its header.
 */
function replyEncoder(operation: Operation): (result: unknown, validate: boolean) => Reply {
  const bodyKeys = new Set(Object.keys((operation.response as { shape?: object }).shape ?? {}))
  const moved = Object.entries(operation.replyHeaders ?? {}).filter(
    ([field]) => !bodyKeys.has(field))
  const movedFields = new Set(moved.map(([field]) => field))
  // The moved fields' values come from small sets (a payment's status): their headers are
  // made once per set of values, not for every reply.
  const fixed = moved.length > 0 ? new FixedHeadersCache() : undefined
  return (result, validate) => {
    let body = result
    const headers: Record<string, string> = {}
    const chosen = result instanceof WithHeaders
    if (chosen) {
      body = result.body
      for (const [name, value] of Object.entries(result.headers)) if (
        value !== undefined) headers[name] = value
    }
    if (moved.length > 0 && typeof body === 'object' && body !== null) {
      const all = body as Record<string, unknown>
      for (const [field, header] of moved) if (all[field] !== undefined) headers[header] =
        String(all[field])
      // Copied without the moved fields rather than deleted from a copy: a deleted
      // property leaves V8 a slow object, which costs every reply its JSON.stringify.
      const rest: Record<string, unknown> = {}
      for (const key of Object.keys(all)) if (!movedFields.has(key)) rest[key] = all[key]
      body = rest
    }
    if (validate) operation.response.parse(body)
    const reply: Reply = { body: encoder.encode(JSON.stringify(body)) }
    if (Object.keys(headers).length > 0) {
      reply.headers = headers
      if (fixed && !chosen) reply.fixedHeaders = fixed.headers(headers)
    }
    return reply
  }
}

export function credentialFrom(headers: MsgHdrs | undefined): string | undefined {
  if (!headers) return undefined
  const token = headers.get('token')
  if (token) return token.trim()
  const authorization = headers.get('Authorization') || headers.get('authorization')
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim())
  return match?.[1]
}

/**
 * Throws Forbidden unless the caller may use the subject. Returns a promise only for an
 * `<entity_id>` subject, whose owner is looked up; every other check is done on return.
 */
function authorize(
  caller: Caller,
  operation: Operation,
  scope: ReturnType<typeof scopeOf>,
  subjectId: string | null,
  deps: EndpointDependencies,
): Promise<void> | undefined {
  requireRole(caller, scope)
  if (scope === 'operator' || scope === 'card_network') return undefined
  if (scope === 'entity') {
    if (!subjectId || !uuidPattern.test(subjectId)) throw anotherEntity()
    return deps.entityPartner(subjectId.toLowerCase()).then((partnerId) => {
      if (partnerId !== caller.partnerId) throw anotherEntity()
      requirePermission(caller, operation)
    })
  }
  if (scope === 'partner' && subjectId !== caller.partnerId) {
    throw new Forbidden('the subject names another partner')
  }
  requirePermission(caller, operation)
  return undefined
}

/**
 * Throws Forbidden unless the credential is of the kind the subject's scope is for. Each kind of
 * credential has subjects of its own: partners `svc.`, operators `ops.`, a card network
 * `net.card.` (none of the others' is any use on them).
 */
export function requireRole(caller: Caller, scope: ReturnType<typeof scopeOf>): void {
  if (scope === 'operator') {
    if (caller.role !== 'operator') throw new Forbidden('an operator credential is required')
    return
  }
  if (scope === 'card_network') {
    if (caller.role !== 'card_network') throw new Forbidden(
      'a card network credential is required')
    return
  }
  if (caller.role !== 'partner') throw new Forbidden(caller.role === 'operator'
    ? 'operator credentials act on ops. subjects only'
    : 'card network credentials act on net.card. subjects only')
}

function anotherEntity(): Forbidden {
  return new Forbidden('the subject names an entity of another partner')
}

function requirePermission(caller: Caller, operation: Operation): void {
  const needed = operation.permission as Permission
  if (!caller.permissions.has(needed)) throw new Forbidden(
    `the credential lacks the ${needed} permission`)
}

function decode(data: Uint8Array, operation: Operation, bytesMax: number): unknown {
  if (data.length > bytesMax) throw new PayloadTooLarge(data.length, bytesMax)
  let body: unknown = {}
  let text = ''
  if (data.length > 0) {
    try {
      text = strictUtf8.decode(data)
      body = JSON.parse(text)
    } catch {
      throw new InvalidJson()
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Invalid('request body must be a JSON object',
      [{ field: '(body)', message: 'must be a JSON object' }])
  }
  // One rule for every text of every operation, before the schema: what the database cannot
  // store or the ledger could not hash as stored never reaches a service or a batch.
  const textIssues = mayHoldUnstorableText(text) ? unstorableTextIssues(body) : []
  if (textIssues.length > 0) throw invalidRequest(textIssues)
  // And one rule for absence: a null field is a field not sent (null-as-absent.ts). JSON
  // writes a null only as `null`, so a text without those letters has none to drop.
  if (text.includes('null')) body = withoutNulls(operation.request, body)
  const parsed = operation.request.safeParse(body)
  if (!parsed.success) {
    throw invalidRequest(parsed.error.issues.flatMap((issue) => issueToFields(issue, body)))
  }
  return parsed.data
}

function invalidRequest(details: FieldIssue[]): Invalid {
  return Invalid.listing('invalid request', details)
}

function issueToFields(issue: z.core.$ZodIssue, body: unknown): FieldIssue[] {
  const path = fieldName(issue.path)
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map(
      (key) => ({ field: fieldName([...issue.path, key]), message: 'is not a known field' }))
  }
  if (issue.path.length > 0 && valueAt(body, issue.path) === undefined) {
    return [{ field: path, message: 'is required' }]
  }
  return [{ field: path || '(body)', message: issue.message }]
}

/** The request's value at a schema path; undefined when the field was not sent. */
function valueAt(body: unknown, path: PropertyKey[]): unknown {
  let value = body
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return value
}

export function errorReply(error: unknown, context: { requestId: string; log: Logger
    errorType: string | undefined }): Reply {
  if (isDatabaseUnavailable(error)) {
    // An outage (away, stalled, out of disk or memory: db/errors.ts), not a mistake: the
    // caller may try again; the service recovers by itself. The log keeps the SQLSTATE.
    context.log.warn({ err: error }, 'database unavailable')
    error = new Unavailable('the bank cannot use its database right now; try again shortly')
  }
  if (error instanceof BankError) {
    context.errorType = error.type
    const reply: Reply = {
      body: encoder.encode(JSON.stringify(error.toBody())),
      error: { code: error.code, message: oneLine(error.message) },
    }
    if (error.headers) reply.headers = error.headers
    return reply
  }
  // A programmer's mistake or an outage: the caller gets a correlation id, never internals.
  context.log.error({ err: error }, 'request failed')
  const body = internalErrorBody(context.requestId)
  context.errorType = body.error.type
  return { body: encoder.encode(JSON.stringify(body)),
    error: { code: 500, message: body.error.message } }
}

function oneLine(message: string): string {
  return message.replace(/[\r\n]+/g, ' ').slice(0, 300)
}
