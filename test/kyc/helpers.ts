import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { after } from 'node:test'
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { jetstream } from '@nats-io/jetstream'
import { Base64UrlPaddedCodec, Objm, type ObjectInfo } from '@nats-io/obj'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, type TestBank, type TestPartner } from '../support/harness.ts'

// Putting files into a partner's dropbox as the reference SDK's KycDocumentUploader and
// KybDocumentUploader do (ensureObjectStore): the bucket created if missing with file
// storage, one replica, a 90-day TTL and a 100 MB limit, and each object put with an
// `original_filename` header. Plus what the KYC/KYB tests read back from the bank.

/** The smallest bytes each accepted type starts with, plus some body. */
export const pdf = (body = 'hello') => new TextEncoder().encode(`%PDF-1.7\n${body}\n%%EOF\n`)
export const jpeg = () => Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49,
  0x46, 0x00, 0x01])
export const png = () => Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00,
  0x00, 0x00, 0x0d])

/** The reference SDK's bucket settings (KycDocumentUploader.ensureObjectStore). */
export const sdk_bucket_ttl_days = 90
export const sdk_bucket_bytes_max = 100 * 1024 * 1024
const nanos_per_day = 24 * 3600 * 1_000_000_000

/** An epoch in seconds, as the SDK stamps object names (`Instant.now().getEpochSecond()`). */
export const epoch = 1_763_800_000

/** The object names KycDocumentUploader gives one upload. */
export function kycNames(userId: string, at = epoch) {
  return {
    front: `kyc_id_front_${userId}_${at}`,
    back: `kyc_id_back_${userId}_${at}`,
    proof: `kyc_proof_of_residence_${userId}_${at}`,
  }
}

/**
 * Puts objects as the SDK does: the bucket made on first use with the SDK's settings, each
 * object with `original_filename` (a name per object, or one for all).
 */
export async function putObjects(
  nc: NatsConnection,
  bucket: string,
  objects: Record<string, Uint8Array>,
  originalFilename: string | Record<string, string> = 'document.pdf',
): Promise<void> {
  const objm = new Objm(nc)
  buckets.add(bucket)
  const store = await objm.open(bucket).catch(() =>
    objm.create(bucket, {
      description: `document dropbox ${bucket}`,
      storage: 'file' as never,
      replicas: 1,
      ttl: sdk_bucket_ttl_days * nanos_per_day,
      max_bytes: sdk_bucket_bytes_max,
    }),
  )
  for (const [name, bytes] of Object.entries(objects)) {
    const h = natsHeaders()
    h.set('original_filename', typeof originalFilename === 'string' ? originalFilename
      : (originalFilename[name] ?? 'document.pdf'))
    await store.putBlob({ name, headers: h }, bytes)
  }
}

/** Every bucket putObjects made or filled in this process since the last cleanup. */
const buckets = new Set<string>()

/**
 * Destroys the file's dropbox buckets after its last test. The NATS server is the process's
 * and outlives the file: a bucket left behind is still being flushed to disk by the server
 * when the process exits and the harness removes the server's store directory, which then
 * fails (ENOTEMPTY) after megabytes of objects. Its own connection: the bank's closes first.
 */
export function destroyBucketsAfter(tb: TestBank): void {
  after(async () => {
    if (buckets.size === 0) return
    const nc = await connect({ servers: tb.natsUrl })
    try {
      const objm = new Objm(nc)
      // A bucket may be gone already (destroyed by its own test): one missing must not keep
      // the rest, or the next file's, from being destroyed.
      for (const bucket of buckets) {
        await objm
          .open(bucket)
          .then((store) => store.destroy())
          .catch(() => undefined)
      }
      buckets.clear()
    } finally {
      await nc.close()
    }
  })
}

export async function deleteObject(nc: NatsConnection, bucket: string,
    name: string): Promise<void> {
  const store = await new Objm(nc).open(bucket)
  await store.delete(name)
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** A document's bytes as an operator fetches them: chunk after chunk until next_offset is null. */
export async function fetchDocument(tb: TestBank, documentId: string): Promise<{
    bytes: Buffer; chunks: number; size: number; sha256: string }> {
  const parts: Buffer[] = []
  let offset: number | null = 0
  let first: { size: number; sha256: string } | undefined
  while (offset !== null) {
    const chunk: Awaited<ReturnType<TestBank['operator']['kyc']['document']>> =
      await tb.operator.kyc.document({ document_id: documentId, offset })
    assert.equal(chunk.offset, offset)
    first ??= { size: chunk.size, sha256: chunk.sha256 }
    const part = Buffer.from(chunk.data, 'base64')
    if (chunk.next_offset !== null) assert.equal(chunk.next_offset, offset + part.length,
      'next_offset follows the bytes returned')
    parts.push(part)
    offset = chunk.next_offset
    assert.ok(parts.length <= 100, 'a document ends within 100 chunks')
  }
  return { bytes: Buffer.concat(parts), chunks: parts.length, size: first!.size,
    sha256: first!.sha256 }
}

/** The events the outbox holds for one resource, oldest first. */
export async function eventsOf(tb: TestBank, resourceId: string): Promise<Array<{
    type: string; partner_id: string | null; data: any }>> {
  const rows = await tb.bank.database.db.selectFrom('events').selectAll().where('resource_id', '=',
    resourceId).orderBy('seq').execute()
  return rows.map((e) => ({ type: e.type, partner_id: e.partner_id,
    data: typeof e.data === 'string' ? JSON.parse(e.data) : e.data }))
}

/** The submissions the bank recorded for an owner (user or entity), oldest first. */
export async function submissionsOf(tb: TestBank, ownerId: string) {
  return tb.bank.database.db.selectFrom('kyc_submissions').select(['id', 'state', 'decided_by',
    'rejection_reason']).where('owner_id', '=', ownerId).orderBy('seq').execute()
}

/** The credential id of the test bank's operator (the bootstrap credential). */
export async function operatorCredentialId(tb: TestBank): Promise<string> {
  const rows = await tb.bank.database.db.selectFrom('credentials').select('id').where('role', '=',
    'operator').where('label', '=', 'bootstrap').execute()
  assert.equal(rows.length, 1)
  return rows[0]!.id
}

/** The bytes of an object the SDK would upload from a file of `size` bytes, starting as a PDF. */
export function largePdf(size: number, seed = 'x'): Uint8Array {
  const bytes = Buffer.alloc(size, seed)
  bytes.write('%PDF-1.7\n', 0, 'latin1')
  // Vary the body so that a chunk out of place would change the hash.
  for (let i = 9; i < size; i += 4093) bytes[i] = i % 251
  return bytes
}

// --- Crafting what the Object Store client would never write: objects whose metadata and
// chunks disagree, written the way @nats-io/obj writes them (chunks on `$O.<bucket>.C.<nuid>`,
// the metadata as JSON on `$O.<bucket>.M.<name in padded base64url>`).

/** The metadata of an object as the client stores it (what `info()` reads back). */
export interface RawObjectMeta {
  name: string
  bucket: string
  nuid: string
  size: number
  chunks: number
  digest: string
  mtime: string
  deleted: boolean
  headers?: Record<string, string[]>
  options?: { max_chunk_size?: number; link?: { bucket: string; name?: string } }
}

/** The digest as @nats-io/obj writes it: `SHA-256=` and the hash in padded base64url. */
export const objectDigest = (bytes: Uint8Array) => `SHA-256=${createHash('sha256').update(bytes).digest('base64').replace(/\+/g, '-').replace(/\//g, '_')}`

/** Publishes chunks under a new nuid of the bucket (which must exist); resolves with the nuid. */
export async function publishChunks(nc: NatsConnection, bucket: string,
    chunks: Uint8Array[]): Promise<string> {
  const js = jetstream(nc)
  const id = randomUUID().replaceAll('-', '')
  for (const chunk of chunks) await js.publish(`$O.${bucket}.C.${id}`, chunk)
  return id
}

/** Publishes an object's metadata as given, as the latest under its name. */
export async function publishMeta(nc: NatsConnection, bucket: string,
    meta: RawObjectMeta): Promise<void> {
  await jetstream(nc).publish(`$O.${bucket}.M.${Base64UrlPaddedCodec.encode(meta.name)}`,
    JSON.stringify(meta))
}

/**
 * The metadata an honest put of `bytes` in one chunk would write, for the crafted object to depart
 * from.
 */
export function metaFor(name: string, bucket: string, id: string, bytes: Uint8Array,
    filename = 'document.pdf'): RawObjectMeta {
  return {
    name,
    bucket,
    nuid: id,
    size: bytes.length,
    chunks: 1,
    digest: objectDigest(bytes),
    mtime: new Date().toISOString(),
    deleted: false,
    headers: { original_filename: [filename] },
    options: { max_chunk_size: 128 * 1024 },
  }
}

/** An object's info, to link to it (ObjectStore.link takes the source's info). */
export async function objectInfo(nc: NatsConnection, bucket: string,
    name: string): Promise<ObjectInfo> {
  const info = await (await new Objm(nc).open(bucket)).info(name)
  assert.ok(info, `object ${name} is in bucket ${bucket}`)
  return info
}

/** Puts a link `name` in bucket `bucket` to an object (in any bucket), as ObjectStore.link does. */
export async function putLink(nc: NatsConnection, bucket: string, name: string,
    target: ObjectInfo): Promise<void> {
  buckets.add(bucket)
  await (await new Objm(nc).open(bucket)).link(name, target)
}

/**
 * Puts a link `name` in bucket `bucket` to the whole bucket `target`, as ObjectStore.linkStore
 * does.
 */
export async function putBucketLink(nc: NatsConnection, bucket: string, name: string,
    target: string): Promise<void> {
  const objm = new Objm(nc)
  buckets.add(bucket)
  await (await objm.open(bucket)).linkStore(name, await objm.open(target))
}

/**
 * Two approved partners with a business entity each, for a file's KYC tests (`onboard`, in
 * its before hook), and new users of either, KYC not_started (`applicant`), whose id numbers
 * are born on `birthDate` (YYMMDD) so that files on one server never share one.
 */
export function kycApplicants(tb: TestBank, birthDate: string) {
  const businesses = new Map<string, string>()
  let made = 0
  return {
    async onboard(): Promise<[TestPartner, TestPartner]> {
      const partners = await Promise.all([onboardPartner(tb, { approve: true }),
        onboardPartner(tb, { approve: true })])
      for (const partner of partners) businesses.set(partner.partnerId,
        (await partner.client.entities.create(businessEntity())).id)
      return partners
    },
    async applicant(owner: TestPartner): Promise<string> {
      const body = `${birthDate}${String(++made).padStart(4, '0')}08`
      const { userId } = await owner.client.users.create(
        userRequest(businesses.get(owner.partnerId)!, { id_number: body + luhnCheckDigit(body) }))
      return userId
    },
  }
}
