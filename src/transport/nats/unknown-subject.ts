import type { Msg } from '@nats-io/transport-node'
import type { Caller } from '../../auth/credential-store.ts'
import { BankError, Forbidden } from '../../errors.ts'
import {
  Context,
  credentialFrom,
  errorReply,
  logRequest,
  requireRole,
  subjectToken,
  uuidPattern,
  type EndpointDependencies,
} from './endpoint.ts'
import type { Fallback, Reply } from './micro.ts'
import { requestCost } from '../../limits/rate-limiter.ts'

// Requests on the bank's subjects that no operation serves: answered 404 at once. Without an
// answer a caller waits for its timeout, since a request that crossed an import into the
// bank's NATS account (a partner with an account of its own imports `svc.*.<partner_id>.>`)
// gets no "no responders" from the server. It is answered only after the same checks as an
// operation's, in the same order: the credential (401), its budget, the account it came
// through, the kind of credential and, on a partner's subjects, that the id token is the
// caller's own partner id or one of its entities (else 403, as for an operation, whether or
// not that id exists): a 404 tells a caller nothing about anyone else.

/** The subjects the fallback listens on: each kind of credential's own. */
export const unknown_subject_patterns = ['svc.>', 'ops.>', 'net.card.>'] as const

/** The endpoint name its requests are logged and counted under. */
export const unknown_subject_endpoint = '(unknown subject)'

/** Where the operations and their subjects are listed. */
const subjects_reference = 'docs/reference/subjects.md'

/** The token of a `svc.` subject that names the partner or one of its entities. */
const id_token = 2

type Scope = 'partner' | 'operator' | 'card_network'

function scopeOfSubject(subject: string): Scope {
  if (subject.startsWith('ops.')) return 'operator'
  if (subject.startsWith('net.card.')) return 'card_network'
  return 'partner'
}

export function unknownSubjectFallback(deps: EndpointDependencies): Fallback {
  return { subjects: unknown_subject_patterns, handler: unknownSubjectHandler(deps) }
}

function unknownSubjectHandler(deps: EndpointDependencies): (msg: Msg) => Promise<Reply> {
  return async (msg) => {
    const started = performance.now()
    const context = new Context(unknown_subject_endpoint, deps.log)
    const scope = scopeOfSubject(msg.subject)
    let reply: Reply
    try {
      const caller = await deps.credentials.verify(credentialFrom(msg.headers))
      context.caller = caller
      const waiting = deps.limiter?.take(caller, requestCost(msg.data.length))
      if (waiting) await waiting
      const through = deps.origin?.check(caller, msg.headers)
      if (through) await through
      requireRole(caller, scope)
      if (scope === 'partner') await requireOwnId(caller, subjectToken(msg.subject, id_token), deps)
      throw unknownSubject(msg.subject)
    } catch (error) {
      reply = errorReply(error, context)
    }
    const ms = performance.now() - started
    const code = reply.error?.code ?? 200
    if (deps.log.isLevelEnabled('info')) logRequest(context, code, ms,
      { scope, subject: msg.subject, tokenIndex: scope === 'partner' ? id_token : -1 })
    deps.metrics?.request(unknown_subject_endpoint, code, ms / 1000)
    return reply
  }
}

/**
 * Throws Forbidden unless the id token is absent, the caller's partner id, or an entity of the
 * caller's: one message whichever it is, so that nothing is learnt of another partner.
 */
async function requireOwnId(caller: Caller, id: string,
    deps: EndpointDependencies): Promise<void> {
  if (id === '' || id === caller.partnerId) return
  if (uuidPattern.test(id) && await deps.entityPartner(id.toLowerCase()) === caller.partnerId) {
    return
  }
  throw new Forbidden('the subject names another partner')
}

function unknownSubject(subject: string): BankError {
  const shown = subject.length > 200 ? `${subject.slice(0, 200)}…` : subject
  return new BankError('not_found', `no operation answers on ${shown}: the subject is unknown ` +
    `(the operations and their subjects are listed in ${subjects_reference})`)
}
