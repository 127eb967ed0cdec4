import assert from 'node:assert/strict'
import type { z } from 'zod'
import type { Operation } from '../../src/contract/index.ts'
import { withoutNulls } from '../../src/contract/null-as-absent.ts'
import type { RawReply } from '../support/harness.ts'
import { assertErrorReply } from './error-reply.ts'

// The fuzz suite's view of the endpoint table: every field of every request schema, read
// from the zod definitions themselves (so a new field is fuzzed without anyone listing
// it), and an oracle that says, for any bytes sent, what the reply must be.

export type FieldKind =
  'string' | 'int' | 'number' | 'boolean' | 'enum' | 'literal' | 'array' | 'object' | 'other'

export interface FieldSpec {
  /** Path from the body, e.g. ['address', 'city'] or ['permissions', '0'] for array items. */
  path: string[]
  kind: FieldKind
  /** Allowed values of an enum or literal, for generating valid ones. */
  values: readonly unknown[]
}

type Def = { type: string; [key: string]: unknown }
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def

/** The schema under wrappers that do not change the JSON shape (optional, default, pipe). */
function unwrap(schema: unknown): Def {
  let def = defOf(schema)
  for (;;) {
    if (def.type === 'optional' || def.type === 'default' || def.type === 'nullable') def =
      defOf(def.innerType)
    else if (def.type === 'pipe') def = defOf(def.in)
    else return def
  }
}

function kindOf(def: Def): FieldKind {
  if (def.type === 'number') return String(def.format ?? '').includes('int') ? 'int' : 'number'
  if (['string', 'boolean', 'enum', 'literal', 'array', 'object'].includes(
    def.type)) return def.type as FieldKind
  return 'other'
}

function valuesOf(def: Def): readonly unknown[] {
  if (def.type === 'enum') return Object.values(def.entries as Record<string, unknown>)
  if (def.type === 'literal') return def.values as unknown[]
  return []
}

/** Every field a request schema names, nested objects and array items included; unions merged. */
export function fieldsOf(schema: z.ZodType): FieldSpec[] {
  const found = new Map<string, FieldSpec>()
  const visit = (node: unknown, path: string[]): void => {
    const def = unwrap(node)
    if (def.type === 'union') {
      for (const option of def.options as unknown[]) visit(option, path)
      return
    }
    if (path.length > 0) {
      const key = path.join('.')
      const spec = found.get(key)
      if (!spec) found.set(key, { path, kind: kindOf(def), values: valuesOf(def) })
      else spec.values = [...new Set([...spec.values, ...valuesOf(def)])]
    }
    if (def.type === 'object') {
      for (const [key, child] of Object.entries(def.shape as Record<string, unknown>)) visit(child,
        [...path, key])
    }
    if (def.type === 'array') visit(def.element, [...path, '0'])
  }
  visit(schema, [])
  return [...found.values()]
}

/** Paths of the object-valued places in a schema, the body itself as []. */
export function objectPathsOf(schema: z.ZodType): string[][] {
  return [[], ...fieldsOf(schema).filter((f) => f.kind === 'object').map((f) => f.path)]
}

// Text the issue names as unstorable or unwanted: NUL, the other C0 and C1 control
// characters, and UTF-16 surrogates without their partner.
const refusedText = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

export function isRefusedText(value: string): boolean {
  return refusedText.test(value)
}

interface Visit {
  value: unknown
  key: string | undefined
  parent: Visit | undefined
}

function pathOf(visit: Visit | undefined, key?: string): string {
  const keys = key === undefined ? [] : [key]
  for (let v = visit; v?.key !== undefined; v = v.parent) keys.unshift(v.key)
  return keys.join('.') || '(body)'
}

/** Paths of every string value (and every key) of a decoded body that holds refused text. */
export function refusedTextFields(body: unknown): string[] {
  const found: string[] = []
  // Iterative, with paths built only when needed: bodies here nest 10,000 levels deep.
  const stack: Visit[] = [{ value: body, key: undefined, parent: undefined }]
  while (stack.length > 0) {
    const visit = stack.pop()!
    if (typeof visit.value === 'string') {
      if (isRefusedText(visit.value)) found.push(pathOf(visit))
    } else if (typeof visit.value === 'object' && visit.value !== null) {
      for (const [key, item] of Object.entries(visit.value)) {
        if (isRefusedText(key)) found.push(pathOf(visit, key))
        else stack.push({ value: item, key, parent: visit })
      }
    }
  }
  return found
}

/** The fields zod's verdict on a body names, mapped as the endpoint maps them. */
export function schemaIssueFields(op: Operation, body: unknown): string[] {
  // The service reads a null field it knows as absent (src/contract/null-as-absent.ts).
  const parsed = op.request.safeParse(withoutNulls(op.request, body))
  if (parsed.success) return []
  return parsed.error.issues.flatMap((issue) => {
    const path = issue.path.map(String)
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => [...path, key].join('.'))
    return [path.join('.') || '(body)']
  })
}

export type Expectation =
  | { reply: 'too_large' }
  | { reply: 'json_400' }
  | { reply: 'body_400' }
  /** A 400 whose details name one of `fields` (or a field inside or around one of them). */
  | { reply: 'field_400'; fields: string[] }
  /** The schema takes it: any answer but a fault (business rules may still refuse it). */
  | { reply: 'no_fault' }

/** What the service must answer to `data` on `op`, decided without asking the service. */
export function expectationFor(op: Operation, data: Uint8Array, bytesMax: number,
    mutated: string[]): Expectation {
  if (data.length > (op.requestBytesMax ?? bytesMax)) return { reply: 'too_large' }
  let body: unknown
  try {
    body = data.length === 0 ? {} : JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(
      data))
  } catch {
    return { reply: 'json_400' }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { reply: 'body_400' }
  const refused = refusedTextFields(body)
  // Refused text alone must be named precisely; with schema issues too, either may be.
  if (refused.length > 0) return { reply: 'field_400',
    fields: [...refused, ...schemaIssueFields(op, body), ...mutated] }
  const issues = schemaIssueFields(op, body)
  if (issues.length > 0) return { reply: 'field_400', fields: [...issues, ...mutated] }
  return { reply: 'no_fault' }
}

/** Words and shapes that would show the service's insides: SQL, drivers, stack frames, paths. */
const internals =
  /\bSQL\b|sqlstate|stack|\bat \/|\bat async\b|postgres|pglite|kysely|\brelation\b|syntax error|violates|constraint|duplicate key|node_modules|\/work\/|\/home\/|\/tmp\/|\.ts:\d|TypeError|RangeError|ReferenceError|undefined is not|cannot read prop/i

export function assertNoInternals(reply: RawReply, context: string): void {
  const text = JSON.stringify(reply.body ?? null) + JSON.stringify(reply.headers)
  assert.doesNotMatch(text, internals,
    `${context}: the reply shows internals: ${text.slice(0, 400)}`)
}

/**
 * Field names compared with array indexes written alike (`payments[3].amount` is
 * `payments.3.amount`).
 */
const dotted = (field: string): string => field.replace(/\[(\d+)\]/g, '.$1')
const related = (x: string, y: string): boolean => {
  const [a, b] = [dotted(x), dotted(y)]
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`)
}

/**
 * Checks one reply against the oracle; no 5xx at all unless `allowUnavailable` (documented 503).
 */
export function assertReply(reply: RawReply, expected: Expectation, context: string,
    allowUnavailable = false): void {
  const seen = `${context}: got ${reply.code} ${JSON.stringify(reply.body).slice(0, 600)}`
  assertNoInternals(reply, context)
  if (allowUnavailable && reply.code === 503) return assertErrorReply(reply, 503, 'unavailable',
    context)
  assert.ok(reply.code < 500, `a fault — ${seen}`)
  if (reply.code !== 200) assertErrorReply(reply, reply.code, undefined, context)
  const details: string[] = (reply.body?.error?.details ?? []).map(
    (d: { field?: unknown }) => String(d.field))
  switch (expected.reply) {
    case 'too_large':
      return assertErrorReply(reply, 400, 'payload_too_large', context)
    case 'json_400':
      return assertErrorReply(reply, 400, undefined, context)
    case 'body_400':
      assertErrorReply(reply, 400, 'invalid_request', context)
      return assert.deepEqual(details, ['(body)'], seen)
    case 'field_400':
      assertErrorReply(reply, 400, 'invalid_request', context)
      assert.ok(details.length > 0 && !details.includes('(body)'),
        `details must name fields — ${seen}`)
      return assert.ok(
        details.some((d) => expected.fields.some((f) => related(d, f))),
        `details must name one of ${JSON.stringify(expected.fields)} — ${seen}`,
      )
    case 'no_fault':
      if (reply.code === 400) assert.ok(details.length > 0
        || reply.body.error.type !== 'invalid_request', `a 400 names its field — ${seen}`)
  }
}
