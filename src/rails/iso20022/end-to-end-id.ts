import { IsoValueError } from './iso-value-error.ts'

// The bank's payments are known on the wire by their tx_id (docs/operators/rails.md: the
// end-to-end id is the bank's tx_id). A tx_id is a UUID, 36 characters with its hyphens, and
// EndToEndId is Max35Text: the id goes out as its 32 hex digits, hyphens left out (lower
// case), and comes back to the same tx_id. (UETR, the schemas' own UUID field, is no home for
// it: it admits only version 4 UUIDs, and the ledger's ids are version 7.)

const uuid_pattern = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i
const end_to_end_pattern = /^([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/

/** The EndToEndId of a payment: its tx_id's 32 hex digits in lower case. */
export function endToEndIdOf(txId: string, field = 'EndToEndId'): string {
  const parts = typeof txId === 'string' ? uuid_pattern.exec(txId) : null
  if (parts === null) throw new IsoValueError(field, `tx_id ${String(txId)} is not a UUID`)
  return parts.slice(1).join('').toLowerCase()
}

/**
 * The tx_id an EndToEndId the bank wrote stands for (`0190…` → `0190…-…`), or undefined when
 * the id is not one of the bank's form (32 lower-case hex digits): another bank's id.
 */
export function txIdOfEndToEndId(endToEndId: string): string | undefined {
  const parts = end_to_end_pattern.exec(endToEndId)
  return parts === null ? undefined : parts.slice(1).join('-')
}
