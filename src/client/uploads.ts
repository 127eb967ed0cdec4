import { createHash } from 'node:crypto'
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { Objm, type ObjectStore, type ObjectStoreOptions } from '@nats-io/obj'
import type { FieldIssue } from '../contract/error-types.ts'
import { uuid } from '../contract/fields.ts'
import type { ResponseOf } from '../contract/operation.ts'
import { unstorableTextReason } from '../contract/text-rules.ts'
import {
  document_bytes_max, document_content_types, kyb_documents_max, kybBucket,
  kycBucket, kycOperations, objectName, sniffContentType, submission_bytes_max,
  type DocumentContentType,
} from '../kyc/kyc-contract.ts'
import type { PartnerMethodGroups } from './generated/partner-methods.ts'
import { BankApiError, type NatsApi } from './transport.ts'

// KYC and KYB uploads: helpers of the SDK's own beside the methods derived from the contract
// (`bank.kyc.uploadDocuments`, `bank.kyb.uploadDocuments`). Each checks every file as the bank
// will (size, type by content, the SHA-256 the bank checks the bytes against) before anything
// is sent, asks the bank whether the user or entity is the partner's (so that nothing is put
// into a dropbox of an id the bank refuses), puts the files into the partner's own dropbox (a
// JetStream Object Store bucket, made as the incumbent's reference SDK makes it) and submits
// them. An object's name comes from the file's SHA-256, so the same file always gets the same
// name: uploading it again (a retry after a timeout) puts the same bytes under the same name.

/** A file to hand the bank: its bytes, the name it had on the partner's side, and its type. */
export interface DocumentFile {
  /** The file's bytes (a Node.js Buffer is a Uint8Array): 1 byte to 10 MB. */
  file: Uint8Array
  /** The file's own name, kept by the bank as `original_filename` (1–255 characters). */
  filename: string
  /** What the file is; it must be what its first bytes say (a PDF, a JPEG or a PNG). */
  content_type: DocumentContentType
}

/** A KYB document: a file and what kind of document it is. */
export interface KybDocumentFile extends DocumentFile {
  /**
   * The kind of document, as the bank files it (`business_registration`, `proof_of_address`,
   * `tax_verification`; a director's `director_id_front`, `director_id_back`,
   * `director_selfie`, `director_proof_of_address`): lower-case letters, digits and `_`,
   * starting with a letter, at most 100 characters.
   */
  doc_type: string
}

export interface KycUploadRequest {
  user_id: string
  /** The identity document (the front of an ID card, or the passport's photo page). */
  id_document: DocumentFile
  proof_of_residence: DocumentFile
  /** The back of an ID card, when there is one: the bank takes it along with the front. */
  id_back?: DocumentFile
}

export interface KybUploadRequest {
  entity_id: string
  /** The business's documents: at least one. */
  documents: KybDocumentFile[]
  /** Each director's documents, by the director's `id` as `bank.kyb.get` lists it. */
  directors?: Record<string, KybDocumentFile[]>
}

/** A document put into the dropbox and named in the submission. */
export interface UploadedDocument {
  /** The request's field it came from: `id_document`, `documents[0]`, `directors.<id>[1]`. */
  field: string
  bucket: string
  /** The object's name in the bucket, as the submission named it. */
  name: string
  size: number
  content_type: DocumentContentType
  /** The SHA-256 of its bytes, hex: the bank records the same (`ops.kyc.show`, `sha256`). */
  sha256: string
}

export interface KycUploads {
  /**
   * Submits a user's KYC with its files: checks each file (1 byte to 10 MB, a PDF, JPEG or
   * PNG by its first bytes and as `content_type` says, 50 MB in all) before anything is sent,
   * puts them into the user's dropbox `kyc_dropbox_<user_id>` and calls
   * `users.uploadKycDocuments`. The user's KYC goes `pending`.
   *
   * Throws `DocumentCheckError` (400 `invalid_request`, `details` naming each field) when a
   * file fails a check, with nothing sent; `BankApiError` as the bank answers (404 a user of
   * another partner, 409 a KYC approved already, 503 try again); `DropboxError` when the
   * dropbox cannot take a file. Safe to call again with the same files (a retry).
   *
   *   const pdf = await readFile('municipal-account.pdf')
   *   await bank.kyc.uploadDocuments({ user_id, proof_of_residence: { file: pdf,
   *     filename: 'municipal-account.pdf', content_type: 'application/pdf' }, id_document })
   */
  uploadDocuments(request: KycUploadRequest): Promise<
    ResponseOf<typeof kycOperations.uploadKycDocuments> & { documents: UploadedDocument[] }>
}

export interface KybUploads {
  /**
   * Submits a business entity's KYB with its files: checks each file as `kyc.uploadDocuments`
   * does (and at most 50 documents) before anything is sent, checks that each director is
   * one `kyb.get` lists, puts the files into the entity's dropbox `kyb_dropbox_<entity_id>`
   * and calls `kyb.submit`. The KYB's state goes `submitted`.
   *
   * Throws `DocumentCheckError` (400 `invalid_request`) when a file or a director fails a
   * check, with nothing put into the dropbox; `BankApiError` as the bank answers (404 an
   * entity of another partner, 400 a personal entity, 409 a KYB approved already);
   * `DropboxError` when the dropbox cannot take a file. Safe to call again (a retry).
   *
   *   await bank.kyb.uploadDocuments({ entity_id, documents: [{ doc_type:
   *     'business_registration', file, filename: 'cor14-3.pdf', content_type:
   *     'application/pdf' }], directors: { [director.id]: [{ doc_type: 'director_id_front',
   *     file: front, filename: 'id.jpg', content_type: 'image/jpeg' }] } })
   */
  uploadDocuments(request: KybUploadRequest): Promise<{ documents: UploadedDocument[] }>
}

/** The partner SDK's methods: those of the contract, and the uploads. */
export type PartnerMethodsWithUploads = Omit<PartnerMethodGroups, 'kyb'> & {
  readonly kyc: KycUploads
  readonly kyb: PartnerMethodGroups['kyb'] & KybUploads
}

/**
 * A file refused by the SDK's own checks, before anything was sent: a 400 `invalid_request`
 * as the bank would answer it, `details` naming each field (`id_document.file`,
 * `documents[1].content_type`, …).
 */
export class DocumentCheckError extends BankApiError {
  constructor(readonly issues: FieldIssue[]) {
    const first = issues[0]!
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
    super(400, 'invalid_request', `${first.field}: ${first.message}${more}`, issues)
    this.name = 'DocumentCheckError'
  }
}

/** The dropbox did not take a file (JetStream away, the bucket full, no permission). */
export class DropboxError extends Error {
  constructor(readonly bucket: string, readonly object: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause)
    super(`could not put ${object} into the dropbox ${bucket}: ${why}`, { cause })
    this.name = 'DropboxError'
  }
}

/** The bucket settings of the reference SDK's uploaders (ensureObjectStore). */
export const dropbox_bucket = {
  ttl_days: 90,
  max_bytes: 100 * 1024 * 1024,
}
const nanos_per_day = 24 * 3600 * 1_000_000_000

/** A file checked and named, ready to be put. */
interface Prepared {
  field: string
  name: string
  bytes: Uint8Array
  filename: string
  contentType: DocumentContentType
  sha256: string
}

const docTypeRule = /^[a-z][a-z0-9_]{0,99}$/

/** What is wrong with one file, each under its field; none when it may be sent. */
function fileIssues(field: string, document: DocumentFile): FieldIssue[] {
  if (typeof document !== 'object' || document === null) {
    return [{ field, message: 'must be { file, filename, content_type }' }]
  }
  const issues: FieldIssue[] = []
  const { file, filename, content_type: declared } = document
  const types = document_content_types.join(', ')
  if (!(file instanceof Uint8Array)) {
    issues.push({ field: `${field}.file`, message: "must be the file's bytes (a Uint8Array or " +
      'Buffer)' })
  } else if (file.length === 0) {
    issues.push({ field: `${field}.file`, message: 'is empty' })
  } else if (file.length > document_bytes_max) {
    issues.push({ field: `${field}.file`, message: `is ${file.length} bytes; the bank takes at ` +
      `most ${document_bytes_max} (10 MB)` })
  }
  if (!document_content_types.includes(declared)) {
    issues.push({ field: `${field}.content_type`, message: `must be one of ${types} (the bank ` +
      `takes no other type)` })
  } else if (file instanceof Uint8Array && file.length > 0) {
    const sniffed = sniffContentType(file)
    if (sniffed !== declared) issues.push({ field: `${field}.content_type`, message: sniffed
      ? `is ${declared}, but the file is ${sniffed} by its content (its first bytes)`
      : `is ${declared}, but the file is not a PDF, JPEG or PNG by its content (its first bytes)` })
  }
  const nameProblem = typeof filename !== 'string' || filename.length === 0
    ? 'must be the file\'s name (a non-empty string)'
    : filename.length > 255 ? 'must be at most 255 characters' : unstorableTextReason(filename)
  if (nameProblem) issues.push({ field: `${field}.filename`, message: nameProblem })
  return issues
}

/**
 * Checks a file and names its object: `prefix` and a number from its SHA-256, the form of
 * the reference SDK's names (`<prefix>_<epoch>`) whose number the bank drops to read the kind
 * of document. The same bytes under the same prefix always make the same name.
 */
function prepare(field: string, document: DocumentFile, prefix: string,
    issues: FieldIssue[]): Prepared | undefined {
  const found = fileIssues(field, document)
  if (found.length > 0) {
    issues.push(...found)
    return undefined
  }
  const sha256 = createHash('sha256').update(document.file).digest('hex')
  const name = `${prefix}_${Number.parseInt(sha256.slice(0, 12), 16)}`
  const named = objectName().safeParse(name)
  if (!named.success) {
    issues.push({ field, message: `makes the object name ${JSON.stringify(name)}, which ` +
      `${named.error.issues[0]?.message ?? 'the bank does not take'}` })
    return undefined
  }
  return { field, name, bytes: document.file, filename: document.filename,
    contentType: document.content_type, sha256 }
}

/** The id as the bank reads it (a UUID, lower case), or an issue. */
function idOf(field: string, value: unknown, issues: FieldIssue[]): string {
  const parsed = uuid().safeParse(value)
  if (parsed.success) return parsed.data
  issues.push({ field, message: 'must be a UUID' })
  return ''
}

/** Issues of the whole submission: the same object named twice, more than 50 MB in all. */
function submissionIssues(prepared: Prepared[]): FieldIssue[] {
  const issues: FieldIssue[] = []
  const seen = new Map<string, string>()
  for (const p of prepared) {
    const earlier = seen.get(p.name)
    if (earlier) issues.push({ field: p.field, message: `is the same file as ${earlier}` })
    seen.set(p.name, p.field)
  }
  const total = prepared.reduce((sum, p) => sum + p.bytes.length, 0)
  if (total > submission_bytes_max) issues.push({ field: '(body)', message: `the files come ` +
    `to ${total} bytes; a submission may bring at most ${submission_bytes_max} (50 MB)` })
  return issues
}

function throwIssues(issues: FieldIssue[]): void {
  if (issues.length > 0) throw new DocumentCheckError(issues)
}

/** The KYC files checked and named, or DocumentCheckError. */
function prepareKyc(request: KycUploadRequest): { userId: string; files: Prepared[] } {
  if (typeof request !== 'object' || request === null) throw new DocumentCheckError([{
    field: '(body)', message: 'must be { user_id, id_document, proof_of_residence, id_back? }' }])
  const issues: FieldIssue[] = []
  const userId = idOf('user_id', request.user_id, issues)
  const kinds = [['id_document', 'id_front'], ['proof_of_residence', 'proof_of_residence'],
    ['id_back', 'id_back']] as const
  const files: Prepared[] = []
  for (const [field, docType] of kinds) {
    const document = request[field]
    if (document === undefined && field === 'id_back') continue
    const prepared = prepare(field, document!, `kyc_${docType}_${userId}`, issues)
    if (prepared) files.push(prepared)
  }
  throwIssues([...issues, ...submissionIssues(files)])
  return { userId, files }
}

/** A KYB file checked and named (`<doc_type>_<n>`, a director's `<doc_type>_<director>_<n>`). */
function prepareKybFile(field: string, document: KybDocumentFile, directorId: string | null,
    issues: FieldIssue[]): Prepared | undefined {
  const docType = (document as Partial<KybDocumentFile> | null)?.doc_type
  if (typeof docType === 'string' && docTypeRule.test(docType)) {
    return prepare(field, document, directorId === null ? docType : `${docType}_${directorId}`,
      issues)
  }
  issues.push({ field: `${field}.doc_type`, message: 'must be lower-case letters, digits and ' +
    '_, starting with a letter (at most 100 characters), e.g. business_registration' })
  issues.push(...fileIssues(field, document))
  return undefined
}

/** A list of KYB files checked and named; an issue when it is no list. */
function prepareKybList(field: string, value: unknown, directorId: string | null,
    issues: FieldIssue[]): Prepared[] {
  if (!Array.isArray(value)) {
    issues.push({ field, message: 'must be a list of documents' })
    return []
  }
  return (value as KybDocumentFile[])
    .map((document, i) => prepareKybFile(`${field}[${i}]`, document, directorId, issues))
    .filter((prepared) => prepared !== undefined)
}

/** The KYB files checked and named, or DocumentCheckError. */
function prepareKyb(request: KybUploadRequest): { entityId: string; business: Prepared[];
    directors: Map<string, Prepared[]> } {
  if (typeof request !== 'object' || request === null) throw new DocumentCheckError([{
    field: '(body)', message: 'must be { entity_id, documents, directors? }' }])
  const issues: FieldIssue[] = []
  const entityId = idOf('entity_id', request.entity_id, issues)
  const business = prepareKybList('documents', request.documents, null, issues)
  if (Array.isArray(request.documents) && request.documents.length === 0) {
    issues.push({ field: 'documents', message: 'name at least one business document' })
  }
  const directors = new Map<string, Prepared[]>()
  for (const [id, documents] of Object.entries(request.directors ?? {})) {
    directors.set(id, prepareKybList(`directors.${id}`, documents, id, issues))
  }
  const all = [...business, ...[...directors.values()].flat()]
  if (all.length > kyb_documents_max) issues.push({ field: 'documents', message: `the ` +
    `submission has ${all.length} documents; at most ${kyb_documents_max}` })
  throwIssues([...issues, ...submissionIssues(all)])
  return { entityId, business, directors }
}

/** The partner's dropbox bucket, made as the reference SDK makes it when it is missing. */
async function openBucket(nc: NatsConnection, bucket: string): Promise<ObjectStore> {
  const objm = new Objm(nc)
  const options: Partial<ObjectStoreOptions> = {
    description: `document dropbox ${bucket}`,
    storage: 'file' as ObjectStoreOptions['storage'],
    replicas: 1,
    ttl: dropbox_bucket.ttl_days * nanos_per_day,
    max_bytes: dropbox_bucket.max_bytes,
  }
  try {
    return await objm.open(bucket)
  } catch {
    try {
      return await objm.create(bucket, options)
    } catch (error) {
      // Made meanwhile by another upload: open it; else the creation's error.
      return objm.open(bucket).catch(() => {
        throw new DropboxError(bucket, '(the bucket)', error)
      })
    }
  }
}

/** The object digest @nats-io/obj records: `SHA-256=` and the hash in padded base64url. */
const objectDigest = (sha256Hex: string) => `SHA-256=${Buffer.from(sha256Hex, 'hex')
  .toString('base64').replace(/\+/g, '-').replace(/\//g, '_')}`

/** Puts each file (again, when it is there already: the same name holds the same bytes). */
async function putAll(nc: NatsConnection, bucket: string,
    files: Prepared[]): Promise<UploadedDocument[]> {
  const store = await openBucket(nc, bucket)
  const uploaded: UploadedDocument[] = []
  for (const f of files) {
    const h = natsHeaders()
    h.set('original_filename', f.filename)
    let digest: string
    try {
      digest = (await store.putBlob({ name: f.name, headers: h }, f.bytes)).digest
    } catch (error) {
      throw new DropboxError(bucket, f.name, error)
    }
    if (digest.replace(/^sha-256=/i, 'SHA-256=') !== objectDigest(f.sha256)) {
      throw new DropboxError(bucket, f.name, new Error(`the dropbox recorded digest ${digest}, ` +
        `not the file's ${objectDigest(f.sha256)}`))
    }
    uploaded.push({ field: f.field, bucket, name: f.name, size: f.bytes.length,
      content_type: f.contentType, sha256: f.sha256 })
  }
  return uploaded
}

/** The NATS connection of the client's transport (opened if need be), for the dropbox. */
function connectionOf(api: NatsApi): Promise<NatsConnection> {
  // NatsApi keeps its connection to itself; the uploads share it rather than open another.
  const inner = api as unknown as { connection?: NatsConnection;
    connect?: () => Promise<NatsConnection> }
  if (inner.connection) return Promise.resolve(inner.connection)
  if (typeof inner.connect !== 'function') {
    return Promise.reject(new Error('the SDK\'s transport gives the uploads no connection'))
  }
  return inner.connect()
}

/** KYC: check, ask the bank for the user, put, submit. */
async function uploadKyc(client: PartnerMethodGroups, api: NatsApi, request: KycUploadRequest) {
  const { userId, files } = prepareKyc(request)
  // The user must be the partner's before anything goes into a bucket named after it.
  await client.users.get({ user_id: userId })
  const documents = await putAll(await connectionOf(api), kycBucket(userId), files)
  const nameOf = (field: string) => documents.find((d) => d.field === field)!.name
  const reply = await client.users.uploadKycDocuments({ user_id: userId,
    id_document: nameOf('id_document'), proof_of_residence: nameOf('proof_of_residence') })
  return { ...reply, documents }
}

/** KYB: check, ask the bank for the entity's KYB and directors, put, submit. */
async function uploadKyb(client: PartnerMethodGroups, api: NatsApi, request: KybUploadRequest) {
  const { entityId, business, directors } = prepareKyb(request)
  const kyb = await client.kyb.get({ entity_id: entityId })
  const known = new Set(kyb.directors.map((d) => d.id))
  throwIssues([...directors.keys()].filter((id) => !known.has(id)).map((id) => ({
    field: `directors.${id}`, message: `is not a director of the entity (kyb.get lists ` +
      `${known.size === 0 ? 'none' : [...known].join(', ')})` })))
  const all = [...business, ...[...directors.values()].flat()]
  const documents = await putAll(await connectionOf(api), kybBucket(entityId), all)
  const names = (files: Prepared[]) => files.map((f) => f.name)
  // `kyb.submit` answers `{}`: the documents are the answer.
  await client.kyb.submit({ entity_id: entityId, documents: names(business),
    ...(directors.size > 0 ? { directors: Object.fromEntries([...directors].map(([id, files]) =>
      [id, names(files)])) } : {}) })
  return { documents }
}

/** Adds the uploads to a partner client whose method groups are made: `kyc`, and to `kyb`. */
export function addUploads(client: PartnerMethodGroups, api: NatsApi): void {
  const kyc: KycUploads = { uploadDocuments: (request) => uploadKyc(client, api, request) }
  const kyb: KybUploads = { uploadDocuments: (request) => uploadKyb(client, api, request) }
  Object.assign(client, { kyc })
  Object.assign(client.kyb, kyb)
}
