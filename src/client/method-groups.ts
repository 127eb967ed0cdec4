import { contractEntries, type ClientKind, type SdkEntryFor } from '../contract/index.ts'
import type { Operation, RequestOf, ResponseOf } from '../contract/operation.ts'
import type { NatsApi } from './transport.ts'

// The SDK's method groups, derived from the contract rather than listed by hand: every
// operation becomes `client.<group>.<method>(request)`, named by its SDK path, and is
// typed from its zod schemas (the request as the caller writes it, the reply as the
// service writes it). A request that may be empty may be left out.

export type Method<O extends Operation> =
  'detach' extends keyof RequestOf<O> ? DetachableMethod<O> : PlainMethod<O>

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
