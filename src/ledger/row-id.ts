import { randomFillSync } from 'node:crypto'

// Ids of the ledger's rows (transactions, journals): UUID version 7 (RFC 9562), whose first
// 48 bits are the Unix time in milliseconds, so that ids made together sort together. The
// primary key and the journal and parent indexes then grow at their right-hand edge, where
// PostgreSQL keeps the page it last inserted into, instead of at a random leaf page for
// every row: fewer pages touched, read and written to the WAL per payment. The other 74 bits
// are random (from Node's CSPRNG, drawn a pool at a time as randomUUID does), so an id is
// still not guessable; it tells the time it was made, which the row's created_at tells anyway.
//
// Written here rather than taken from the `uuid` package: its v7 asks the CSPRNG for 16
// bytes on every call, about 4.6 µs an id. This one writes the id's 36 characters into a
// buffer and reads them back as one flat string, about 0.2 µs. (It used to append
// randomUUID's last 21 characters to the time, 0.5 µs: randomUUID builds its text from 20
// concatenated pieces, which V8 must then flatten again before the id's digits can be
// read, as every batch does when it writes the id in binary; docs/performance.md.)
// `bench/row-ids.ts` measures what the ids change in PostgreSQL.

/** Random bytes for 256 ids; drawn again when used up. */
const pool = Buffer.allocUnsafe(10 * 256)
let poolAt = pool.length
/** The id being written: the time's part is kept while the millisecond lasts. */
const text = Buffer.allocUnsafe(36)
/** Each nibble's lower-case hex digit. */
const hexDigit = Buffer.from('0123456789abcdef', 'latin1')
let lastTime = Number.NaN

/**
 * Where the random part's 18 hex digits go: after the version digit, around the variant (19) and
 * the dashes.
 */
const randomAt = [15, 16, 17, 20, 21, 22, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35]

/**
 * A new UUIDv7: the time's 12 hex digits, then version 7, then 74 random bits with the
 * variant (binary 10) in the 19th character's top two bits.
 */
export function newRowId(now = Date.now()): string {
  if (now !== lastTime) {
    lastTime = now
    // 48 bits: the top 16 and the low 32 (a number holds 53 bits exactly; bitwise ops only 32).
    const high = Math.floor(now / 4_294_967_296)
    const low = now - high * 4_294_967_296
    let at = 0
    for (let shift = 12; shift >= 0; shift -= 4) text[at++] = hexDigit[(high >>> shift) & 15]!
    for (let shift = 28; shift >= 0; shift -= 4) {
      if (at === 8) text[at++] = 45
      text[at++] = hexDigit[(low >>> shift) & 15]!
    }
    text[13] = 45
    text[14] = 55 // '7'
    text[18] = 45
    text[23] = 45
  }
  if (poolAt === pool.length) {
    randomFillSync(pool)
    poolAt = 0
  }
  // Ten random bytes: eighteen digits, and two bits of the variant digit.
  for (let i = 0; i < 9; i++) {
    const byte = pool[poolAt + i]!
    text[randomAt[2 * i]!] = hexDigit[byte >>> 4]!
    text[randomAt[2 * i + 1]!] = hexDigit[byte & 15]!
  }
  text[19] = hexDigit[8 | (pool[poolAt + 9]! & 3)]!
  poolAt += 10
  return text.toString('latin1', 0, 36)
}
