import type { NatsConnection } from '@nats-io/transport-node'
import { Objm, type ObjectStore } from '@nats-io/obj'
import { Unavailable } from '../errors.ts'

// The partners' dropboxes: JetStream Object Store buckets (`kyc_dropbox_<user_id>`,
// `kyb_dropbox_<entity_id>`) that the partner creates and fills, as the reference SDK's
// KycDocumentUploader and KybDocumentUploader do. The bank only reads them, at submission,
// and copies what a request names into its own store.

/** What a dropbox holds under one name, before its bytes are read. */
export interface DropboxEntry {
  name: string
  size: number
  /** The `original_filename` header the reference SDK puts on each object, when present. */
  originalFilename: string | null
  /** When the object was last put (RFC 3339, the server's clock). */
  mtime: string
}

export interface Dropbox {
  /** The entry under `name`, or null when the bucket or the object does not exist. */
  entry(bucket: string, name: string): Promise<DropboxEntry | null>
  /** The object's bytes (checked against its digest by the client), or null when it is gone. */
  read(bucket: string, name: string): Promise<Uint8Array | null>
  /** Every object of the bucket (empty when the bucket does not exist). */
  entries(bucket: string): Promise<DropboxEntry[]>
}

/** A bucket name as the reference SDK forms it. */
export const kycBucket = (userId: string) => `kyc_dropbox_${userId}`
export const kybBucket = (entityId: string) => `kyb_dropbox_${entityId}`

/** Reads the dropboxes through the bank's own NATS connection. */
export class NatsDropbox implements Dropbox {
  private readonly objm: Objm

  constructor(nc: NatsConnection) {
    this.objm = new Objm(nc)
  }

  async entry(bucket: string, name: string): Promise<DropboxEntry | null> {
    const store = await this.open(bucket)
    if (!store) return null
    const info = await guard(() => store.info(name))
    if (!info || info.deleted) return null
    return entryOf(info)
  }

  async read(bucket: string, name: string): Promise<Uint8Array | null> {
    const store = await this.open(bucket)
    if (!store) return null
    return guard(() => store.getBlob(name))
  }

  async entries(bucket: string): Promise<DropboxEntry[]> {
    const store = await this.open(bucket)
    if (!store) return []
    const infos = await guard(() => store.list())
    return infos.filter((info) => !info.deleted).map(entryOf)
  }

  private async open(bucket: string): Promise<ObjectStore | null> {
    try {
      return await this.objm.open(bucket)
    } catch (error) {
      if (isStreamMissing(error)) return null
      throw unavailable(error)
    }
  }
}

/** A dropbox for a bank started without NATS (unit tests): every request is refused as unavailable. */
export const noDropbox: Dropbox = {
  entry: () => Promise.reject(new Unavailable('the document dropboxes are not reachable')),
  read: () => Promise.reject(new Unavailable('the document dropboxes are not reachable')),
  entries: () => Promise.reject(new Unavailable('the document dropboxes are not reachable')),
}

function entryOf(info: { name: string; size: number; mtime: string; headers?: unknown }): DropboxEntry {
  return { name: info.name, size: info.size, originalFilename: originalFilenameOf(info.headers), mtime: info.mtime }
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
    throw unavailable(error)
  }
}

function isStreamMissing(error: unknown): boolean {
  const e = error as { code?: unknown; api_error?: { err_code?: number }; message?: string }
  return e?.api_error?.err_code === 10059 || /(stream|object store) not found/i.test(String(e?.message ?? ''))
}

/** JetStream away, timed out or refusing: the submission can be tried again later. */
function unavailable(error: unknown): Unavailable {
  const message = error instanceof Error ? error.message : String(error)
  return new Unavailable(`the document dropbox could not be read (${message.slice(0, 120)}); try again`)
}
