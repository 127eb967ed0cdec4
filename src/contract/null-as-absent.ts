import type { z } from 'zod'
import { request_depth_max } from './text-rules.ts'

// `null` means "absent", in every field of every request. Partners' clients written against
// the incumbent's reference SDK serialise records with a default Jackson ObjectMapper, which
// writes every component of a record and a missing one as `null`. So before the schema, a
// key whose value is null is dropped, in the body and in every object nested in it (items
// of arrays included), when the operation knows a field of that name. An optional field
// then is simply absent, and a required one fails its schema as missing ("is required"),
// as it would had the key not been sent. A key the operation does not know stays and is
// refused as unknown, whatever its value; a null item of an array is left alone too (an
// item cannot be absent), so both stay errors.

type Def = { type: string; [key: string]: unknown }
const defOf = (schema: unknown): Def | undefined => (schema as { _zod?: { def: Def } })?._zod?.def

/** Every field name a request schema knows, at any depth and in any branch of a union. */
export function knownFieldNames(schema: z.ZodType): Set<string> {
  const names = new Set<string>()
  const seen = new Set<unknown>()
  const visit = (node: unknown): void => {
    const def = defOf(node)
    if (!def || seen.has(node)) return
    seen.add(node)
    switch (def.type) {
      case 'object':
        for (const [name, field] of Object.entries(def.shape as Record<string, unknown>)) {
          names.add(name)
          visit(field)
        }
        return
      case 'union':
        for (const option of def.options as unknown[]) visit(option)
        return
      case 'pipe':
        visit(def.in)
        return
      case 'array':
        visit(def.element)
        return
      case 'record':
        visit(def.valueType)
        return
      default:
        if (def.innerType) visit(def.innerType)
    }
  }
  visit(schema)
  return names
}

/** Returns the rule for one operation's request: the body without its absent (null) fields. */
export function nullAsAbsent(schema: z.ZodType): (body: unknown) => unknown {
  const known = knownFieldNames(schema)
  // Bounded like the text rule: nothing deeper than any request may be is looked into
  // (such a request is refused by that rule before this one runs).
  const strip = (value: unknown, depth = 0): unknown => {
    if (typeof value !== 'object' || value === null || depth > request_depth_max) return value
    if (Array.isArray(value)) {
      let changed = false
      const items = value.map((item) => {
        const next = strip(item, depth + 1)
        if (next !== item) changed = true
        return next
      })
      return changed ? items : value
    }
    let copy: Record<string, unknown> | undefined
    for (const [key, item] of Object.entries(value)) {
      const next = item === null && known.has(key) ? undefined : strip(item, depth + 1)
      if (next === item) continue
      copy ??= { ...(value as Record<string, unknown>) }
      if (next === undefined) delete copy[key]
      else copy[key] = next
    }
    return copy ?? value
  }
  return strip
}

const rules = new WeakMap<z.ZodType, (body: unknown) => unknown>()

/** The body as the operation's schema sees it (null fields it knows dropped). */
export function withoutNulls(schema: z.ZodType, body: unknown): unknown {
  let rule = rules.get(schema)
  if (!rule) rules.set(schema, (rule = nullAsAbsent(schema)))
  return rule(body)
}
