import type { z } from 'zod'

// An operation of the interface: the one row of the endpoint table that registration,
// validation, authorization, the AsyncAPI document and the client SDK all read. This file
// and the `*-contract.ts` files import no server code, so the SDK can ship them.

export type Permission = 'read' | 'write' | 'payments'
export const permissions: readonly Permission[] = ['read', 'write', 'payments']

/** Which caller may use the subject: a partner on its own id, on one of its entities, or an operator. */
export type Scope = 'partner' | 'entity' | 'operator'

export interface Operation<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  /** Endpoint name for `$SRV.INFO`: letters, digits, `_` and `-` only. */
  name: string
  /** Subject as written in interface.md; `<partner_id>` or `<entity_id>` is one wildcard token. */
  subject: string
  /** Partner operations need one of the three permissions; `ops.` subjects need an operator. */
  permission: Permission | 'operator'
  summary: string
  request: Req
  response: Res
}

export type RequestOf<O extends Operation> = z.input<O['request']>
export type ResponseOf<O extends Operation> = z.output<O['response']>

export function operation<Req extends z.ZodType, Res extends z.ZodType>(o: Operation<Req, Res>): Operation<Req, Res> {
  return o
}

const placeholder = /<(partner_id|entity_id)>/

export function scopeOf(op: Operation): Scope {
  if (op.permission === 'operator') return 'operator'
  const match = placeholder.exec(op.subject)
  if (!match) throw new Error(`subject ${op.subject} has no <partner_id> or <entity_id> token`)
  return match[1] === 'partner_id' ? 'partner' : 'entity'
}

/** The NATS subscription subject: the placeholder token becomes `*`. */
export function subscriptionSubject(op: Operation): string {
  return op.subject.replace(placeholder, '*')
}

/** Position of the placeholder among the subject's tokens, or -1 for operator subjects. */
export function placeholderIndex(op: Operation): number {
  return op.subject.split('.').findIndex((token) => placeholder.test(token))
}

/** The concrete subject a caller sends to. */
export function subjectFor(op: Operation, id?: string): string {
  if (!placeholder.test(op.subject)) return op.subject
  if (!id || !/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`a ${op.subject} request needs a plain id token`)
  return op.subject.replace(placeholder, id)
}
