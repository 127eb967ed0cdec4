// `npm run sdk:types`: writes src/client/generated/partner-methods.ts, the declarations of the
// partner SDK's methods: one interface per method group (`client.accounts`, …) with one
// documented signature per operation, and a named type for each request and reply
// (`TransferRequest`, `Transaction`, `Account`, …). Every named type is an alias of the
// contract's own zod-inferred type (RequestOf/ResponseOf), so it cannot drift from what the
// bank validates; src/client/method-groups.ts checks at compile time that each declared
// method is exactly the one derived from the contract. The TSDoc of a method is its
// operation's summary, permission and subject (src/contract), the error types it throws
// (scripts/sdk-method-table.ts, with errorTypes' meaning) and an example made from the
// required fields of its request schema. test/client/sdk-types.test.ts renders the file
// again and fails when the checked-in copy differs: run this after changing the contract.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { jsonSchemaOf } from '../src/contract/asyncapi.ts'
import { errorTypes, type ErrorType } from '../src/contract/error-types.ts'
import { contractEntries, type ContractEntry } from '../src/contract/index.ts'
import { isDetachable } from '../src/jobs/jobs-contract.ts'
import { commonErrors, partnerMethodNames, type MethodNames } from './sdk-method-table.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const partnerMethodsPath = path.join(root, 'src/client/generated/partner-methods.ts')

type Json = Record<string, unknown>
const width = 100
/** A TSDoc line's text after `   * `. */
const docWidth = width - 5
const docWrap = (text: string) => wrap(text, '', docWidth)
const quote = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

/** Words wrapped into lines of at most `width` characters, each starting with `lead`. */
export function wrap(text: string, lead: string, limit = width): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && lead.length + line.length + 1 + word.length > limit) {
      lines.push(lead + line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(lead + line)
  return lines
}

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1)
const sdkPath = (entry: ContractEntry) => `${entry.sdkGroup}.${entry.sdkMethod}`

// ---------------------------------------------------------------------------------------
// Examples: a request with the required fields of the request's schema.

const sampleStrings: Readonly<Record<string, string>> = {
  date: '2026-03-02', 'date-time': '2026-03-02T08:00:00Z', email: 'finance@example.co.za',
  uuid: '0b6f2c9e-4d7a-4f1e-9a51-3c2d8e7f6a10', uri: 'https://example.co.za/hooks/bank',
}

/** `account_id` → `accountId`: an id the caller has in a variable. */
const variableOf = (name: string) => name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())

function stringSample(s: Json, name: string): string {
  if (name === 'clientTxId') return 'randomUUID()'
  if (/_id$/.test(name)) return variableOf(name)
  const format = typeof s.format === 'string' ? sampleStrings[s.format] : undefined
  return quote(format ?? `<${name}>`)
}

function numberSample(s: Json, name: string): string {
  if (/amount/.test(name)) return '10_000'
  const min = typeof s.minimum === 'number' ? s.minimum : 1
  return String(Math.max(min, typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1))
}

/** A sample value: a literal's text, an object's fields or an array's items. */
type Sample = string | { fields: Array<[string, Sample]> } | { items: Sample[] }

function fieldSamples(s: Json): Array<[string, Sample]> {
  const required = new Set((s.required ?? []) as string[])
  return Object.entries((s.properties ?? {}) as Record<string, Json>)
    .filter(([name]) => required.has(name))
    .map(([name, p]) => [/^[A-Za-z_$][\w$]*$/.test(name) ? name : quote(name), sample(p, name)])
}

/** A literal of the schema's type: the first choice of a union or enum, a placeholder string. */
function sample(s: Json, name: string): Sample {
  const literal = (value: unknown) => typeof value === 'string' ? quote(value) : String(value)
  if ('const' in s) return literal(s.const)
  if (Array.isArray(s.enum)) return literal(s.enum[0])
  const union = (s.oneOf ?? s.anyOf) as Json[] | undefined
  if (union) return sample(union.find((v) => v.type !== 'null') ?? union[0]!, name)
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case 'string': return stringSample(s, name)
    case 'integer':
    case 'number': return numberSample(s, name)
    case 'boolean': return 'true'
    case 'array': return { items: [sample((s.items ?? {}) as Json, name)] }
    case 'object': return { fields: fieldSamples(s) }
    default: return 'null'
  }
}

function inline(value: Sample): string {
  if (typeof value === 'string') return value
  if ('items' in value) return `[${value.items.map(inline).join(', ')}]`
  if (value.fields.length === 0) return '{}'
  return `{ ${value.fields.map(([key, v]) => `${key}: ${inline(v)}`).join(', ')} }`
}

/**
 * A value as code lines, the first after `lead` and each at most `docWidth` long: inline when
 * it fits, else an object's fields and an array's items one a line.
 */
function layout(value: Sample, lead: string, indent: string): string[] {
  const one = inline(value)
  if (typeof value === 'string' || lead.length + one.length <= docWidth) return [lead + one]
  const inner = `${indent}  `
  if ('items' in value) {
    return [`${lead}[`, ...value.items.flatMap((item) => withComma(layout(item, inner, inner))),
      `${indent}]`]
  }
  return [`${lead}{`, ...value.fields.flatMap(([key, v]) =>
    withComma(layout(v, `${inner}${key}: `, inner))), `${indent}}`]
}

const withComma = (lines: string[]) => lines.map((line, i) => i === lines.length - 1 ? `${line},`
  : line)

function exampleLines(entry: ContractEntry, names: MethodNames): string[] {
  const schema = jsonSchemaOf(entry.operation.request, 'input')
  const union = (schema.oneOf ?? schema.anyOf) as Json[] | undefined
  const request: Sample = { fields: fieldSamples(union?.[0] ?? schema) }
  const start = `const reply: ${names.reply} = await bank.${sdkPath(entry)}(`
  const lines = request.fields.length === 0 ? [`${start})`] : layout(request, start, '')
  lines[lines.length - 1] += ')'
  return ['@example', '```ts', ...lines, '```']
}

// ---------------------------------------------------------------------------------------
// TSDoc and declarations.

/** An error type's meaning, to its first sentence. */
function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/)
  return end < 0 ? text : text.slice(0, end + 1)
}

function errorLines(errors: readonly ErrorType[]): string[] {
  return errors.flatMap((type) => docWrap(
    `@throws {BankApiError} \`${type}\` (${errorTypes[type].code}): ` +
    firstSentence(errorTypes[type].description)))
}

function commonErrorText(errors: readonly ErrorType[]): string {
  const common = commonErrors.filter((type) => !errors.includes(type))
  const own = errors.length === 0 ? 'Errors are thrown as `BankApiError`, by `error.type`: '
    : 'Beside the errors below, '
  return `${own}any call may throw ${common.map((t) => `\`${t}\``).join(', ')} ` +
    '(see `errorTypes`), and `timeout` (504) when no reply came in time.'
}

function methodDoc(entry: ContractEntry, names: MethodNames): string[] {
  const op = entry.operation
  const body = [
    ...docWrap(op.summary),
    '',
    ...docWrap(`Needs a credential with the \`${op.permission}\` permission. Subject ` +
      `\`${op.subject}\`.`),
    '',
    ...docWrap(commonErrorText(names.errors)),
    '',
    ...errorLines(names.errors),
    ...exampleLines(entry, names),
  ]
  return ['  /**', ...body.map((line) => (line ? `   * ${line}` : '   *')), '   */']
}

function optionalRequest(entry: ContractEntry): boolean {
  const schema = jsonSchemaOf(entry.operation.request, 'input')
  return schema.type === 'object' && ((schema.required ?? []) as unknown[]).length === 0
}

function methodLines(entry: ContractEntry, names: MethodNames): string[] {
  const param = `${optionalRequest(entry) ? 'request?' : 'request'}: ${names.request}`
  const signature = `  ${entry.sdkMethod}(${param}): Promise<${names.reply}>`
  return [
    ...methodDoc(entry, names),
    ...(signature.length <= width ? [signature]
      : [`  ${entry.sdkMethod}(`, `    ${param},`, `  ): Promise<${names.reply}>`]),
  ]
}

const opType = (entry: ContractEntry) => `Contract['${entry.group}']['${entry.key}']`

function partType(reply: string, part: string): string {
  return part.endsWith('[]')
    ? `NonNullable<${reply}['${part.slice(0, -2)}']>[number]`
    : `NonNullable<${reply}['${part}']>`
}

/** The named request, reply and part types, each once (a reply name may serve two methods). */
function typeLines(entries: ContractEntry[]): string[] {
  const declared = new Set<string>()
  const lines: string[] = []
  const declare = (name: string, doc: string, type: string) => {
    if (declared.has(name)) return
    declared.add(name)
    const text = wrap(doc, ' * ')
    lines.push(...(text.length === 1 ? [`/** ${doc} */`] : ['/**', ...text, ' */']))
    lines.push(`export type ${name} = ${type}`, '')
  }
  for (const entry of entries) {
    const names = nameOf(entry)
    const call = `\`bank.${sdkPath(entry)}\``
    declare(names.request, `The request of ${call}.`, `RequestOf<${opType(entry)}>`)
    declare(names.reply, `The reply of ${call}.`, `ResponseOf<${opType(entry)}>`)
    for (const [part, field] of Object.entries(names.parts ?? {})) {
      const what = field.endsWith('[]') ? `One of the \`${field.slice(0, -2)}\``
        : `The \`${field}\``
      declare(part, `${what} of ${call}'s reply.`, partType(names.reply, field))
    }
  }
  return lines
}

function nameOf(entry: ContractEntry): MethodNames {
  const names = partnerMethodNames[sdkPath(entry)]
  if (!names) {
    throw new Error(`partner method ${sdkPath(entry)} has no row in scripts/sdk-method-table.ts`)
  }
  return names
}

function groupLines(group: string, entries: ContractEntry[]): string[] {
  return [
    `/** \`bank.${group}\`: the ${group} methods of a \`BankClient\`. */`,
    `export interface Partner${pascal(group)}Methods {`,
    ...entries.flatMap((entry, i) => [...(i === 0 ? [] : ['']),
      ...methodLines(entry, nameOf(entry))]),
    '}',
    '',
  ]
}

export function partnerEntries(): ContractEntry[] {
  return contractEntries().filter((entry) => entry.client === 'partner')
}

export function renderPartnerMethods(): string {
  const entries = partnerEntries()
  const detachable = entries.filter((entry) => isDetachable(entry.operation))
  if (detachable.length > 0) {
    throw new Error(`gen-sdk-types cannot declare detachable partner methods yet: ` +
      detachable.map(sdkPath).join(', '))
  }
  const groups = [...new Set(entries.map((entry) => entry.sdkGroup))]
  const of = (group: string) => entries.filter((entry) => entry.sdkGroup === group)
  return [
    '// Generated by `npm run sdk:types` (scripts/gen-sdk-types.ts) from the contract',
    '// (src/contract) and scripts/sdk-method-table.ts. Do not edit by hand.',
    '/* eslint-disable max-lines */',
    "import type { contract } from '../../contract/index.ts'",
    "import type { RequestOf, ResponseOf } from '../../contract/operation.ts'",
    '',
    'type Contract = typeof contract',
    '',
    ...typeLines(entries),
    ...groups.flatMap((group) => groupLines(group, of(group))),
    '/** The method groups of a `BankClient`, one per group of the partner\'s operations. */',
    'export interface PartnerMethodGroups {',
    ...groups.map((group) => `  readonly ${group}: Partner${pascal(group)}Methods`),
    '}',
    '',
  ].join('\n')
}

export function writePartnerMethods(): string {
  fs.mkdirSync(path.dirname(partnerMethodsPath), { recursive: true })
  fs.writeFileSync(partnerMethodsPath, renderPartnerMethods())
  return partnerMethodsPath
}

const invokedDirectly = process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href
if (invokedDirectly) {
  process.stdout.write(`wrote ${path.relative(process.cwd(), writePartnerMethods())}\n`)
}
