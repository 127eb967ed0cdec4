import type { NatsConnection } from '@nats-io/transport-node'
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import { Objm, type ObjectResult, type ObjectStore } from '@nats-io/obj'
import { Unavailable } from '../errors.ts'

// The partners' dropboxes: JetStream Object Store buckets (`kyc_dropbox_<user_id>`,
// `kyb_dropbox_<entity_id>`) that the partner creates and fills, as the reference SDK's
// KycDocumentUploader and KybDocumentUploader do. The bank only reads them, at submission,
// and copies what a request names into its own store.
//
// Each partner's dropboxes are reached through a connection into that partner's NATS
// account (`connectionFor`). What is in a bucket is the partner's to write, metadata
// included, so nothing in it is trusted: the bank reads only plain objects stored in the
// bucket itself (never a link, which could point at another bucket), streams their chunks
// and stops as soon as more bytes arrive than the metadata announced, and takes an object
// only when its bytes are exactly as many as its metadata says and match its digest.

/** Where an Object Store link points: an object of a bucket, or a whole bucket (`name` null). */
export interface DropboxLink {
  bucket: string
  name: string | null
}

/** What a dropbox holds under one name, before its bytes are read. */
export interface DropboxEntry {
  name: string
  /** The size the object's metadata gives (the partner's word; NaN when it gives none). */
  size: number
  /** The `original_filename` header the reference SDK puts on each object, when present. */
  originalFilename: string | null
  /** When the object was last put (RFC 3339, the server's clock). */
  mtime: string
  /** Set when the entry is an Object Store link rather than an object: never read. */
  link: DropboxLink | null
}

/** The outcome of reading one object. */
export type DropboxRead =
  /** No bucket, or no (live) object under the name. */
  | { kind: 'missing' }
  /**
   * Its metadata forbids reading it (see `readable`): a link, no valid size, empty, or over the
   * limit.
   */
  | { kind: 'unread'; entry: DropboxEntry }
  /**
   * Its chunks hold another number of bytes than its metadata says: `received` is all of
   * them when `complete`, else the bytes that had arrived when reading stopped (more than
   * the metadata's size).
   */
  | { kind: 'size_mismatch'; entry: DropboxEntry; received: number; complete: boolean }
  /**
   * Its bytes do not match the digest of its metadata, or the metadata has no usable digest or
   * chunk id.
   */
  | { kind: 'corrupt'; entry: DropboxEntry; reason: 'digest' | 'metadata' }
  /** Read and checked: exactly `entry.size` bytes, matching the digest. */
  | { kind: 'read'; entry: DropboxEntry; bytes: Uint8Array }

export interface Dropbox {
  /**
   * The entry under `name` in the partner's bucket, or null when the bucket or the object does not
   * exist.
   */
  entry(partnerId: string, bucket: string, name: string): Promise<DropboxEntry | null>
  /**
   * Reads the object under `name` as a stream, never more than `maxBytes` (nor than its
   * metadata's size) plus what one chunk brings, and never through a link.
   */
  read(partnerId: string, bucket: string, name: string, maxBytes: number): Promise<DropboxRead>
  /**
   * Every object of the partner's bucket, links left out (empty when the bucket does not exist).
   */
  entries(partnerId: string, bucket: string): Promise<DropboxEntry[]>
}

/** A bucket name as the reference SDK forms it (the contract's: the SDK's uploads use them). */
export { kybBucket, kycBucket } from './kyc-contract.ts'

/** Whether an entry's metadata lets the bank read it: a plain object of 1 to `maxBytes` bytes. */
export function readable(entry: DropboxEntry, maxBytes: number): boolean {
  return entry.link === null && Number.isSafeInteger(entry.size) && entry.size > 0
    && entry.size <= maxBytes
}

/** How long a read waits for the next chunk before giving up as unavailable. */
const chunk_wait_ms = 30_000

/** The clients of one connection. */
interface Handle {
  objm: Objm
  jsm?: Promise<JetStreamManager>
  nc: NatsConnection
}

/** Reads the dropboxes, each partner's through the connection `connectionFor` gives for it. */
export class NatsDropbox implements Dropbox {
  private readonly handles = new WeakMap<NatsConnection, Handle>()

  constructor(private readonly connectionFor: (partnerId: string) => Promise<NatsConnection>) {}

  async entry(partnerId: string, bucket: string, name: string): Promise<DropboxEntry | null> {
    const store = await this.open(await this.handle(partnerId), bucket)
    if (!store) return null
    const info = await guard(() => store.info(name))
    if (!info || info.deleted) return null
    return entryOf(info)
  }

  async read(partnerId: string, bucket: string, name: string,
      maxBytes: number): Promise<DropboxRead> {
    const handle = await this.handle(partnerId)
    const store = await this.open(handle, bucket)
    if (!store) return { kind: 'missing' }
    // The metadata first: a link is refused here, before `get()` would follow it.
    const info = await guard(() => store.info(name))
    if (!info || info.deleted) return { kind: 'missing' }
    const entry = entryOf(info)
    if (!readable(entry, maxBytes)) return { kind: 'unread', entry }
    if (typeof info.nuid !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(info.nuid)) return { kind: 'corrupt', entry, reason: 'metadata' }

    let result: ObjectResult | null
    try {
      result = await store.get(name)
    } catch (error) {
      if (/digest/i.test(messageOf(error))) return { kind: 'corrupt', entry, reason: 'metadata' }
      throw unavailable(error)
    }
    if (!result) return { kind: 'missing' }
    const opened = result
    opened.error.catch(() => undefined)
    // `get()` reads the metadata again, and follows a link by itself: what it opened must be
    // the very object checked above (same metadata message, same chunks), else it is not read.
    const same =
      opened.info.revision === info.revision && opened.info.nuid === info.nuid
        && opened.info.name === info.name && !opened.info.options?.link
    if (!same) {
      await opened.data.cancel().catch(() => undefined)
      const now = await guard(() => store.info(name))
      if (!now || now.deleted) return { kind: 'missing' }
      const changed = entryOf(now)
      if (!readable(changed, maxBytes)) return { kind: 'unread', entry: changed }
      throw new Unavailable(
        `object ${name} of bucket ${bucket} changed while it was being read; try again`)
    }
    // No chunk at all: the stream would wait for one for ever.
    const stream = `OBJ_${bucket}`
    const jsm = await this.jsm(handle)
    const chunk = await guard(() => jsm.streams.getMessage(stream,
      { last_by_subj: `$O.${bucket}.C.${info.nuid}` }))
    if (!chunk) {
      await opened.data.cancel().catch(() => undefined)
      return { kind: 'size_mismatch', entry, received: 0, complete: true }
    }
    return readStream(entry, opened, Math.min(entry.size, maxBytes),
      `object ${name} of bucket ${bucket}`)
  }

  async entries(partnerId: string, bucket: string): Promise<DropboxEntry[]> {
    const store = await this.open(await this.handle(partnerId), bucket)
    if (!store) return []
    const infos = await guard(() => store.list())
    return infos
      .filter((info) => !info.deleted)
      .map(entryOf)
      .filter((entry) => entry.link === null)
  }

  private async handle(partnerId: string): Promise<Handle> {
    const nc = await guard(() => this.connectionFor(partnerId))
    let handle = this.handles.get(nc)
    if (!handle) {
      handle = { objm: new Objm(nc), nc }
      this.handles.set(nc, handle)
    }
    return handle
  }

  private async jsm(handle: Handle): Promise<JetStreamManager> {
    handle.jsm ??= jetstreamManager(handle.nc)
    try {
      return await handle.jsm
    } catch (error) {
      delete handle.jsm
      throw unavailable(error)
    }
  }

  private async open(handle: Handle, bucket: string): Promise<ObjectStore | null> {
    try {
      return await handle.objm.open(bucket)
    } catch (error) {
      if (isStreamMissing(error)) return null
      throw unavailable(error)
    }
  }
}

/**
 * Reads the object's chunks as they come, stopping (and cancelling the read) as soon as more
 * than `limit` bytes have arrived; then checks the count against the metadata's size. The
 * digest is checked by the client at the last chunk: a mismatch errors the stream.
 */
async function readStream(entry: DropboxEntry, opened: ObjectResult, limit: number,
    what: string): Promise<DropboxRead> {
  const reader = opened.data.getReader()
  const parts: Uint8Array[] = []
  let received = 0
  try {
    while (true) {
      const { done, value } = await nextChunk(reader, what)
      if (done) break
      if (!value || value.length === 0) continue
      received += value.length
      if (received > limit) {
        await reader.cancel().catch(() => undefined)
        return { kind: 'size_mismatch', entry, received, complete: false }
      }
      parts.push(value)
    }
    await opened.error
  } catch (error) {
    await reader.cancel().catch(() => undefined)
    if (error instanceof Unavailable) throw error
    if (/digests do not match/i.test(messageOf(error))) return { kind: 'corrupt', entry, reason: 'digest' }
    throw unavailable(error)
  }
  if (received !== entry.size) return { kind: 'size_mismatch', entry, received, complete: true }
  const bytes = new Uint8Array(received)
  let at = 0
  for (const part of parts) {
    bytes.set(part, at)
    at += part.length
  }
  return { kind: 'read', entry, bytes }
}

/** The next chunk, or Unavailable when none comes for `chunk_wait_ms` (the reader is cancelled). */
async function nextChunk(reader: ReadableStreamDefaultReader<Uint8Array>,
    what: string): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>> {
  let timer: NodeJS.Timeout | undefined
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(
      new Unavailable(`the document dropbox stopped sending ${what}; try again`)), chunk_wait_ms)
  })
  try {
    return await Promise.race([reader.read(), stalled])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A dropbox for a bank started without NATS (unit tests): every request is refused as unavailable.
 */
export const noDropbox: Dropbox = {
  entry: () => Promise.reject(new Unavailable('the document dropboxes are not reachable')),
  read: () => Promise.reject(new Unavailable('the document dropboxes are not reachable')),
  entries: () => Promise.reject(new Unavailable('the document dropboxes are not reachable')),
}

interface InfoLike {
  name: string
  size: number
  mtime: string
  headers?: unknown
  options?: { link?: { bucket?: unknown; name?: unknown } | null } | undefined
}

function entryOf(info: InfoLike): DropboxEntry {
  const link = info.options?.link
  return {
    name: info.name,
    size: typeof info.size === 'number' ? info.size : Number.NaN,
    originalFilename: originalFilenameOf(info.headers),
    mtime: typeof info.mtime === 'string' ? info.mtime : '',
    link: link ? { bucket: String(link.bucket ?? ''), name: typeof link.name === 'string'
      && link.name !== '' ? link.name : null } : null,
  }
}

/** The header as `info()` gives it (MsgHdrs) or as a listing gives it (a plain record of lists). */
function originalFilenameOf(headers: unknown): string | null {
  if (!headers || typeof headers !== 'object') return null
  const value =
    typeof (headers as { get?: unknown }).get === 'function'
      ? (headers as { get(k: string): string }).get('original_filename')
      : (headers as Record<string, string[] | undefined>)['original_filename']?.[0]
  return value ? value : null
}

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof Unavailable) throw error
    throw unavailable(error)
  }
}

function isStreamMissing(error: unknown): boolean {
  const e = error as { code?: unknown; api_error?: { err_code?: number }; message?: string }
  return e?.api_error?.err_code === 10059 || /(stream|object store) not found/i.test(String(e?.message ?? ''))
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** JetStream away, timed out or refusing: the submission can be tried again later. */
function unavailable(error: unknown): Unavailable {
  return new Unavailable(
    `the document dropbox could not be read (${messageOf(error).slice(0, 120)}); try again`)
}
