import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node'

// Headers that never change, encoded once. nats.js turns a message's headers into bytes at
// every publish (its MsgHdrsImpl builds the header block as a string and UTF-8 encodes it:
// about 1.5 µs, and 0.6 µs more to make and fill the object). A client's token and a
// payment reply's status are the same on thousands of messages, so each is made once and
// answers every publish with the bytes it was made with: the same bytes nats.js would
// build. Should nats.js stop asking a message's headers for `encode()`, they are ordinary
// headers again. They cannot be changed (set, append and delete throw), so the bytes
// never go stale.

/** Headers with these values, for any number of messages. */
export function fixedHeaders(entries: Readonly<Record<string, string>>): MsgHdrs {
  const headers = natsHeaders()
  for (const [name, value] of Object.entries(entries)) headers.set(name, value)
  const encodable = headers as MsgHdrs & { encode?: () => Uint8Array }
  const encoded = typeof encodable.encode === 'function' ? encodable.encode() : undefined
  const unchangeable = (): never => {
    throw new TypeError('fixed headers cannot be changed; make new ones')
  }
  return Object.assign(headers, {
    ...(encoded ? { encode: () => encoded } : {}),
    set: unchangeable,
    append: unchangeable,
    delete: unchangeable,
  })
}

/**
 * Fixed headers for each distinct set of values, made on first use: for values from a
 * small set (a payment's status). At most `entries_max` sets are kept; any beyond them get
 * headers of their own each time, so values from a large set (a paging cursor) cost no
 * memory.
 */
export class FixedHeadersCache {
  private readonly made = new Map<string, MsgHdrs>()

  constructor(private readonly entries_max = 16) {}

  headers(entries: Readonly<Record<string, string>>): MsgHdrs {
    let key = ''
    for (const name in entries) key += `${name}\n${entries[name]}\n`
    let headers = this.made.get(key)
    if (!headers) {
      headers = fixedHeaders(entries)
      if (this.made.size < this.entries_max) this.made.set(key, headers)
    }
    return headers
  }
}
