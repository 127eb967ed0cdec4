import { z } from 'zod'
import {
  addressSchema,
  country,
  email,
  id_number_rule,
  isoTimestamp,
  isSouthAfricanIdNumber,
  sa_id_number_rule,
  text,
  timestamp,
  timestamp_year_min,
  uuid,
} from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// The incumbent's interface writes `National` and `passport`; we accept either spelling of each and
// store `National` / `Passport`.
const idType = z
  .string({ error: 'must be National or passport' })
  .transform((value) => value.toLowerCase())
  .pipe(z.enum(['national', 'passport'], { error: 'must be National or passport' }))
  .transform((value) => (value === 'national' ? 'National' : 'Passport'))

const text2 = () => text(2)

/**
 * An ISO 8601 timestamp or plain date, not before `timestamp_year_min` (as for entities:
 * year 0 made PostgreSQL fail with a 500, and PGlite read years below 100 back as 19xx or
 * 20xx). A plain date means midnight UTC of that day: written out here,
 * because the database would otherwise read it in its session's time zone, and a
 * PostgreSQL set up in SAST would store the day before.
 */
const userTimestamp = () =>
  isoTimestamp()
    .refine((value) => Number(value.slice(0, 4)) >= timestamp_year_min, {
      error: `must not be before the year ${timestamp_year_min}`,
    })
    .transform((value) => (/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value))

interface IdentityFields {
  id_type?: 'National' | 'Passport' | undefined
  id_number?: string | undefined
  id_issue_expiry_date?: string | undefined
}

/**
 * Cross-field identity rules, shared by create and by update (after merging with the stored
 * record).
 */
export function identityIssues(value: IdentityFields): Array<{ field: string; message: string }> {
  const issues: Array<{ field: string; message: string }> = []
  if (value.id_type === 'Passport' && !value.id_issue_expiry_date) {
    issues.push({ field: 'id_issue_expiry_date', message: 'is required for a passport' })
  }
  if (value.id_type === 'National' && value.id_number !== undefined
      && !isSouthAfricanIdNumber(value.id_number)) {
    issues.push({ field: 'id_number', message: `must be ${sa_id_number_rule}` })
  }
  return issues
}

function refineIdentity(value: IdentityFields, ctx: z.RefinementCtx): void {
  for (const issue of identityIssues(value)) ctx.addIssue({ code: 'custom', path: [issue.field],
    message: issue.message })
}

export const userCreateRequest = z
  .strictObject({
    entity_id: uuid(),
    first_name: text2(),
    last_name: text2(),
    email: email(),
    phone_number: text(2, 30),
    gender: text(1, 30),
    date_of_birth: userTimestamp(),
    country: country(),
    city: text2(),
    residency: text2(),
    id_number: text(2, 30).describe(id_number_rule),
    id_type: idType,
    id_issue_date: userTimestamp(),
    id_issue_expiry_date: userTimestamp().optional(),
    title: text(2, 30),
    verified: z.boolean({ error: 'must be true or false' }),
    // Optional, as on entity create: only a non-citizen has a work permit, and the reference
    // SDK's own sample sends null for a citizen. Absent or null
    // is stored as ''; given, it is 2 to 50 characters.
    permit_number: text(2, 50).optional(),
    address: addressSchema.optional(),
  })
  .superRefine(refineIdentity)
export type UserCreateRequest = z.output<typeof userCreateRequest>

export const userUpdateRequest = z.strictObject({
  user_id: uuid(),
  first_name: text2().optional(),
  last_name: text2().optional(),
  email: email().optional(),
  phone_number: text(2, 30).optional(),
  gender: text(2, 30).optional(),
  date_of_birth: userTimestamp().optional(),
  birth_country: country().optional(),
  birth_city: text2().optional(),
  residency: text2().optional(),
  id_number: text(2, 30).describe(id_number_rule).optional(),
  id_type: idType.optional(),
  id_issue_date: userTimestamp().optional(),
  id_issue_expiry_date: userTimestamp().optional(),
  title: text(2, 30).optional(),
  permit_number: text(2, 50).optional(),
  // The holder's address a physical card needs, as create takes it; given, it replaces the
  // stored one (absent or null leaves it). The incumbent's SDK does not send it.
  address: addressSchema.describe('The holder\'s address, which a physical card needs; given, ' +
    'it replaces the stored one.').optional(),
})
export type UserUpdateRequest = z.output<typeof userUpdateRequest>

export const kycStatus = z.enum(['not_started', 'pending', 'approved', 'rejected'])

export const userRecord = z.object({
  id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  phone_number: z.string(),
  entity_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  verified: z.boolean(),
  verified_at: timestamp,
  gender: z.string(),
  country: z.string(),
  city: z.string(),
  residency: z.string(),
  id_number: z.string(),
  id_type: z.string(),
  title: z.string(),
  permit_number: z.string(),
  date_of_birth: timestamp,
  id_issue_date: timestamp,
  id_issue_expiry: timestamp,
  date_registered: timestamp.optional(),
  kyc_status: kycStatus,
  kyc_submitted_at: timestamp.optional(),
  kyc_reviewed_at: timestamp.optional(),
  kyc_rejection_reason: z.string().optional(),
})
export type UserRecord = z.output<typeof userRecord>

export const userOperations = {
  create: operation({
    name: 'user_create',
    subject: 'svc.user.<partner_id>.create',
    permission: 'write',
    summary: 'Create a user of a business entity.' +
      " The user's names, date of birth and ID number are " +
      'screened against the sanctions lists: the reply header `Screening-Status` is `clear`, or ' +
      '`review` when they came close to a listed person; the user\'s entity is then held (its ' +
      'accounts frozen, none opened: 422 `screening_review`) until the bank clears it.',
    request: userCreateRequest,
    response: z.object({ userId: z.string() }),
    replyHeaders: { screening_status: 'Screening-Status' },
  }),
  update: operation({
    name: 'user_update',
    subject: 'svc.user.<partner_id>.update',
    permission: 'write',
    summary: "Change a user's details, the address a physical card needs included; only the " +
      'fields given change. A change of name, date of birth or ID number is screened again.' +
      " The user's names, date of birth and ID number are " +
      'screened against the sanctions lists: the reply header `Screening-Status` is `clear`, or ' +
      '`review` when they came close to a listed person; the user\'s entity is then held (its ' +
      'accounts frozen, none opened: 422 `screening_review`) until the bank clears it.',
    request: userUpdateRequest,
    response: z.object({ userId: z.string() }),
    replyHeaders: { screening_status: 'Screening-Status' },
  }),
  get: operation({
    name: 'user_get',
    subject: 'svc.user.<partner_id>.get',
    permission: 'read',
    summary: 'Get one user. The reply header `Screening-Status` says where its sanctions ' +
      'screening stands: `clear`, `review` or `confirmed`.',
    request: z.strictObject({ user_id: uuid() }),
    response: z.object({ user: userRecord }),
    replyHeaders: { screening_status: 'Screening-Status' },
  }),
  getBirthDetails: operation({
    name: 'user_get_birth_details',
    subject: 'svc.user.<partner_id>.get_birth_details',
    permission: 'read',
    summary: "A user's country and city of birth, as set by update (empty strings until then).",
    request: z.strictObject({ user_id: uuid() }),
    response: z.object({ user_id: z.string(), birth_country: z.string(), birth_city: z.string() }),
  }),
  list: operation({
    name: 'user_list',
    subject: 'svc.user.<partner_id>.list',
    permission: 'read',
    summary: "List the partner's users, optionally of one entity, oldest first.",
    request: z.strictObject({ entity_id: uuid().optional() }),
    response: z.object({ users: z.array(userRecord) }),
  }),
}
