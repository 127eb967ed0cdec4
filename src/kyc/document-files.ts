import { createHash } from 'node:crypto'
import { Invalid, type FieldIssue } from '../errors.ts'
import { unstorableTextReason } from '../contract/text-rules.ts'
import { document_bytes_max, submission_bytes_max } from './kyc-contract.ts'
import type { Dropbox } from './dropbox.ts'

// Reading what a submission names out of a dropbox and freezing it: every named object
// must exist, be non-empty, at most 10 MB, and be a PDF, JPEG or PNG by its content (the
// first bytes), whatever its name says. All problems are reported at once, each under the
// request field that named the document.

/** One document a request names: the field that named it, the object, and its director. */
export interface NamedDocument {
  field: string
  name: string
  directorId: string | null
}

/** A document read and checked, ready to be stored. */
export interface FrozenDocument extends NamedDocument {
  docType: string
  originalFilename: string | null
  contentType: string
  bytes: Uint8Array
  sha256: string
}

/**
 * The content type by signature. Three formats are taken, so three signatures are checked
 * here rather than through a general file-type library.
 */
export function sniffContentType(bytes: Uint8Array): 'application/pdf' | 'image/jpeg' | 'image/png' | undefined {
  const starts = (...signature: number[]) => signature.every((byte, i) => bytes[i] === byte)
  if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) return 'application/pdf' // %PDF-
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png'
  return undefined
}

/**
 * What kind of document a name says it is: the reference SDK names objects
 * `<doc_type>_<epoch>` (KYB business), `<doc_type>_<director_id>_<epoch>` (KYB director)
 * and `kyc_<doc_type>_<user_id>_<epoch>` (KYC). The trailing id and number are dropped.
 */
export function docTypeOf(name: string, ownerOrDirectorId: string | null): string {
  let type = name.replace(/_\d+$/, '')
  if (ownerOrDirectorId && type.endsWith(`_${ownerOrDirectorId}`)) type = type.slice(0, -ownerOrDirectorId.length - 1)
  type = type.replace(/^kyc_/, '')
  return type.slice(0, 100) || 'document'
}

/** Reads and checks every named document; throws one 400 naming each one that fails. */
export async function freezeDocuments(dropbox: Dropbox, bucket: string, named: NamedDocument[], docTypeId: (d: NamedDocument) => string | null): Promise<FrozenDocument[]> {
  const issues: FieldIssue[] = []
  const seen = new Map<string, string>()
  for (const document of named) {
    const reason = unstorableTextReason(document.name)
    if (reason) issues.push({ field: document.field, message: reason })
    const earlier = seen.get(document.name)
    if (earlier) issues.push({ field: document.field, message: `names the same object as ${earlier}` })
    seen.set(document.name, document.field)
  }
  if (issues.length > 0) throw new Invalid(summary(issues), issues)

  // Sizes first, from the objects' metadata: nothing over the limit is downloaded.
  const entries = await Promise.all(named.map((document) => dropbox.entry(bucket, document.name)))
  named.forEach((document, i) => {
    const entry = entries[i]
    if (!entry) issues.push({ field: document.field, message: `object ${document.name} is not in bucket ${bucket}` })
    else if (entry.size === 0) issues.push({ field: document.field, message: `object ${document.name} is empty` })
    else if (entry.size > document_bytes_max) issues.push({ field: document.field, message: `object ${document.name} is ${entry.size} bytes; the limit is ${document_bytes_max}` })
  })
  const total = entries.reduce((sum, entry) => sum + (entry?.size ?? 0), 0)
  if (issues.length === 0 && total > submission_bytes_max) {
    issues.push({ field: '(body)', message: `the documents named come to ${total} bytes; a submission may bring at most ${submission_bytes_max}` })
  }
  if (issues.length > 0) throw new Invalid(summary(issues), issues)

  const frozen: FrozenDocument[] = []
  for (const [i, document] of named.entries()) {
    const bytes = await dropbox.read(bucket, document.name)
    if (!bytes) {
      issues.push({ field: document.field, message: `object ${document.name} is not in bucket ${bucket}` })
      continue
    }
    if (bytes.length === 0) issues.push({ field: document.field, message: `object ${document.name} is empty` })
    else if (bytes.length > document_bytes_max) issues.push({ field: document.field, message: `object ${document.name} is ${bytes.length} bytes; the limit is ${document_bytes_max}` })
    const contentType = sniffContentType(bytes)
    if (bytes.length > 0 && !contentType) issues.push({ field: document.field, message: `object ${document.name} is not a PDF, JPEG or PNG (by its content)` })
    if (!contentType || bytes.length === 0 || bytes.length > document_bytes_max) continue
    const original = entries[i]?.originalFilename ?? null
    frozen.push({
      ...document,
      docType: docTypeOf(document.name, docTypeId(document)),
      originalFilename: original && !unstorableTextReason(original) ? original.slice(0, 255) : null,
      contentType,
      bytes,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    })
  }
  if (issues.length > 0) throw new Invalid(summary(issues), issues)
  return frozen
}

function summary(issues: FieldIssue[]): string {
  const first = issues[0]!
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
  return `${first.field}: ${first.message}${more}`
}
