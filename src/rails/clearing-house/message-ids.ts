import { createHash } from 'node:crypto'

// The ids of what the clearing-house simulator makes: messages, statements, returns, other
// banks' end-to-end ids, entry references. Each is made from the inputs it answers (the same
// inputs give the same id, so an answer made again is the same message, byte for byte), and
// looks like no id of the bank's: `CH`, a letter for its kind, then 32 hex digits of a
// SHA-256 of the kind and the inputs (35 characters, Max35Text's most). Letters and digits
// only, so any of them is safe in a file name (`pacs.002.<MsgId>.xml`). The bank's own message
// ids never start with `CH`, and its end-to-end ids are 32 hex digits alone (end-to-end-id.ts):
// an id made here is never taken for one of the bank's.

/** What an id names; its letter follows `CH`. */
export const id_kinds = {
  status_report: 'S',
  payment_return: 'R',
  return_id: 'Q',
  incoming: 'I',
  incoming_end_to_end: 'E',
  statement: 'T',
  notification: 'N',
  entry: 'A',
} as const

export type IdKind = keyof typeof id_kinds

/** The prefix of every id the simulator makes. */
export const clearing_house_id_prefix = 'CH'

/** The id of a `kind` made from `inputs` (each a text; their order matters). */
export function clearingHouseId(kind: IdKind, ...inputs: readonly string[]): string {
  const digest = createHash('sha256').update(JSON.stringify([kind, ...inputs])).digest('hex')
  return `${clearing_house_id_prefix}${id_kinds[kind]}${digest.slice(0, 32)}`
}
