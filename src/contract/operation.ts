import type { z } from 'zod'

// An operation of the interface: the one row of the endpoint table that registration,
// validation, authorization, the AsyncAPI document, the client SDK and the operator CLI
// all read. This file and the `*-contract.ts` files import no server code, so the SDK can
// ship them.

// `card_details` lets a credential read a card's full number and CVV (svc.card.get_details);
// an operator grants it on its own, never with the others by default.
export type Permission = 'read' | 'write' | 'payments' | 'card_details'
export const permissions: readonly Permission[] = ['read', 'write', 'payments', 'card_details']

/**
 * Who may call an operation: a partner credential with one of the permissions, an operator
 * (`ops.` subjects), or a card network (`net.card.` subjects). A card network is neither a
 * partner nor a person: it has a credential kind of its own, reaches only its own subjects,
 * and its calls are not operator actions (no operator audit row, audit/operator-audit.ts).
 */
export type OperationPermission = Permission | 'operator' | 'card_network'

/**
 * Which caller may use the subject: a partner on its own id, on one of its entities, an
 * operator, or the card network.
 */
export type Scope = 'partner' | 'entity' | 'operator' | 'card_network'

/** Where the SDK offers an operation: `<group>.<method>`, e.g. `accounts.listTransactions`. */
export type SdkPath = `${string}.${string}`

/**
 * How the operator CLI reads an `ops.` operation's request from a command line, beyond
 * what it derives by itself: the command's words are the subject's tokens after `ops.`,
 * each request field is a kebab-case flag (a `<name>_id` field is `--<name>`), and the
 * field `<noun>_id` of the subject's noun is the positional word.
 */
export interface CliOptions {
  /**
   * The command's words, when they are not the subject's tokens after `ops.` (e.g. `sandbox
   * advance`).
   */
  words?: string
  /** Request fields read as positional words, in this order (instead of the `<noun>_id` rule). */
  positionals?: readonly string[]
  /** The word shown for a field: a flag's name, or a positional's `<label>`. */
  names?: Readonly<Record<string, string>>
  /** Fields given as a duration (`30d`, `12h`, `90m`, `45s` or seconds) and sent as seconds. */
  durations?: readonly string[]
  /**
   * A field given by exactly one of several bare flags, e.g. `decision` by `--approve` or
   * `--reject`; each flag (the value it sends) lists the fields it makes required.
   */
  choices?: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>
  /** Exit code for a reply that the bank sent but that is not a success (0 otherwise). */
  exitCode?(response: unknown): number
  /**
   * The reply is one part of a file: the request takes `offset`, the reply carries `data`
   * (base64), `next_offset` (null at the end), `size` and the whole file's `sha256`. The
   * command then also takes `--out <file>`: it fetches every part into the file and checks
   * the bytes written against `sha256`.
   */
  download?: boolean
}

export interface Operation<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  /** Endpoint name for `$SRV.INFO`: letters, digits, `_` and `-` only. */
  name: string
  /** Subject as partners write it; `<partner_id>` or `<entity_id>` is one wildcard token. */
  subject: string
  /**
   * Partner operations need one of the permissions; `ops.` subjects need an operator, and
   * `net.card.` subjects a card network.
   */
  permission: OperationPermission
  summary: string
  request: Req
  response: Res
  /** The SDK method, when it is not the contract's group and key (`contract.<group>.<key>`). */
  sdk?: SdkPath
  /** How the operator CLI reads the request; `ops.` operations only. */
  cli?: CliOptions
  /** This operation's request size limit, when it is not the bank's (a bulk batch is larger). */
  requestBytesMax?: number
  /**
   * Reply values carried in reply headers (field → header name), for what a caller reading
   * the body into a fixed record must not meet there. A handler returns such a field with
   * the body; unless `response` has the key, the endpoint moves it into the header. Our SDK
   * puts each header back into its result under the field's name.
   */
  replyHeaders?: Readonly<Record<string, string>>
  /**
   * The least time our SDK waits for this operation's reply, when it may rightly take
   * longer than a caller's usual timeout (a sandbox advance across months, a run of
   * thousands of collections).
   */
  replyTimeoutMs?: number
}

/** The reply-header fields of an operation, as our SDK's result and a handler carry them. */
export type HeaderFieldsOf<O> = O extends {
  replyHeaders?: infer H } ? { [F in LiteralKeys<NonNullable<H>> & string]?: string } : {}

/**
 * The named keys of a type, without its index signature: an operation's `replyHeaders`
 * is typed `Readonly<Record<string, string>> & { status: '…' }`, whose keys would
 * otherwise widen to `string`.
 */
type LiteralKeys<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] }

export type RequestOf<O extends Operation> = z.input<O['request']>
export type ResponseOf<O extends Operation> = z.output<O['response']> & HeaderFieldsOf<O>

/**
 * Declares an operation. The permission and the SDK path keep their literal types, so
 * that the SDK's method groups (partner or operator, and their names) are typed from the
 * contract alone.
 */
export function operation<
  Req extends z.ZodType,
  Res extends z.ZodType,
  const P extends Operation['permission'],
  const S extends SdkPath = never,
  const H extends Readonly<Record<string, string>> = {},
>(
  o: Operation<Req, Res> & { permission: P; sdk?: S; replyHeaders?: H },
): Operation<Req, Res> & { permission: P; sdk?: S; replyHeaders?: H } {
  return o
}

const placeholder = /<(partner_id|entity_id)>/
const placeholders = /<(partner_id|entity_id)>/g

export function scopeOf(op: Operation): Scope {
  if (op.permission === 'operator' || op.permission === 'card_network') return op.permission
  const match = placeholder.exec(op.subject)
  if (!match) throw new Error(`subject ${op.subject} has no <partner_id> or <entity_id> token`)
  return match[1] === 'partner_id' ? 'partner' : 'entity'
}

/** The names of the subject's placeholders (`partner_id`, `entity_id`), in order. */
export function placeholderNames(op: Operation): string[] {
  return [...op.subject.matchAll(placeholders)].map((match) => match[1] as string)
}

/**
 * The one builder of subjects: the operation's subject with each placeholder token
 * replaced by `fill(name)`. Subscriptions, requests and the AsyncAPI channel addresses
 * are all written through it.
 */
export function fillSubject(op: Operation, fill: (name: string) => string): string {
  return op.subject.replace(placeholders, (_match, name: string) => fill(name))
}

/** The NATS subscription subject: the placeholder token becomes `*`. */
export function subscriptionSubject(op: Operation): string {
  return fillSubject(op, () => '*')
}

/**
 * Position of the placeholder among the subject's tokens, or -1 for operator and card network
 * subjects.
 */
export function placeholderIndex(op: Operation): number {
  return op.subject.split('.').findIndex((token) => placeholder.test(token))
}

/** The concrete subject a caller sends to. */
export function subjectFor(op: Operation, id?: string): string {
  if (!placeholder.test(op.subject)) return op.subject
  if (!id || !/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`a ${op.subject} request needs a plain id token`)
  return fillSubject(op, () => id)
}
