import fs from 'node:fs'
import path from 'node:path'

// Where the CLI finds the bank: NATS_URL, else the URL the service wrote into its data
// directory (a private nats-server), else the default; the operator token from
// BANK_OPERATOR_TOKEN, else `<data dir>/operator-token`.

export class UsageError extends Error {}

export function natsUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NATS_URL) return env.NATS_URL
  const file = path.join(dataDir(env), 'nats-url')
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim()
  return 'nats://127.0.0.1:4222'
}

export function operatorToken(env: NodeJS.ProcessEnv = process.env): string {
  if (env.BANK_OPERATOR_TOKEN) return env.BANK_OPERATOR_TOKEN.trim()
  const file = path.join(dataDir(env), 'operator-token')
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim()
  throw new UsageError(
    `no operator credential: set BANK_OPERATOR_TOKEN, or run the CLI where ${file} exists (the service writes it on first start)`,
  )
}

function dataDir(env: NodeJS.ProcessEnv): string {
  return path.resolve(env.BANK_DATA_DIR ?? './.data')
}

/** `30d`, `12h`, `90m`, `45s` or plain seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)([dhms]?)$/.exec(text.trim())
  if (!match) throw new UsageError(`cannot read the duration "${text}"; write e.g. 30d, 12h, 90m or 3600`)
  const unit = { d: 86_400, h: 3_600, m: 60, s: 1, '': 1 }[match[2] as 'd' | 'h' | 'm' | 's' | '']
  return Number(match[1]) * unit
}
