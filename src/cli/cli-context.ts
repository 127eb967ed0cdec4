import { BankSettingError, locateNatsUrl, locateOperatorToken, type Located } from '../client/locate.ts'

// Where the CLI finds the bank: as the SDK's fromEnv does (src/client/locate.ts).

export class UsageError extends Error {}

export function natsUrl(env: NodeJS.ProcessEnv = process.env): string {
  return locateNatsUrl(env).value
}

/**
 * What a 401 adds in the CLI: how to give it another credential. The refusal itself names
 * the one it used (`the credential from <data dir>/operator-token was refused`).
 */
export const otherCredential =
  'to use another, set BANK_OPERATOR_TOKEN, or BANK_DATA_DIR to the data directory of the bank ' +
  'that wrote its operator-token'

/** The operator credential and where it was found (BANK_OPERATOR_TOKEN or a file's path). */
export function operatorToken(env: NodeJS.ProcessEnv = process.env): Located {
  try {
    return locateOperatorToken(env)
  } catch (error) {
    throw error instanceof BankSettingError ? new UsageError(error.message) : error
  }
}

/** `30d`, `12h`, `90m`, `45s` or plain seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)([dhms]?)$/.exec(text.trim())
  if (!match) throw new UsageError(
    `cannot read the duration "${text}"; write e.g. 30d, 12h, 90m or 3600`)
  const unit = { d: 86_400, h: 3_600, m: 60, s: 1, '': 1 }[match[2] as 'd' | 'h' | 'm' | 's' | '']
  return Number(match[1]) * unit
}
