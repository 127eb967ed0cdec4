import { z } from 'zod'
import { accountSummary } from '../accounts/account-contract.ts'
import { registrationNumberReply } from '../entities/entity-contract.ts'
import { email, pageLimit, text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { kycStatus, userRecord } from '../users/user-contract.ts'

// KYC and KYB evidence, the way the incumbent's reference SDK hands it over: the partner
// puts files into a JetStream Object Store bucket of the subject (`kyc_dropbox_<user_id>`,
// `kyb_dropbox_<entity_id>`), then a request names the objects. The bank copies each named
// object out of the bucket into its own store at once (its SHA-256 recorded), so what an
// operator reviews cannot change afterwards. Operators review on `ops.kyc.*`/`ops.kyb.*`.

/** The largest document the bank takes: 10 MB. */
export const document_bytes_max = 10 * 1024 * 1024
/** The most bytes one submission may bring in, all its documents together: 50 MB. */
export const submission_bytes_max = 50 * 1024 * 1024
/** The most documents one KYB submission may name, business and directors' together. */
export const kyb_documents_max = 50
/** The longest object name a request may carry. */
export const object_name_length_max = 255
/**
 * The most bytes of a document one `ops.document.get` reply carries (base64 makes it a third
 * larger).
 */
export const document_chunk_bytes_max = 256 * 1024
/** KYB metadata: at most this many keys and this many bytes as JSON. */
export const kyb_metadata_keys_max = 50
export const kyb_metadata_bytes_max = 4096

export const document_content_types = ['application/pdf', 'image/jpeg', 'image/png'] as const
export type DocumentContentType = (typeof document_content_types)[number]

/** A user's KYC dropbox and an entity's KYB dropbox, as the reference SDK names them. */
export const kycBucket = (userId: string) => `kyc_dropbox_${userId}`
export const kybBucket = (entityId: string) => `kyb_dropbox_${entityId}`

/**
 * The content type by signature. Three formats are taken, so three signatures are checked
 * here rather than through a general file-type library. The bank takes a document by this,
 * never by its name; the SDK checks a file the same way before it uploads it.
 */
export function sniffContentType(bytes: Uint8Array): DocumentContentType | undefined {
  const starts = (...signature: number[]) => signature.every((byte, i) => bytes[i] === byte)
  if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) return 'application/pdf' // %PDF-
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png'
  return undefined
}
export const kyb_states = ['not_started', 'submitted', 'approved', 'rejected'] as const
export type KybState = (typeof kyb_states)[number]

/** An object's name in a dropbox bucket, as the partner chose it. */
export const objectName = () =>
  z
    .string({ error: 'must be a string (an object name in the dropbox bucket)' })
    .min(1, { error: 'must not be empty' })
    .max(object_name_length_max, { error: `must be at most ${object_name_length_max} characters` })
    // The names the reference SDK gives are ASCII (`kyc_id_front_<user_id>_<epoch>`); other
    // characters are encoded differently by different NATS clients, so one could not be found.
    .regex(/^[\x20-\x7e]+$/, { error: 'must be printable ASCII (an object name such as kyc_id_front_<user_id>_<epoch>)' })
    .describe('The name of an object in the dropbox bucket, printable ASCII. The object must be ' +
      'stored in the bucket itself (not a link), hold 1 byte to 10 MB, exactly as many as ' +
      'its metadata says and matching its SHA-256 digest, and be a PDF, JPEG or PNG by its ' +
      'first bytes (its name and type do not count). The SDK\'s `kyc.uploadDocuments` and ' +
      '`kyb.uploadDocuments` check the files, put them and name them.')

/** Free-form KYB metadata: string keys to strings, numbers or booleans, small. */
export const kybMetadata = () =>
  z
    .record(
      z.string().min(1, { error: 'keys must not be empty' }).max(64,
        { error: 'keys must be at most 64 characters' }),
      z.union([z.string().max(1000), z.number(), z.boolean()],
        { error: 'values must be strings, numbers or booleans' }),
    )
    .refine((m) => Object.keys(m).length <= kyb_metadata_keys_max,
      { error: `at most ${kyb_metadata_keys_max} keys` })
    .refine((m) => new TextEncoder().encode(JSON.stringify(m)).length <= kyb_metadata_bytes_max,
      { error: `at most ${kyb_metadata_bytes_max} bytes as JSON` })

// --- Partner side: shapes exactly as the reference SDK's records (client/KYBService.java,
// client/UserService.java)

/** `KYBService.Document`. */
export const kybDocument = z.object({
  key: z.string(),
  doc_type: z.string(),
  rejection_reason: z.string().nullable(),
  approved: z.boolean(),
})

/** `KYBService.Director`. */
export const kybDirector = z.object({
  id: z.string(),
  name: z.string(),
  approved: z.boolean(),
  verified: z.boolean(),
  documents: z.array(kybDocument),
  verification_sent: z.boolean(),
  id_type: z.string(),
  metadata: z.record(z.string(), z.unknown()),
})

const kybView = z.object({
  entity_id: z.string(),
  documents: z.array(kybDocument),
  directors: z.array(kybDirector),
  metadata: z.record(z.string(), z.unknown()),
})

export const kycOperations = {
  uploadKycDocuments: operation({
    name: 'user_upload_kyc_documents',
    sdk: 'users.uploadKycDocuments',
    subject: 'svc.user.<partner_id>.upload_kyc_documents',
    permission: 'write',
    summary:
      "Submit a user's KYC: `id_document` and `proof_of_residence` name objects in bucket " +
        "`kyc_dropbox_<user_id>` " +
      '(an id back `kyc_id_back_<user_id>_…` there is taken along). Each must be a PDF, JPEG or ' +
      'PNG of at most 10 MB; the bank copies them and the user\'s KYC goes `pending`.',
    request: z.strictObject({ user_id: uuid(), id_document: objectName(),
      proof_of_residence: objectName() }),
    response: z.object({ success: z.boolean(), message: z.string() }),
  }),
}

export const kybOperations = {
  get: operation({
    name: 'kyb_get',
    subject: 'svc.kyb.<partner_id>.get',
    permission: 'read',
    summary:
      "A business entity's KYB: its documents, its directors (from the company registry, by " +
        "registration number), " +
      'metadata, state (not_started, submitted, approved, rejected) and rejection reason.',
    request: z.strictObject({ entity_id: uuid() }),
    response: kybView.extend(
      { state: z.enum(kyb_states), rejection_reason: z.string().nullable() }),
  }),
  submit: operation({
    name: 'kyb_submit',
    subject: 'svc.kyb.<partner_id>.submit',
    permission: 'write',
    summary:
      'Submit KYB: `documents` (at least one business document) and `directors` ({director_id: ' +
      '[object names]}) name objects in bucket `kyb_dropbox_<entity_id>`; PDF, JPEG or PNG, at ' +
        'most 10 MB each. The state goes `submitted`.',
    request: z.strictObject({
      entity_id: uuid(),
      documents: z.array(objectName(), { error: 'must be a list of object names' }).min(1,
        { error: 'name at least one business document' })
        .describe("The business's documents: names of objects in bucket " +
          '`kyb_dropbox_<entity_id>`; each object a PDF, JPEG or PNG by its first bytes, 1 ' +
          "byte to 10 MB, stored in the bucket itself and matching its metadata's size and " +
          "SHA-256. With the directors', at most 50 documents and 50 MB in one submission."),
      directors: z.record(z.string().min(1).max(100),
        z.array(objectName(), { error: 'must be a list of object names' }))
        .describe("Each director's documents, by the director's `id` as `get` lists it (a " +
          'director it does not list is refused).')
        .optional(),
    }),
    response: z.object({}),
  }),
  update: operation({
    name: 'kyb_update',
    subject: 'svc.kyb.<partner_id>.update',
    permission: 'write',
    summary: "Replace the KYB's metadata (string keys to strings, numbers or booleans; at most 50 keys, 4 KB).",
    request: z.strictObject({ entity_id: uuid(), metadata: kybMetadata() }),
    response: kybView,
  }),
  updateDirector: operation({
    name: 'kyb_update_director',
    subject: 'svc.kyb.<partner_id>.update_director',
    permission: 'write',
    summary: "Set a director's full name, e-mail and metadata (only the fields given change).",
    request: z.strictObject({
      entity_id: uuid(),
      director_id: z.string().min(1).max(100),
      full_name: text(1, 200).optional(),
      email: email().optional(),
      metadata: kybMetadata().optional(),
    }),
    response: z.object({}),
  }),
  sendVerificationEmail: operation({
    name: 'kyb_send_verification_email',
    subject: 'svc.kyb.<partner_id>.send_verification_email',
    permission: 'write',
    summary: "E-mail a director the bank's request to verify their identity (through the bank's notifier); marks it sent.",
    request: z.strictObject({ entity_id: uuid(), director_id: z.string().min(1).max(100),
      email: email().optional() }),
    response: z.object({}),
  }),
}

// --- Bank side: operators review what was submitted

/** A document as operators see it: what was frozen at submission, and the decision on it. */
export const documentView = z.object({
  document_id: z.string(),
  name: z.string(),
  doc_type: z.string(),
  director_id: z.string().nullable(),
  original_filename: z.string().nullable(),
  content_type: z.string(),
  size: z.number(),
  sha256: z.string(),
  decision: z.enum(['approved', 'rejected']).nullable(),
  rejection_reason: z.string().nullable(),
  submitted_at: timestamp,
  /** When retention deleted its bytes (the metadata and hash stay). */
  deleted_at: timestamp.nullable(),
})
export type DocumentView = z.output<typeof documentView>

export const submissionView = z.object({
  submission_id: z.string(),
  state: z.enum(['pending', 'approved', 'rejected', 'superseded']),
  submitted_at: timestamp,
  submitted_by: z.string(),
  decided_at: timestamp.nullable(),
  decided_by: z.string().nullable(),
  rejection_reason: z.string().nullable(),
})
export type SubmissionView = z.output<typeof submissionView>

const documentDecision = z
  .strictObject({
    document_id: uuid(),
    decision: z.enum(['approve', 'reject'], { error: 'must be approve or reject' }),
    reason: text(1, 500).optional(),
  })
  .refine((d) => d.decision === 'approve' || d.reason !== undefined,
    { path: ['reason'], error: 'is required when rejecting a document' })

const decisionFields = {
  decision: z.enum(['approve', 'reject'], { error: 'must be approve or reject' }),
  reason: text(1, 500).optional(),
  documents: z.array(documentDecision).max(kyb_documents_max + 3).optional(),
}
const needsReason = <T extends { decision: string; reason?: string | undefined }>(r: T) =>
  r.decision === 'approve' || r.reason !== undefined

const operatorDirector = z.object({
  director_id: z.string(),
  name: z.string(),
  full_name: z.string().nullable(),
  email: z.string().nullable(),
  id_type: z.string(),
  approved: z.boolean(),
  verified: z.boolean(),
  verification_sent: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  documents: z.array(documentView),
})

const kybOperatorView = z.object({
  entity_id: z.string(),
  partner_id: z.string(),
  name: z.string(),
  registration_number: registrationNumberReply(),
  state: z.enum(kyb_states),
  rejection_reason: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  submission: submissionView.nullable(),
  documents: z.array(documentView),
  directors: z.array(operatorDirector),
})

const listRequest = <S extends readonly [string, ...string[]]>(states: S, initial: S[number]) =>
  z.strictObject({
    partner_id: uuid().optional(),
    state: z.enum(states, { error: `must be one of ${states.join(', ')}` }).default(
      initial as never),
    limit: pageLimit(500).optional(),
  })

export const reviewOperations = {
  kycList: operation({
    name: 'ops_kyc_list',
    sdk: 'kyc.list',
    subject: 'ops.kyc.list',
    permission: 'operator',
    summary: 'Users whose KYC submission is in a state (default pending: waiting for review), oldest submission first.',
    request: listRequest(['pending', 'approved', 'rejected'] as const, 'pending'),
    response: z.object({
      applications: z.array(
        z.object({
          user_id: z.string(),
          entity_id: z.string(),
          partner_id: z.string(),
          name: z.string(),
          kyc_status: z.string(),
          submitted_at: timestamp,
          documents: z.number(),
        }),
      ),
    }),
  }),
  kycShow: operation({
    name: 'ops_kyc_show',
    sdk: 'kyc.show',
    cli: { positionals: ['user_id'] },
    subject: 'ops.kyc.show',
    permission: 'operator',
    summary: "A user's KYC: the user, the latest submission and each of its documents' metadata and SHA-256.",
    request: z.strictObject({ user_id: uuid() }),
    response: z.object({ user: userRecord, partner_id: z.string(),
      // A personal entity's own user, whose KYC is the entity's: approving it approves the
      // entity and opens its first account. A business's user is decided alone.
      entity_holder: z.boolean().describe("Whether the user is a personal entity's own user: " +
        'approving their KYC approves the entity too.'),
      submission: submissionView.nullable(), documents: z.array(documentView) }),
  }),
  kycDecide: operation({
    name: 'ops_kyc_decide',
    sdk: 'kyc.decide',
    cli: { positionals: ['user_id'], choices: { decision: { approve: [], reject: ['reason'] } } },
    subject: 'ops.kyc.decide',
    permission: 'operator',
    summary:
      "Decide a user's pending KYC submission, overall and per document (`documents`: " +
      "[{document_id, decision, reason}]). Approving a person's KYC approves their entity and " +
        "opens its first account.",
    request: z.strictObject({ user_id: uuid(), ...decisionFields }).refine(needsReason,
      { path: ['reason'], error: 'is required when rejecting' }),
    response: z.object({
      user: userRecord,
      documents: z.array(documentView),
      account: accountSummary.extend({ kind: z.string() }).nullable(),
    }),
  }),
  kybList: operation({
    name: 'ops_kyb_list',
    sdk: 'kyb.list',
    subject: 'ops.kyb.list',
    permission: 'operator',
    summary: 'Business entities whose KYB is in a state (default submitted: waiting for review), oldest submission first.',
    request: listRequest(['submitted', 'approved', 'rejected'] as const, 'submitted'),
    response: z.object({
      applications: z.array(
        z.object({
          entity_id: z.string(),
          partner_id: z.string(),
          name: z.string(),
          registration_number: registrationNumberReply(),
          state: z.enum(kyb_states),
          submitted_at: timestamp,
          documents: z.number(),
        }),
      ),
    }),
  }),
  kybShow: operation({
    name: 'ops_kyb_show',
    sdk: 'kyb.show',
    cli: { positionals: ['entity_id'] },
    subject: 'ops.kyb.show',
    permission: 'operator',
    summary: "A business entity's KYB: state, metadata, the latest submission's documents and each director with theirs.",
    request: z.strictObject({ entity_id: uuid() }),
    response: kybOperatorView,
  }),
  kybDecide: operation({
    name: 'ops_kyb_decide',
    sdk: 'kyb.decide',
    cli: { positionals: ['entity_id'], choices: { decision: { approve: [], reject: ['reason'] } } },
    subject: 'ops.kyb.decide',
    permission: 'operator',
    summary:
      "Decide a business entity's submitted KYB, overall, per document and per director " +
        "(`directors`: " +
      '[{director_id, approved, verified}]). Approval approves the entity and opens its first ' +
        'account.',
    request: z
      .strictObject({
        entity_id: uuid(),
        ...decisionFields,
        directors: z
          .array(z.strictObject({ director_id: z.string().min(1).max(100),
            approved: z.boolean().optional(), verified: z.boolean().optional() }))
          .max(100)
          .optional(),
      })
      .refine(needsReason, { path: ['reason'], error: 'is required when rejecting' }),
    response: kybOperatorView.extend(
      { account: accountSummary.extend({ kind: z.string() }).nullable() }),
  }),
  documentGet: operation({
    name: 'ops_document_get',
    sdk: 'kyc.document',
    cli: { words: 'kyc document', positionals: ['document_id'], download: true },
    subject: 'ops.document.get',
    permission: 'operator',
    summary:
      `Part of a KYC/KYB document's bytes, base64 (at most ${document_chunk_bytes_max} bytes ` +
        `from \`offset\`); ` +
      '`next_offset` is null at the end. `bank kyc document <id> --out <file>` fetches all of it.',
    request: z.strictObject({
      document_id: uuid(),
      offset: z.int({ error: 'must be a whole number of bytes' }).min(0).default(0),
      length: z.int({ error: 'must be a whole number of bytes' }).min(1).max(
        document_chunk_bytes_max).default(document_chunk_bytes_max),
    }),
    response: documentView.extend({ offset: z.number(), data: z.string(),
      next_offset: z.number().nullable() }),
  }),

}

/**
 * An operator's direct decisions on a partner's KYB and a user's KYC (`ops.entity.review`,
 * `ops.user.kyc`), served by kyb-service.ts and kyc-service.ts, as the reviews above are.
 */
export const kycDecisionOperations = {
  entityReview: operation({
    name: 'ops_entity_review',
    sdk: 'entities.review',
    cli: { choices: { decision: { approve: [], reject: ['reason'] } } },
    subject: 'ops.entity.review',
    permission: 'operator',
    summary: "Decide an entity's KYB/KYC; the first approval opens its first account (the pool account for a root entity).",
    request: z
      .strictObject({
        entity_id: uuid(),
        decision: z.enum(['approve', 'reject'], { error: 'must be approve or reject' }),
        reason: text(1, 500).optional(),
      })
      .refine((r) => r.decision === 'approve' || r.reason !== undefined,
        { path: ['reason'], error: 'is required when rejecting' }),
    response: z.object({
      entity_id: z.string(),
      review_status: z.enum(['pending', 'approved', 'rejected']),
      approved: z.boolean(),
      account: accountSummary.extend({ kind: z.string() }).nullable(),
    }),
  }),
  userKyc: operation({
    name: 'ops_user_kyc',
    sdk: 'users.kyc',
    subject: 'ops.user.kyc',
    permission: 'operator',
    summary: "Set a user's KYC state: pending (resubmitted), approved or rejected (with a reason).",
    request: z.strictObject({
      user_id: uuid(),
      status: kycStatus.exclude(['not_started'],
        { error: 'must be pending, approved or rejected' }),
      reason: text(1, 500).optional(),
    }),
    response: z.object({ user: userRecord }),
  }),
}
