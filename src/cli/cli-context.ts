import { BankSettingError, locateNatsUrl, locateOperatorToken } from '../client/locate.ts'

// Where the CLI finds the bank: as the SDK's fromEnv does (src/client/locate.ts).

export class UsageError extends Error {}

export function natsUrl(env: NodeJS.ProcessEnv = process.env): string {
  return locateNatsUrl(env).value
}

export function operatorToken(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return locateOperatorToken(env).value
  } catch (error) {
    throw error instanceof BankSettingError ? new UsageError(error.message) : error
  }
}

/** `30d`, `12h`, `90m`, `45s` or plain seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)([dhms]?)$/.exec(text.trim())
  if (!match) throw new UsageError(`cannot read the duration "${text}"; write e.g. 30d, 12h, 90m or 3600`)
  const unit = { d: 86_400, h: 3_600, m: 60, s: 1, '': 1 }[match[2] as 'd' | 'h' | 'm' | 's' | '']
  return Number(match[1]) * unit
}
