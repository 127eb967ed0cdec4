import { z } from 'zod'
import type { CliOptions, Operation } from '../contract/operation.ts'
import { parseDuration, UsageError } from './cli-context.ts'

// One operator command, derived from one `ops.` operation of the contract: its words are
// the subject's tokens after `ops.`, its flags and positional words are the request
// schema's fields, and its usage line is written from the same description, so that the
// help, the parsing and the request sent cannot disagree. The CLI checks only what it
// must to build a request (required words, numbers, durations); the bank validates the
// rest and its refusal is printed as it is.

export interface Args {
  positionals: string[]
  flags: Record<string, string | boolean>
}

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'list' | 'duration' | 'json'

/** One request field as the command line gives it. */
export interface CliField {
  field: string
  kind: Kind
  required: boolean
  /** The flag's name (without `--`) or the positional word's label. */
  word: string
  /** What the usage line shows as its value, e.g. `N`, `30d`, `pending|approved|rejected`. */
  example: string
  /** The value the bank takes when the field is left out, if any. */
  default?: unknown
}

/** A field given by exactly one of several bare flags (`--approve` | `--reject`). */
export interface CliChoice {
  field: string
  options: Array<{ flag: string; value: string; requires: string[] }>
}

export interface CommandSpec {
  words: string
  operation: Operation
  positionals: CliField[]
  flags: CliField[]
  choices: CliChoice[]
}

type JsonSchema = {
  type?: string; enum?: unknown[]; default?: unknown; items?: JsonSchema
  properties?: Record<string, JsonSchema>; required?: string[]
}

export function commandSpec(op: Operation): CommandSpec {
  const cli: CliOptions = op.cli ?? {}
  const schema = z.toJSONSchema(op.request, { io: 'input', unrepresentable: 'any' }) as JsonSchema
  const properties = schema.properties ?? {}
  const required = new Set(schema.required ?? [])
  const tokens = op.subject.split('.').slice(1)
  const positionalNames = cli.positionals ?? defaultPositionals(tokens[0] ?? '',
    Object.keys(properties))
  const fields = Object.entries(properties).map(([field, property]) => {
    const kind = kindOf(field, property, cli)
    const positional = positionalNames.includes(field)
    const word = cli.names?.[field] ?? (positional ? field : flagName(field, kind))
    const base = { field, kind, required: required.has(field), word, example: exampleOf(word, kind,
      property) }
    return property.default === undefined ? base : { ...base, default: property.default }
  })
  const choices = Object.entries(cli.choices ?? {}).map(([field, options]) => ({
    field,
    options: Object.entries(options).map(
      ([value, requires]) => ({ flag: value, value, requires: [...requires] })),
  }))
  const chosen = new Set(choices.map((c) => c.field))
  return {
    words: cli.words ?? tokens.map((token) => token.replaceAll('_', '-')).join(' '),
    operation: op,
    positionals: positionalNames.map((name) => fields.find((f) => f.field === name)
      ?? missingField(op, name)),
    flags: fields.filter((f) => !positionalNames.includes(f.field) && !chosen.has(f.field)),
    choices,
  }
}

/**
 * The id of the thing the subject names (`credential_id` of `ops.credential.revoke`) is the
 * positional word.
 */
function defaultPositionals(noun: string, fields: string[]): string[] {
  const candidates = [`${noun}_id`, `${noun.replace(/s$/, '')}_id`]
  const match = fields.find((field) => candidates.includes(field))
  return match ? [match] : []
}

function missingField(op: Operation, field: string): never {
  throw new Error(`${op.subject}: the CLI names ${field}, which is not a request field`)
}

function kindOf(field: string, property: JsonSchema, cli: CliOptions): Kind {
  if (cli.durations?.includes(field)) return 'duration'
  switch (property.type) {
    case 'string':
      return 'string'
    case 'integer':
      return 'integer'
    case 'number':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'array':
      return 'list'
    default:
      return 'json'
  }
}

/**
 * `registration_number` → `registration-number`; `partner_id` → `partner`; `expires_in_seconds` (a
 * duration) → `expires-in`.
 */
function flagName(field: string, kind: Kind): string {
  let name = field.replace(/_id$/, '')
  if (kind === 'duration') name = name.replace(/_seconds$/, '')
  return name.replaceAll('_', '-')
}

function exampleOf(word: string, kind: Kind, property: JsonSchema): string {
  if (kind === 'duration') return '30d'
  if (property.default !== undefined) return String(property.default)
  if (property.enum) return property.enum.join('|')
  if (kind === 'list') return property.items?.enum?.join(',') ?? 'A,B'
  if (kind === 'integer' || kind === 'number') return 'N'
  if (kind === 'json') return 'JSON'
  return word.charAt(0).toUpperCase()
}

/** `partner create --name N … [--country ZAF]`: positionals, then the fields in schema order. */
export function usageOf(spec: CommandSpec): string {
  const requiredByChoice =
    new Set(spec.choices.flatMap((c) => c.options.flatMap((o) => o.requires)))
  const parts =
    [spec.words, ...spec.positionals.map((p) => (p.required ? `<${p.word}>` : `[<${p.word}>]`))]
  for (const choice of spec.choices) {
    const options = choice.options.map((option) => {
      const needs = option.requires.map((field) => spec.flags.find((f) => f.field === field))
      return [`--${option.flag}`, ...needs.map((f) => (f ? flagUsage(f) : ''))].join(' ').trim()
    })
    parts.push(options.join(' | '))
  }
  for (const flag of spec.flags) {
    if (requiredByChoice.has(flag.field)) continue
    parts.push(flag.required ? flagUsage(flag) : `[${flagUsage(flag)}]`)
  }
  return parts.join(' ')
}

function flagUsage(flag: CliField): string {
  return flag.kind === 'boolean' ? `--${flag.word}` : `--${flag.word} ${flag.example}`
}

/**
 * The request the command line asks for. Every mistake on the line is found before any is
 * reported, so that one run names them all (each missing flag and word, each bad value):
 * a UsageError (exit 2) whose message has one line per mistake.
 */
export function requestOf(spec: CommandSpec, args: Args): Record<string, unknown> {
  const request: Record<string, unknown> = {}
  const problems: string[] = []
  const read = (field: CliField, text: string, shown: string) => {
    try {
      request[field.field] = valueOf(field, text, shown)
    } catch (error) {
      if (!(error instanceof UsageError)) throw error
      problems.push(error.message)
    }
  }
  const line: LineReading = { spec, args, request, problems, read }
  unknownFlags(line)
  readPositionals(line)
  const requiredByChoice = readChoices(line)
  readFlags(line, requiredByChoice)
  if (problems.length > 0) throw new UsageError(problems.join('\n'))
  return request
}

/** A command line being read: the request so far, the mistakes found, how a value is read. */
interface LineReading {
  spec: CommandSpec
  args: Args
  request: Record<string, unknown>
  problems: string[]
  read: (field: CliField, text: string, shown: string) => void
}

function unknownFlags({ spec, args, problems }: LineReading) {
  const known = new Set([...spec.flags.map((f) => f.word),
    ...spec.choices.flatMap((c) => c.options.map((o) => o.flag))])
  for (const name of Object.keys(args.flags)) if (!known.has(name)) problems.push(
    `--${name} is not a flag of \`bank ${spec.words}\``)
}

function readPositionals({ spec, args, problems, read }: LineReading) {
  spec.positionals.forEach((positional, index) => {
    const text = args.positionals[index]
    if (text === undefined || text === '') {
      // An optional word may be left out (`bank sandbox advance --to …`); the bank checks the rest.
      if (positional.required) problems.push(`<${positional.word}> is required`)
      return
    }
    read(positional, text, `<${positional.word}>`)
  })
  if (args.positionals.length > spec.positionals.length) {
    problems.push(`\`bank ${spec.words}\` takes ${spec.positionals.length} word(s) after the ` +
      `command; "${args.positionals[spec.positionals.length]}" is one too many`)
  }
}

/** Each choice's one flag given; returns the fields the chosen options require. */
function readChoices({ spec, args, request, problems }: LineReading): Set<string> {
  const requiredByChoice = new Set<string>()
  for (const choice of spec.choices) {
    const given = choice.options.filter((option) => args.flags[option.flag] === true)
    if (given.length !== 1) {
      problems.push(`give exactly one of ${choice.options.map((o) => `--${o.flag}`).join(' and ')}`)
      continue
    }
    request[choice.field] = given[0]!.value
    for (const field of given[0]!.requires) requiredByChoice.add(field)
  }
  return requiredByChoice
}

function readFlags({ spec, args, request, problems, read }: LineReading,
    requiredByChoice: Set<string>) {
  for (const flag of spec.flags) {
    const given = args.flags[flag.word]
    const required = flag.required || requiredByChoice.has(flag.field)
    if (given === undefined) {
      if (required) problems.push(`--${flag.word} is required`)
      continue
    }
    if (flag.kind === 'boolean') {
      if (given === true || given === 'true') request[flag.field] = true
      else if (given === 'false') request[flag.field] = false
      else problems.push(`--${flag.word} is true or false`)
      continue
    }
    if (typeof given !== 'string' || given === '') {
      problems.push(required ? `--${flag.word} is required` : `--${flag.word} needs a value`)
      continue
    }
    read(flag, given, `--${flag.word}`)
  }
}

function valueOf(field: CliField, text: string, shown: string): unknown {
  switch (field.kind) {
    case 'integer':
      // Digits only: a sign, a fraction or an exponent is a mistake here, not a value to round.
      if (!/^\d+$/.test(text)) throw new UsageError(`${shown} must be a whole number (digits only)`)
      return Number(text)
    case 'number':
      if (!/^-?\d+(\.\d+)?$/.test(text)) throw new UsageError(`${shown} must be a number`)
      return Number(text)
    case 'duration':
      return parseDuration(text)
    case 'list':
      return text.split(',').map((item) => item.trim())
    case 'boolean':
      return text === 'true'
    case 'json':
      try {
        return JSON.parse(text)
      } catch {
        throw new UsageError(`${shown} must be JSON`)
      }
    default:
      return text
  }
}
