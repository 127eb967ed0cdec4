import type { FieldIssue } from './error-types.ts'
import { fieldName } from './field-path.ts'

// Text the bank will not take, in any field of any request (keys included):
//  - NUL (U+0000): PostgreSQL cannot store it in text or jsonb;
//  - unpaired UTF-16 surrogates (a JSON escape like "\ud800" with no partner): they have no
//    UTF-8 form, so the database would store U+FFFD instead of what was sent, and a hash
//    taken over what was sent would no longer match the stored row;
//  - other control characters (U+0001-U+001F, U+007F-U+009F): no field of a payment or a
//    customer record needs them, and they break statements, logs and files downstream.
// Checked once on the decoded JSON, before any schema, so every operation gets the same
// rule and a 400 that names the field.

/** Deepest nesting a request may have; no operation's shape comes near it. */
export const request_depth_max = 32

const forbidden = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

export function unstorableTextReason(value: string): string | undefined {
  const match = forbidden.exec(value)
  if (!match) return undefined
  const code = match[0].charCodeAt(0)
  if (code === 0) return 'must not contain NUL (U+0000)'
  if (code >= 0xd800
    && code <= 0xdfff) return 'must not contain an unpaired surrogate (not valid Unicode text)'
  return `must not contain control characters (found ` +
    `U+${code.toString(16).toUpperCase().padStart(4, '0')})`
}

const escapeOrC1 = /[\\\u007f-\u009f]/

/**
 * Whether the JSON text of a request can hold anything unstorableTextIssues would refuse;
 * false lets the decode step skip walking the parsed body. JSON text cannot hold a raw
 * U+0000-U+001F inside a string, and text decoded from valid UTF-8 holds no unpaired
 * surrogate, so without a backslash (an escape) and a raw U+007F-U+009F no string or key
 * breaks the rule; and with at most `request_depth_max` brackets in all, nothing is nested
 * deeper than that. Almost every request is such a text.
 */
export function mayHoldUnstorableText(json: string): boolean {
  if (escapeOrC1.test(json)) return true
  let brackets = 0
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if ((c === 0x7b || c === 0x5b) && ++brackets > request_depth_max) return true
  }
  return false
}

/** Every string (and key) in a decoded JSON body that breaks the rule, by field path. */
export function unstorableTextIssues(body: unknown): FieldIssue[] {
  const issues: FieldIssue[] = []
  const named = (path: PropertyKey[]) => (path.length > 0 ? fieldName(path) : '(body)')
  // Iterative, so that a hostile nesting depth cannot exhaust the stack.
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: body, path: [] }]
  while (stack.length > 0 && issues.length < 20) {
    const { value, path } = stack.pop()!
    if (typeof value === 'string') {
      const reason = unstorableTextReason(value)
      if (reason) issues.push({ field: named(path), message: reason })
      continue
    }
    if (typeof value !== 'object' || value === null) continue
    if (path.length >= request_depth_max) {
      issues.push(
        { field: named(path), message: `is nested more than ${request_depth_max} levels deep` })
      continue
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, path: [...path, i] }))
      continue
    }
    for (const [key, item] of Object.entries(value)) {
      const keyReason = unstorableTextReason(key)
      if (keyReason) issues.push({ field: named([...path, key]).replace(/[\u0000-\u001f\u007f-\u009f\ud800-\udfff]/g, '?'), message: `name ${keyReason}` })
      else stack.push({ value: item, path: [...path, key] })
    }
  }
  return issues.reverse()
}
