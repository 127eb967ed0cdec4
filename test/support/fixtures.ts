import { randomInt } from 'node:crypto'
import { luhnCheckDigit } from '../../src/contract/fields.ts'

// Valid requests with unique identifiers; tests override what they are about.

let counter = 0
const unique =
  () => `${Date.now() % 1_000_000}${String(++counter).padStart(4, '0')}${randomInt(10)}`

/**
 * A 12-digit registration number, unique in this process. Never one the simulated company
 * registry treats as magic for a failure (ending 99: lookup fails; 00: no directors yet), so
 * that a test reading an entity's KYB by chance never meets one.
 */
export function registrationNumber(): string {
  for (;;) {
    const number = `2020${unique().slice(-8).padStart(8, '0')}`
    if (!number.endsWith('99') && !number.endsWith('00')) return number
  }
}

/** A valid South African ID number for a person born on the given date. */
export function saIdNumber(birth = '900115'): string {
  const sequence = String(randomInt(10_000)).padStart(4, '0')
  const body = `${birth}${sequence}08`
  return body + luhnCheckDigit(body)
}

export function businessEntity(overrides: Record<string, unknown> = {}) {
  return {
    entity_type: 'business' as const,
    email: 'finance@acme.example',
    country: 'ZAF',
    name: 'Acme Holdings (Pty) Ltd',
    trading_name: 'Acme',
    registration_number: registrationNumber(),
    ...overrides,
  }
}

export function personalEntity(overrides: Record<string, unknown> = {}) {
  return {
    entity_type: 'personal' as const,
    email: 'thandi@example.com',
    country: 'ZAF',
    first_name: 'Thandi',
    last_name: 'Nkosi',
    phone_number: '+27821234567',
    gender: 'female' as const,
    date_of_birth: '1990-01-15T00:00:00Z',
    id_number: saIdNumber('900115'),
    id_type: 'National' as const,
    id_issue_date: '2008-03-01T00:00:00Z',
    ...overrides,
  }
}

let personSequence = 0

/**
 * A personal entity whose id number comes from a counter rather than at random, so that a
 * file creating many personal entities never collides into a 409 by chance.
 */
export function numberedPersonalEntity(overrides: Record<string, unknown> = {}) {
  const body = `750101${String(++personSequence).padStart(4, '0')}08`
  return personalEntity({ id_number: body + luhnCheckDigit(body), ...overrides })
}

export function userRequest(entityId: string, overrides: Record<string, unknown> = {}) {
  return {
    entity_id: entityId,
    first_name: 'Sipho',
    last_name: 'Dlamini',
    email: 'sipho@acme.example',
    phone_number: '+27831234567',
    gender: 'male',
    date_of_birth: '1985-06-30T00:00:00Z',
    country: 'ZAF',
    city: 'Johannesburg',
    residency: 'citizen',
    id_number: saIdNumber('850630'),
    id_type: 'National',
    id_issue_date: '2003-07-01T00:00:00Z',
    title: 'Mr',
    verified: false,
    permit_number: 'NA',
    ...overrides,
  }
}

/** A copy of `body` without `key`. */
export function without(body: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...body }
  delete copy[key]
  return copy
}
