import { createHash } from 'node:crypto'
import { Invalid, type FieldIssue } from '../errors.ts'
import { unstorableTextReason } from '../contract/text-rules.ts'
import { document_bytes_max, sniffContentType, submission_bytes_max } from './kyc-contract.ts'
import { readable, type Dropbox, type DropboxEntry, type DropboxRead } from './dropbox.ts'

// Reading what a submission names out of a dropbox and freezing it: every named object
// must exist, be a plain object stored in the bucket (not a link), be non-empty, at most
// 10 MB, hold exactly the bytes its metadata says (size and digest), and be a PDF, JPEG or
// PNG by its content (the first bytes), whatever its name says. All problems are reported
// at once, each under the request field that named the document.

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
 * What kind of document a name says it is: the reference SDK names objects
 * `<doc_type>_<epoch>` (KYB business), `<doc_type>_<director_id>_<epoch>` (KYB director)
 * and `kyc_<doc_type>_<user_id>_<epoch>` (KYC). The trailing id and number are dropped.
 */
export function docTypeOf(name: string, ownerOrDirectorId: string | null): string {
  let type = name.replace(/_\d+$/, '')
  if (ownerOrDirectorId && type.endsWith(`_${ownerOrDirectorId}`)) {
    type = type.slice(0, -ownerOrDirectorId.length - 1)
  }
  type = type.replace(/^kyc_/, '')
  return type.slice(0, 100) || 'document'
}

/**
 * Reads and checks every named document of the partner's bucket; throws one 400 naming each
 * one that fails.
 */
export async function freezeDocuments(
  dropbox: Dropbox,
  partnerId: string,
  bucket: string,
  named: NamedDocument[],
  docTypeId: (d: NamedDocument) => string | null,
): Promise<FrozenDocument[]> {
  throwIssues(nameIssues(named))
  // Links and sizes first, from the objects' metadata: nothing over the limit is downloaded.
  const entries =
    await Promise.all(named.map((document) => dropbox.entry(partnerId, bucket, document.name)))
  throwIssues(entryIssues(named, entries, bucket))
  const { frozen, issues, read } =
    await readDocuments(dropbox, { partnerId, bucket, named, docTypeId })
  // The objects may have been put again since their metadata was checked: the total again, of what
  // was read.
  if (issues.length === 0 && read > submission_bytes_max) issues.push(overSubmission(read))
  throwIssues(issues)
  return frozen
}

function throwIssues(issues: FieldIssue[]) {
  if (issues.length > 0) throw new Invalid(summary(issues), issues)
}

/** Names the bank cannot store, and names given twice. */
function nameIssues(named: NamedDocument[]): FieldIssue[] {
  const issues: FieldIssue[] = []
  const seen = new Map<string, string>()
  for (const document of named) {
    const reason = unstorableTextReason(document.name)
    if (reason) issues.push({ field: document.field, message: reason })
    const earlier = seen.get(document.name)
    if (earlier) issues.push(
      { field: document.field, message: `names the same object as ${earlier}` })
    seen.set(document.name, document.field)
  }
  return issues
}

/** Objects missing, links, sizes over the limits: each named document's entry, then the total. */
function entryIssues(named: NamedDocument[], entries: Array<DropboxEntry | null>,
    bucket: string): FieldIssue[] {
  const issues: FieldIssue[] = []
  named.forEach((document, i) => {
    const entry = entries[i]
    const problem = entry ? metadataProblem(entry)
      : `object ${document.name} is not in bucket ${bucket}`
    if (problem) issues.push({ field: document.field, message: problem })
  })
  const total = entries.reduce((sum, entry) => sum + (entry?.size ?? 0), 0)
  if (issues.length === 0 && total > submission_bytes_max) issues.push(overSubmission(total))
  return issues
}

/** Reads each document's bytes and freezes what it is; the issues of those that fail. */
async function readDocuments(dropbox: Dropbox, { partnerId, bucket, named, docTypeId }: {
  partnerId: string; bucket: string; named: NamedDocument[]
  docTypeId: (d: NamedDocument) => string | null }) {
  const issues: FieldIssue[] = []
  const frozen: FrozenDocument[] = []
  let read = 0
  for (const document of named) {
    const outcome = await dropbox.read(partnerId, bucket, document.name, document_bytes_max)
    const problem = readProblem(outcome, document.name, bucket)
    if (problem || outcome.kind !== 'read') {
      issues.push({ field: document.field, message: problem
        ?? `object ${document.name} could not be read` })
      continue
    }
    const { bytes, entry } = outcome
    read += bytes.length
    const contentType = sniffContentType(bytes)
    if (!contentType) {
      issues.push({ field: document.field,
        message: `object ${document.name} is not a PDF, JPEG or PNG (by its content)` })
      continue
    }
    const original = entry.originalFilename
    frozen.push({
      ...document,
      docType: docTypeOf(document.name, docTypeId(document)),
      originalFilename: original && !unstorableTextReason(original) ? original.slice(0, 255) : null,
      contentType,
      bytes,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    })
  }
  return { frozen, issues, read }
}

/** Why an entry's metadata keeps it from being read, or null when it may be. */
function metadataProblem(entry: DropboxEntry): string | null {
  if (entry.link) {
    const target = entry.link.name === null ? `bucket ${shown(entry.link.bucket)}`
      : `object ${shown(entry.link.name)} of bucket ${shown(entry.link.bucket)}`
    return `object ${entry.name} is a link (to ${target}); the bank reads only objects stored in ` +
      `the dropbox itself, not links`
  }
  if (!Number.isSafeInteger(entry.size)
    || entry.size < 0) return `object ${entry.name} has no valid size in its metadata`
  if (entry.size === 0) return `object ${entry.name} is empty`
  if (entry.size > document_bytes_max) return `object ${entry.name} is ${entry.size} bytes; the ` +
    `limit is ${document_bytes_max}`
  if (!readable(entry, document_bytes_max)) return `object ${entry.name} cannot be read`
  return null
}

/** Why a read object is refused, or null when it was read. */
function readProblem(outcome: DropboxRead, name: string, bucket: string): string | null {
  switch (outcome.kind) {
    case 'missing':
      return `object ${name} is not in bucket ${bucket}`
    case 'unread':
      return metadataProblem(outcome.entry) ?? `object ${name} cannot be read`
    case 'size_mismatch': {
      const held = outcome.complete ? `${outcome.received} bytes` : `more ` +
        `than ${outcome.entry.size} bytes (${outcome.received} had arrived when reading stopped)`
      return `object ${name} holds ${held} but its metadata says ${outcome.entry.size} bytes; it ` +
        `was not taken`
    }
    case 'corrupt':
      return outcome.reason === 'digest'
        ? `object ${name} does not match the SHA-256 digest of its metadata; it was not taken`
        : `object ${name} has metadata without a usable digest or chunk id; it was not taken`
    case 'read':
      return null
  }
}

function overSubmission(total: number): FieldIssue {
  return { field: '(body)', message: `the documents named come to ${total} bytes; a submission ` +
    `may bring at most ${submission_bytes_max}` }
}

/** A name from a link's metadata, as the message may carry it. */
function shown(text: string): string {
  return unstorableTextReason(text) ? '(an unprintable name)' : text.slice(0, 255)
}

function summary(issues: FieldIssue[]): string {
  const first = issues[0]!
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
  return `${first.field}: ${first.message}${more}`
}
