import { createHmac, randomInt, timingSafeEqual } from 'node:crypto'
import { luhnCheckDigit } from '../contract/fields.ts'
import { card_limits } from './card-contract.ts'

// A card's secrets. The number (PAN) and CVV must be shown again (get_details), so they are
// sealed with the bank's key; the PIN is only ever compared, so it is a keyed hash. Keys are
// derived from the bank's secrets key (secrets/secret-box.ts), which every instance shares.

/** What cards need of the bank's secret box. */
export interface CardSecrets {
  seal(plain: string, context: string): string
  open(sealed: string, context: string): string
  derivedKey(label: string): Buffer
}

const pan_digits = 16

/** A random 16-digit card number under `bin` whose last digit is its Luhn check digit. */
export function newPan(bin: string): string {
  let body = bin
  while (body.length < pan_digits - 1) body += String(randomInt(10))
  return body + luhnCheckDigit(body)
}

export function newCvv(): string {
  return String(randomInt(1000)).padStart(3, '0')
}

export function keyedHash(key: Buffer, ...parts: string[]): string {
  return createHmac('sha256', key).update(parts.join('\n')).digest('hex')
}

/** Compares two hex hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * The last day a card issued on `issuedOn` (a SAST date) is valid: the end of the month
 * `validity_months` later; with its `MM/YY`.
 */
export function expiryOf(issuedOn: string): { expires_on: string; mmyy: string } {
  const year = Number(issuedOn.slice(0, 4))
  const month = Number(issuedOn.slice(5, 7)) - 1 + card_limits.validity_months
  const endYear = year + Math.floor(month / 12)
  const endMonth = (month % 12) + 1
  const lastDay = new Date(Date.UTC(endYear, endMonth, 0)).getUTCDate()
  const mm = String(endMonth).padStart(2, '0')
  return {
    expires_on: `${endYear}-${mm}-${String(lastDay).padStart(2, '0')}`,
    mmyy: `${mm}/${String(endYear).slice(2)}`,
  }
}

export function mmyyOf(expiresOn: string): string {
  return `${expiresOn.slice(5, 7)}/${expiresOn.slice(2, 4)}`
}
