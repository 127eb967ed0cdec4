import fc from 'fast-check'
import type { FieldSpec } from './fuzz-schema.ts'

// Hostile values and the requests that carry them. A value is JSON text, not a JS value,
// because several of the interesting ones have no JS value that JSON.stringify would write:
// 1e309, -0, 2^63 as an integer literal, 10,000 levels of nesting, duplicate keys, raw
// bytes that are not UTF-8.

export interface Hostile {
  label: string
  /** The value as JSON text (or raw bytes), given the valid sample value it replaces. */
  raw: (sample: unknown) => string | Uint8Array
}

const textOf = (sample: unknown): string => (typeof sample === 'string' && sample.length > 1
  ? sample : 'abc')
/** `c` in the middle of the sample string, where no trimming can remove it. */
const inside = (c: string) => (sample: unknown) => {
  const s = textOf(sample)
  const k = Math.max(1, Math.floor(s.length / 2))
  return JSON.stringify(s.slice(0, k) + c + s.slice(k))
}
const literal = (text: string) => () => text
const repeatJoin = (item: string, n: number) => `[${new Array(n).fill(item).join(',')}]`
const utf8 = (s: string) => new TextEncoder().encode(s)
/** The sample string with raw bytes in its middle, so the whole body stops being UTF-8. */
const bytesInside = (bytes: number[]) => (sample: unknown) => {
  const [head, tail] = JSON.stringify(textOf(sample)).split(/(?<=^.{2})/)
  return new Uint8Array([...utf8(head!), ...bytes, ...utf8(tail!)])
}

/** Text the service must refuse with a 400 naming the field (NUL, lone surrogates, controls). */
export const refusedText: Hostile[] = [
  { label: 'NUL inside', raw: inside('\u0000') },
  { label: 'NUL alone', raw: literal('"\\u0000"') },
  { label: 'lone high surrogate', raw: inside('\ud800') },
  { label: 'lone low surrogate at the end', raw: (s) => JSON.stringify(`${textOf(s)}\udfff`) },
  { label: 'surrogates in the wrong order', raw: inside('\udc00\ud800') },
  { label: 'U+0001', raw: inside('\u0001') },
  { label: 'ANSI escape', raw: inside('\u001b[2J') },
  { label: 'backspace', raw: inside('\u0008') },
  { label: 'tab', raw: inside('\t') },
  { label: 'line feed', raw: inside('\n') },
  { label: 'carriage return', raw: inside('\r') },
  { label: 'DEL', raw: inside('\u007f') },
  { label: 'C1 NEL', raw: inside('\u0085') },
]

/** Text PostgreSQL can store and the schema may take: it must never cause a fault. */
export const exoticText: Hostile[] = [
  { label: 'line separator', raw: inside('\u2028') },
  { label: 'right-to-left override', raw: inside('\u202e') },
  { label: 'byte order mark', raw: inside('\ufeff') },
  { label: 'noncharacter U+FFFF', raw: inside('\uffff') },
  { label: 'emoji (astral plane)', raw: inside('😀👩‍👩‍👧') },
  { label: 'decomposed é', raw: inside('e\u0301') },
  { label: 'SQL quote', raw: inside("'; drop table accounts; --") },
  { label: 'empty', raw: literal('""') },
  { label: 'blanks', raw: literal('"   "') },
  { label: 'huge string within the size limit', raw: () => JSON.stringify('x'.repeat(60_000)) },
  { label: 'huge string over the size limit', raw: () => JSON.stringify('x'.repeat(70_000)) },
]

export const hostileNumbers: Hostile[] = [
  { label: '1e309', raw: literal('1e309') },
  { label: '-1e309', raw: literal('-1e309') },
  { label: '2^63', raw: literal('9223372036854775808') },
  { label: '-2^63-1', raw: literal('-9223372036854775809') },
  { label: '2^53+1', raw: literal('9007199254740993') },
  { label: '2^53-1', raw: literal('9007199254740991') },
  { label: '1.5', raw: literal('1.5') },
  { label: '-0', raw: literal('-0') },
  { label: '1e-400', raw: literal('1e-400') },
  { label: '-1', raw: literal('-1') },
  { label: '1E2', raw: literal('1E2') },
]

export const hostileShapes: Hostile[] = [
  { label: 'true', raw: literal('true') },
  { label: 'null', raw: literal('null') },
  { label: 'empty object', raw: literal('{}') },
  { label: 'empty array', raw: literal('[]') },
  { label: '10,000 nested arrays', raw: () => '['.repeat(10_000) + ']'.repeat(10_000) },
  { label: '5,000 nested objects', raw: () => '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000) },
  { label: '100,000 nested arrays (over the size limit)', raw: () => '['.repeat(100_000)
    + ']'.repeat(100_000) },
  { label: 'array of 25,000 numbers', raw: () => repeatJoin('0', 25_000) },
  { label: 'array of 8,000 valid permissions', raw: () => repeatJoin('"read"', 8_000) },
  { label: 'array of 100,000 numbers (over the size limit)', raw: () => repeatJoin('0', 100_000) },
  { label: 'prototype keys', raw: literal('{"__proto__":{"polluted":true},' +
    '"constructor":{"prototype":{"polluted":true}},"prototype":{}}') },
  { label: 'invalid UTF-8 bytes', raw: bytesInside([0xff, 0xfe]) },
  { label: 'UTF-8 encoded surrogate', raw: bytesInside([0xed, 0xa0, 0x80]) },
  { label: 'overlong UTF-8', raw: bytesInside([0xc0, 0xaf]) },
  { label: 'raw NUL byte in a string', raw: bytesInside([0x00]) },
]

export const allHostiles: Hostile[] = [...refusedText, ...exoticText, ...hostileNumbers,
  ...hostileShapes]

/** Keys that mean something to JavaScript objects. */
export const prototypeKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty',
  'valueOf', '__defineGetter__']

const marker = (i: number) => `@@fuzz-${i}@@`

function setPath(body: Record<string, unknown>, path: string[], value: unknown): void {
  let node: Record<string, unknown> = body
  for (const key of path.slice(0, -1)) {
    const next = node[key]
    if (typeof next !== 'object' || next === null) node[key] = /^\d+$/.test(key) ? [] : {}
    node = node[key] as Record<string, unknown>
  }
  node[path[path.length - 1]!] = value
}

export function getPath(body: unknown, path: string[]): unknown {
  return path.reduce<unknown>((node, key) => (typeof node === 'object' && node !== null
    ? (node as Record<string, unknown>)[key] : undefined), body)
}

/**
 * The body with each path set to the given raw JSON text (or bytes). The body is written
 * with a marker string where each value goes, and the marker is replaced in the text.
 */
export function withRawValues(body: Record<string, unknown>,
    values: Array<{ path: string[]; raw: string | Uint8Array }>): Uint8Array {
  const copy = structuredClone(body)
  values.forEach((v, i) => setPath(copy, v.path, marker(i)))
  let parts: Array<string | Uint8Array> = [JSON.stringify(copy)]
  values.forEach((v, i) => {
    parts = parts.flatMap((part) => {
      if (typeof part !== 'string') return [part]
      const pieces = part.split(JSON.stringify(marker(i)))
      return pieces.flatMap((piece, j) => (j === 0 ? [piece] : [v.raw, piece]))
    })
  })
  return concat(parts.map((p) => (typeof p === 'string' ? utf8(p) : p)))
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  return out
}

/** The object at `path` in the body's JSON text with one more member `key`, written first. */
export function withExtraKey(body: Record<string, unknown>, path: string[], key: string,
    rawValue: string): Uint8Array {
  const copy = structuredClone(body)
  if (path.length > 0 && typeof getPath(copy, path) !== 'object') setPath(copy, path, {})
  const target = path.length === 0 ? copy : (getPath(copy, path) as Record<string, unknown>)
  const hole = marker(99)
  target[hole] = 0
  return utf8(JSON.stringify(copy).replace(`"${hole}":0`, `${JSON.stringify(key)}:${rawValue}`))
}

// Generated values, for the property: each kind of field gets values of its own kind
// (mostly wrong in detail) and, as often, something hostile of any kind.

const hostileUnit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udfff', '\u001b', '\u0085',
    '\u2028', '\ufeff', 'e\u0301', '😀', "'", '"', '\\') },
)
const rawText = fc.string({ unit: hostileUnit, maxLength: 40 }).map((s) => JSON.stringify(s))
const rawNumber = fc.oneof(
  fc.integer().map(String),
  fc.maxSafeInteger().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double().map((x) => (Object.is(x, -0) ? '-0' : Number.isNaN(x) ? 'null' : Number.isFinite(x)
    ? String(x) : x > 0 ? '1e309' : '-1e309')),
)

function rawOfKind(spec: FieldSpec, sample: unknown): fc.Arbitrary<string> {
  switch (spec.kind) {
    case 'string':
      return typeof sample === 'string'
        ? fc.oneof(rawText, rawText.map((t) => JSON.stringify(sample + JSON.parse(t)))) : rawText
    case 'int':
    case 'number':
      return rawNumber
    case 'boolean':
      return fc.constantFrom('true', 'false', '"true"', '0', '1')
    case 'enum':
    case 'literal':
      return fc.oneof(fc.constantFrom(...spec.values.map((v) => JSON.stringify(v))), rawText)
    case 'array':
      return fc.array(fc.oneof(rawText, rawNumber), { maxLength: 6 }).map(
        (items) => `[${items.join(',')}]`)
    default:
      return fc.oneof(rawText, rawNumber, fc.constant('{}'))
  }
}

/** A raw value for the field: usually of its kind, sometimes one of the fixed hostile ones. */
export function rawValueFor(spec: FieldSpec, sample: unknown): fc.Arbitrary<string | Uint8Array> {
  return fc.oneof(
    { weight: 3, arbitrary: rawOfKind(spec, sample) },
    { weight: 1, arbitrary: fc.constantFrom(...allHostiles).map((h) => h.raw(sample)) },
  )
}
