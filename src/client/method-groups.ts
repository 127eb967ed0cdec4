import { contractEntries, type ClientKind, type SdkEntryFor } from '../contract/index.ts'
import type { Operation, RequestOf, ResponseOf } from '../contract/operation.ts'
import type { NatsApi } from './transport.ts'
import type { PartnerMethodGroups } from './generated/partner-methods.ts'

// The SDK's method groups, derived from the contract rather than listed by hand: every
// operation becomes `client.<group>.<method>(request)`, named by its SDK path, and is
// typed from its zod schemas (the request as the caller writes it, the reply as the
// service writes it). A request that may be empty may be left out.

export type Method<O extends Operation> = string extends keyof RequestOf<O>
  // A request of no fields (`z.strictObject({})`, `Record<string, never>`) has every key.
  ? PlainMethod<O>
  : 'detach' extends keyof RequestOf<O> ? DetachableMethod<O> : PlainMethod<O>

type PlainMethod<O extends Operation> = {} extends RequestOf<O>
  ? (request?: RequestOf<O>) => Promise<ResponseOf<O>>
  : (request: RequestOf<O>) => Promise<ResponseOf<O>>

/**
 * A long operation whose request takes `detach` (src/jobs/jobs-contract.ts): called with
 * `detach: true` it resolves with the job (follow it with `followJob`), else with its report
 * as before.
 */
type DetachableMethod<O extends Operation> =
  ((request: RequestOf<O> & { detach: true }) => Promise<Extract<ResponseOf<O>,
  { job_id: string }>>) &
  ({} extends RequestOf<O>
    ? (request?: RequestOf<O> & { detach?: false | undefined }) => Promise<Exclude<ResponseOf<O>,
      { job_id: string }>>
    : (request: RequestOf<O> & { detach?: false | undefined }) => Promise<Exclude<ResponseOf<O>,
      { job_id: string }>>) &
  ((request: RequestOf<O>) => Promise<ResponseOf<O>>)

type GroupOf<E> = E extends { path: `${infer G}.${string}` } ? G : never

export type MethodGroups<E> = {
  readonly [G in GroupOf<E>]: {
    readonly [X in E as X extends { path: `${G}.${infer M}` } ? M : never]: X extends {
      op: infer O extends Operation } ? Method<O> : never
  }
}

export type PartnerMethods = MethodGroups<SdkEntryFor<'partner'>>

// `BankClient` declares its groups through the generated PartnerMethodGroups
// (src/client/generated/partner-methods.ts, `npm run sdk:types`): the same methods, with
// TSDoc and named request and reply types. Each of its methods must be exactly the one
// derived above: the same groups and names, and parameters (an optional request included)
// and reply each assignable to the other, or this does not compile.
type Exactly<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false
type Signature<F> = F extends (...args: infer P) => infer R ? [P, R] : never
type Unlike<A, B> = {
  [M in keyof A | keyof B]: M extends keyof A & keyof B
    ? Exactly<Signature<A[M]>, Signature<B[M]>> extends true ? never : M
    : M
}[keyof A | keyof B]
type Mismatched<A, B> = {
  [G in keyof A | keyof B]: G extends keyof A & keyof B
    ? `${G & string}.${Unlike<A[G], B[G]> & string}`
    : G
}[keyof A | keyof B]
/** Names each method (or group) whose generated declaration differs from the contract's. */
type Check<T extends never> = T
export type PartnerMethodsCheck = Check<Mismatched<PartnerMethodGroups, PartnerMethods>>
export type OperatorMethods = MethodGroups<SdkEntryFor<'operator'>>
export type CardNetworkMethods = MethodGroups<SdkEntryFor<'card_network'>>

type AnyMethod = (request?: unknown) => Promise<unknown>

/**
 * Builds the method groups of one client. `subjectId` gives the id that fills the
 * subject's placeholder (the partner's own id; none for `ops.` and `net.card.` subjects).
 */
export function methodGroups(
  api: NatsApi,
  client: ClientKind,
  subjectId: (op: Operation, request: Record<string, unknown>) => string | undefined,
): Record<string, Record<string, AnyMethod>> {
  const groups: Record<string, Record<string, AnyMethod>> = {}
  for (const entry of contractEntries()) {
    if (entry.client !== client) continue
    const group = (groups[entry.sdkGroup] ??= {})
    if (group[entry.sdkMethod]) throw new Error(
      `two operations are both ${client} SDK method ${entry.sdkGroup}.${entry.sdkMethod}`)
    const op = entry.operation
    group[entry.sdkMethod] = (request = {}) => api.call(op, request as RequestOf<typeof op>,
      subjectId(op, request as Record<string, unknown>))
  }
  return groups
}

/** The SDK method a client offers for an operation, found as the contract names it. */
export function methodFor(client: object, op: Operation): AnyMethod {
  const entry = contractEntries().find((e) => e.operation === op)
  const method = entry && (client as Record<string, Record<string,
    AnyMethod> | undefined>)[entry.sdkGroup]?.[entry.sdkMethod]
  if (!method) throw new Error(`no SDK method calls ${op.subject}`)
  return method
}
