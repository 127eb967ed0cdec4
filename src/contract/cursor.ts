import { z } from 'zod'

// Keyset paging cursors: a page ends at a row's sequence number, and the cursor names it,
// tagged with one letter per list (so a cursor of one list is refused by another) and
// base64url-encoded so that callers treat it as opaque. One codec for every paged list.

const cursor_message = 'must be a next_cursor from an earlier page'
const bigint_max = 9_223_372_036_854_775_807n

/** The `cursor` request field of a paged list. */
export const pageCursor = () => z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, { error: cursor_message })

export function encodeSeqCursor(tag: string, seq: bigint): string {
  return Buffer.from(`${tag}${seq}`).toString('base64url')
}

/**
 * The sequence a cursor names, or undefined when it did not come from this list: not the
 * list's tag, or not a PostgreSQL bigint of at least 1.
 */
export function decodeSeqCursor(tag: string, cursor: string): bigint | undefined {
  const text = Buffer.from(cursor, 'base64url').toString()
  if (!text.startsWith(tag) || !/^\d{1,19}$/.test(text.slice(tag.length))) return undefined
  const seq = BigInt(text.slice(tag.length))
  return seq >= 1n && seq <= bigint_max ? seq : undefined
}

export const invalid_cursor_message = cursor_message

/**
 * One page of a list read newest first with `limit + 1` rows: the first `limit`, and the
 * cursor of the last of them when the extra row says more follow.
 */
export function seqPage<R>(rows: R[], limit: number, tag: string,
    seqOf: (row: R) => bigint | string): { page: R[]; next_cursor?: string } {
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return rows.length > limit && last !== undefined
    ? { page, next_cursor: encodeSeqCursor(tag, BigInt(seqOf(last))) } : { page }
}

/**
 * A cursor naming a row by its time and UUID, for lists read newest first across keys that
 * have no one sequence (the pending payments of every account): the tag, the time in
 * milliseconds (6 bytes) and the id's 16 bytes, 31 characters.
 */
export function encodeTimeIdCursor(tag: string, at: Date, id: string): string {
  const bytes = Buffer.alloc(22)
  bytes.writeUIntBE(at.getTime(), 0, 6)
  Buffer.from(id.replaceAll('-', ''), 'hex').copy(bytes, 6)
  return Buffer.concat([Buffer.from(tag), bytes]).toString('base64url')
}

/** The time and id a cursor names, or undefined when it did not come from this list. */
export function decodeTimeIdCursor(
  tag: string,
  cursor: string,
): { at: Date; id: string } | undefined {
  const bytes = Buffer.from(cursor, 'base64url')
  if (bytes.length !== tag.length + 22) return undefined
  if (bytes.subarray(0, tag.length).toString() !== tag) return undefined
  const hex = bytes.subarray(tag.length + 6).toString('hex')
  const parts = [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20)]
  return { at: new Date(bytes.readUIntBE(tag.length, 6)), id: [...parts, hex.slice(20)].join('-') }
}
