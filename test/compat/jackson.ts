import { isRecordType, listElement, mapValue, sdkRecord, type JavaType, type RecordName } from './sdk-records.ts'

// What a default Jackson ObjectMapper does with the SDK's records, generated from the list in
// sdk-records.ts: how it writes a request, and whether it could read a reply. The Java
// bridge (java-bridge.ts) asks real Jackson the same questions; the suite checks that both agree.

/**
 * `always`: a default ObjectMapper, every component written, absent ones as null.
 * `non_null`: `JsonInclude.Include.NON_NULL`, null components left out (nested ones too).
 * `sdk`: what the SDK's service of the record configures — NON_NULL for EntityService,
 * the default for UserService and AccountService.
 */
export type Inclusion = 'sdk' | 'always' | 'non_null'

/** A record's component values by name; components left out are null, 0 or false. */
export type RecordValues = { readonly [component: string]: unknown }

const int_max = 2 ** 31 - 1
const int_min = -(2 ** 31)

function resolveInclusion(record: RecordName, inclusion: Inclusion): 'always' | 'non_null' {
  if (inclusion !== 'sdk') return inclusion
  return sdkRecord(record).service === 'EntityService' ? 'non_null' : 'always'
}

/**
 * The JSON text Jackson writes for the record built from `values`: its components in
 * declaration order, `String`, lists, maps and nested records as given or null, `int` as
 * given or 0, `boolean` as given or false, an empty record as `{}`. NON_NULL leaves out null
 * components and null map entries (nested maps too), but not null list items. A map's keys
 * keep the order `values` gives them, except that JavaScript puts integer-like keys first
 * where Java's LinkedHashMap keeps them in place: the suite uses no such keys.
 */
export function jacksonWrite(record: RecordName, values: RecordValues,
    inclusion: Inclusion = 'sdk'): string {
  return JSON.stringify(recordTree(record, values, resolveInclusion(record, inclusion)))
}

function recordTree(record: string, values: RecordValues,
    inclusion: 'always' | 'non_null'): Record<string, unknown> {
  const { components } = sdkRecord(record)
  const known = new Set(components.map(([name]) => name))
  for (const key of Object.keys(values)) {
    if (!known.has(key)) throw new Error(
      `${record} has no component ${key}: a Java constructor could not be given it`)
  }
  const tree: Record<string, unknown> = {}
  for (const [name, type] of components) {
    const value = componentValue(`${record}.${name}`, type, values[name], inclusion)
    if (value === null && inclusion === 'non_null') continue
    tree[name] = value
  }
  return tree
}

function componentValue(where: string, type: JavaType, value: unknown,
    inclusion: 'always' | 'non_null'): unknown {
  if (type === 'int' || type === 'boolean') return primitiveValue(where, type, value)
  if (value === undefined || value === null) return null
  if (type === 'String') {
    if (typeof value !== 'string') throw new Error(`${where}: a Java String, not ${typeof value}`)
    return value
  }
  if (isRecordType(type)) return recordTree(type, value as RecordValues, inclusion)
  const element = listElement(type)
  if (element !== undefined) {
    if (!Array.isArray(value)) throw new Error(`${where}: a Java ${type}, not ${typeof value}`)
    return value.map((item, index) => componentValue(`${where}[${index}]`, element, item,
      inclusion))
  }
  const mapped = mapValue(type)
  if (mapped !== undefined) return mapTree(where, type, mapped, value, inclusion)
  if (type === 'Object') return objectValue(where, value, inclusion)
  throw new Error(`${where}: the suite writes no ${type} component`)
}

/** A Java int or boolean: never null (Jackson writes 0 or false for a missing one). */
function primitiveValue(where: string, type: 'int' | 'boolean', value: unknown): unknown {
  if (type === 'int') {
    const int = value ?? 0
    if (!Number.isInteger(int) || (int as number) > int_max
      || (int as number) < int_min) throw new Error(`${where}: a Java int, not ${String(value)}`)
    return int
  }
  const bool = value ?? false
  if (typeof bool !== 'boolean') throw new Error(`${where}: a Java boolean, not ${String(value)}`)
  return bool
}

/** A Java Map<String, `mapped`>: each entry written (a null one left out under non_null). */
function mapTree(where: string, type: JavaType, mapped: JavaType, value: unknown,
    inclusion: 'always' | 'non_null'): Record<string, unknown> {
  if (!isObject(value)) throw new Error(`${where}: a Java ${type}, not ${typeof value}`)
  const tree: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const written = componentValue(`${where}.${key}`, mapped, item, inclusion)
    if (written === null && inclusion === 'non_null') continue
    tree[key] = written
  }
  return tree
}

/** An `Object` as Jackson writes what it read from JSON: a map, a list or a scalar. */
function objectValue(where: string, value: unknown, inclusion: 'always' | 'non_null'): unknown {
  if (Array.isArray(value)) return value.map((item, index) => (item === null ? null
    : objectValue(`${where}[${index}]`, item, inclusion)))
  if (isObject(value)) return componentValue(where, 'Map<String,Object>', value, inclusion)
  if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number'
    && Number.isFinite(value))) return value
  throw new Error(`${where}: not a JSON value: ${String(value)}`)
}

/**
 * Why a default ObjectMapper could not read `body` into the record, or what it would read
 * only by bending a type: [] when it reads cleanly. Any key that is not a component fails
 * (FAIL_ON_UNKNOWN_PROPERTIES), nested records and list items included; a `String` component
 * takes a string or null, a `boolean` a boolean, an `int` an integer, a list an array, a
 * record an object, `Metadata` an object of strings, a `Map<String,X>` an object of X,
 * `Object` anything.
 */
export function replyProblems(record: RecordName, body: unknown): string[] {
  const problems: string[] = []
  checkRecord(record, body, record, problems)
  return problems
}

function checkRecord(record: string, value: unknown, where: string, problems: string[]): void {
  if (!isObject(value)) {
    problems.push(`${where}: ${describe(value)} where the record ${record} is read (an object)`)
    return
  }
  const components = new Map(sdkRecord(record).components)
  for (const [key, item] of Object.entries(value)) {
    const type = components.get(key)
    if (type === undefined) problems.push(
      `${where}.${key}: not a component of ${record} (Jackson fails on an unknown key)`)
    else checkComponent(type, item, `${where}.${key}`, problems)
  }
}

function checkComponent(type: JavaType, value: unknown, where: string, problems: string[]): void {
  const expect = (ok: boolean, wanted: string) => {
    if (!ok) problems.push(`${where}: ${describe(value)} where a ${wanted} is read`)
  }
  if (type === 'String') return expect(value === null || typeof value === 'string',
    'String (a string or null)')
  if (type === 'boolean') return expect(typeof value === 'boolean', 'boolean')
  if (type === 'int') return expect(Number.isInteger(value), 'int')
  // a reference type may be null; an Object is any JSON value
  if (value === null || type === 'Object') return
  if (type === 'Metadata') {
    if (!isObject(value)) return expect(false, 'Metadata (an object of strings)')
    for (const [key, item] of Object.entries(value)) {
      if (typeof item !== 'string') problems.push(
        `${where}.${key}: ${describe(item)} where a Metadata value (a String) is read`)
    }
    return
  }
  const element = listElement(type)
  if (element !== undefined) {
    if (!Array.isArray(value)) return expect(false, `${type} (an array)`)
    value.forEach((item, index) => checkComponent(element, item, `${where}[${index}]`, problems))
    return
  }
  const mapped = mapValue(type)
  if (mapped !== undefined) {
    if (!isObject(value)) return expect(false, `${type} (an object)`)
    for (const [key, item] of Object.entries(value)) checkComponent(mapped, item, `${where}.${key}`,
      problems)
    return
  }
  if (isRecordType(type)) return checkRecord(type, value, where, problems)
  throw new Error(`${where}: sdk-records.ts names a type the checks do not know: ${type}`)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `${typeof value} ${JSON.stringify(value)}`.slice(0, 80)
}
