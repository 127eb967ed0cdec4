import fs from 'node:fs'
import path from 'node:path'
import type { RetryOptions } from './retry.ts'

// Where a client finds the bank and its credential, the same way for the SDK
// (`BankClient.fromEnv`, `OperatorClient.fromDataDir`, …) and the CLI:
//   - the NATS URL: NATS_URL, else the URL the bank wrote into its data directory
//     (`<BANK_DATA_DIR or ./.data>/nats-url`, present while a bank that started its own
//     nats-server runs), else nats://127.0.0.1:4222;
//   - an operator credential: BANK_OPERATOR_TOKEN, else `<data dir>/operator-token` (the
//     bank writes it on its first start);
//   - a partner's id and credential: BANK_PARTNER_ID and BANK_PARTNER_TOKEN. A data
//     directory holds no partner credential: the bank shows a partner's token once, to
//     the operator who creates it, and keeps only its hash.
// Every value comes back with where it was found, so that an error can name the setting
// to fix rather than only the symptom.

export const default_nats_url = 'nats://127.0.0.1:4222'

/**
 * A setting's value and where it was found: an environment variable, a file's path, or `the
 * default`.
 */
export interface Located {
  value: string
  from: string
}

/**
 * For `fromEnv` and `fromDataDir`: the environment to read (default `process.env`) and the reply
 * timeout.
 */
export interface LocateOptions {
  env?: NodeJS.ProcessEnv
  timeoutMs?: number
  /** `BankClient.fromEnv`/`fromDataDir` only: its `retry` option (an operator has none). */
  retry?: RetryOptions
}

/** What a client was given and where each came from; named in its error messages. */
export interface SettingSources {
  servers?: string
  token?: string
  partnerId?: string
}

/**
 * A setting is missing or unusable; `settings` names the variables and files that were looked at.
 */
export class BankSettingError extends Error {
  constructor(
    message: string,
    readonly settings: string[],
  ) {
    super(message)
    this.name = 'BankSettingError'
  }
}

/** `BANK_DATA_DIR`, else `./.data`, as an absolute path. */
export function dataDirOf(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.BANK_DATA_DIR || './.data')
}

/**
 * The NATS URL. `dataDir` given: that directory's `nats-url`, the environment not
 * consulted; otherwise NATS_URL first, then the data directory's file.
 */
export function locateNatsUrl(env: NodeJS.ProcessEnv = process.env, dataDir?: string): Located {
  if (dataDir === undefined && env.NATS_URL?.trim()) return { value: env.NATS_URL.trim(),
    from: 'NATS_URL' }
  const file = path.join(dataDir ?? dataDirOf(env), 'nats-url')
  const written = readSetting(file)
  if (written) return { value: written, from: file }
  const looked = dataDir === undefined ? `NATS_URL is unset and ${file} does not exist`
    : `${file} does not exist`
  return { value: default_nats_url, from: `the default: ${looked}` }
}

/**
 * An operator credential: BANK_OPERATOR_TOKEN, else the data directory's `operator-token` (only the
 * file when `dataDir` is given).
 */
export function locateOperatorToken(env: NodeJS.ProcessEnv = process.env,
    dataDir?: string): Located {
  if (dataDir === undefined && env.BANK_OPERATOR_TOKEN?.trim()) return {
    value: env.BANK_OPERATOR_TOKEN.trim(), from: 'BANK_OPERATOR_TOKEN' }
  const file = path.join(dataDir ?? dataDirOf(env), 'operator-token')
  const written = readSetting(file)
  if (written) return { value: written, from: file }
  const where = dataDir === undefined ? `set BANK_OPERATOR_TOKEN, or run where ${file} exists`
    : `${file} does not exist`
  throw new BankSettingError(
    `no operator credential: ${where} (the bank writes it on its first start; point ` +
      `BANK_DATA_DIR at the bank's data directory)`,
    dataDir === undefined ? ['BANK_OPERATOR_TOKEN', file] : [file],
  )
}

/**
 * A partner's id and credential from BANK_PARTNER_ID and BANK_PARTNER_TOKEN; every missing one
 * named at once.
 */
export function locatePartner(env: NodeJS.ProcessEnv = process.env): {
    partnerId: Located; token: Located } {
  const partnerId = env.BANK_PARTNER_ID?.trim()
  const token = env.BANK_PARTNER_TOKEN?.trim()
  const missing = [partnerId ? undefined : 'BANK_PARTNER_ID', token ? undefined
    : 'BANK_PARTNER_TOKEN'].filter((name) => name !== undefined)
  if (missing.length > 0) {
    throw new BankSettingError(
      `no partner ${partnerId ? 'credential' : token ? 'id' : 'id or credential'}: ` +
        `set ${missing.join(' and ')} ` +
        '(partner_id and credential.token, as `bank partner create` or `bank credential create` ' +
          'printed them)',
      missing,
    )
  }
  return { partnerId: { value: partnerId!, from: 'BANK_PARTNER_ID' },
    token: { value: token!, from: 'BANK_PARTNER_TOKEN' } }
}

/**
 * Where a value came from, as a message says it: `from NATS_URL`, `from /srv/bank/.data/nats-url`,
 * `the default: …`.
 */
export function origin(from: string): string {
  return from.startsWith('the default') ? from : `from ${from}`
}

function readSetting(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new BankSettingError(`cannot read ${file}: ${(error as Error).message}`, [file])
  }
}

/**
 * Says which setting a 401 or 403 points at, for the error message; undefined when the
 * refusal is about the request rather than the settings (another partner's entity, a
 * sandbox subject in production). The 403 texts are the endpoint wrapper's
 * (src/transport/nats/endpoint.ts); test/client/client-errors.test.ts holds them together.
 */
export function blameSetting(code: number, message: string, sources: SettingSources,
    partnerId?: string): string | undefined {
  const token = `the credential${sources.token ? ` ${origin(sources.token)}` : ''}`
  const id =
    `the partner id ${partnerId ?? ''}${sources.partnerId ? ` ${origin(sources.partnerId)}` : ''}`
  // A client given its settings outright (no sources) gets the bank's message as it is: the
  // caller knows what it passed, and the message stays the bank's word for word.
  if (!sources.token && !sources.partnerId && !sources.servers) return undefined
  if (code === 401) return sources.token
    ? `${token} was refused: it is not a token the bank issued, or it expired or was revoked`
    : undefined
  if (code !== 403) return undefined
  if (message
    === 'the subject names another partner') return `${id} is not the partner ${token} belongs to`
  if (message === 'operator credentials act on ops. subjects only') return `${token} is an ` +
    `operator credential; a partner client needs a partner's`
  if (message === 'an operator credential is required') return `${token} is a partner ` +
    `credential; an operator client needs an operator's`
  if (message.startsWith('the credential lacks')) return `${token} lacks that permission: ask ` +
    `the bank for a credential that has it`
  return undefined
}
