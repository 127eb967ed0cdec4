import { z } from 'zod'
import {
  addressSchema,
  country,
  email,
  id_number_rule,
  isSouthAfricanIdNumber,
  isUtcTimestamp,
  optionalText,
  registrationNumber,
  sa_id_number_rule,
  text,
  timestamp,
  utcTimestamp,
  uuid,
} from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Fields both types take beyond the incumbent interface's tables, because the incumbent's reference
// client sends them: a tax number, the entity's stated purpose, and its address (stored as
// the entity's address, read with get_address).
const createExtras = {
  tax_number: optionalText(30).optional(),
  purpose: optionalText().optional(),
  address: addressSchema.optional(),
}

const businessCreate = z.strictObject({
  entity_type: z.literal('business'),
  email: email(),
  country: country(),
  name: text(),
  trading_name: text(),
  registration_number: registrationNumber(),
  ...createExtras,
})

const personalCreate = z
  .strictObject({
    entity_type: z.literal('personal'),
    email: email(),
    country: country(),
    name: text().optional(),
    first_name: text(),
    last_name: text(),
    phone_number: text(1, 30),
    gender: z.enum(['male', 'female', 'other'], { error: 'must be one of male, female, other' }),
    date_of_birth: utcTimestamp(),
    id_number: text(1, 30).regex(/^[A-Za-z0-9]+$/, { error: 'must be letters and digits only' })
      .describe(id_number_rule),
    id_type: z.enum(['National', 'Passport'], { error: 'must be National or Passport' }),
    id_issue_date: utcTimestamp(),
    id_issue_expiry_date: utcTimestamp().optional(),
    city: optionalText().optional(),
    residency: optionalText().optional(),
    title: optionalText(30).optional(),
    permit_number: optionalText(50).optional(),
    // The reference client fills it with the person's name; a person has no trading name,
    // so it is taken and not kept (entity lists show it empty for a person).
    trading_name: optionalText().optional(),
    ...createExtras,
  })
  .superRefine((value, ctx) => {
    if (value.id_type === 'National' && !isSouthAfricanIdNumber(value.id_number)) {
      ctx.addIssue({
        code: 'custom',
        path: ['id_number'],
        message: `must be ${sa_id_number_rule}`,
      })
    }
    // A document cannot expire before it was issued. Compared only when both dates are
    // well formed; a malformed one has its own issue already.
    const issued = value.id_issue_date
    const expires = value.id_issue_expiry_date
    if (isUtcTimestamp(issued) && isUtcTimestamp(expires) && Date.parse(expires) < Date.parse(
        issued)) {
      ctx.addIssue({ code: 'custom', path: ['id_issue_expiry_date'],
        message: 'must not be before id_issue_date' })
    }
  })

export const entityCreateRequest = z.discriminatedUnion('entity_type',
    [businessCreate, personalCreate], {
  error: 'must be business or personal',
})
export type EntityCreateRequest = z.output<typeof entityCreateRequest>

export const entityAddress = z
  .object({
    address_line_1: z.string(),
    address_line_2: z.string(),
    city: z.string(),
    state: z.string(),
    postcode: z.string(),
    country: z.string(),
  })
  .nullable()

export const businessInfo = z.object({
  id: z.string(),
  date_created: timestamp,
  name: z.string(),
  trading_name: z.string(),
  entity_type: z.literal('business'),
  email: z.string(),
  approved: z.boolean(),
})

export const personalInfo = z.object({
  id: z.string(),
  date_created: timestamp,
  name: z.string(),
  entity_type: z.literal('personal'),
  email: z.string(),
  approved: z.boolean(),
  first_name: z.string(),
  last_name: z.string(),
  phone_number: z.string(),
  gender: z.string(),
  date_of_birth: z.string(),
  id_number: z.string(),
  id_type: z.string(),
  id_issue_date: z.string(),
  id_issue_expiry_date: z.string(),
  city: z.string(),
  residency: z.string(),
  title: z.string(),
  permit_number: z.string(),
})

export const entityInfo = z.union([businessInfo, personalInfo])
export type EntityInfo = z.output<typeof entityInfo>

/**
 * A registration number as the bank answers it: the 12 digits, whichever form the request
 * wrote it in (`registrationNumber()`), empty for a personal entity.
 */
export const registrationNumberReply = () => z.string().describe('The company registration ' +
  'number as 12 digits (`201501234507`): a number given as on the CIPC certificate, ' +
  '`YYYY/NNNNNN/NN`, is kept without its slashes. Empty for a personal entity.')

export const entityListItem = z.object({
  id: z.string(),
  name: z.string(),
  trading_name: z.string(),
  registration_number: registrationNumberReply(),
  email: z.string(),
  created_at: timestamp,
  entity_type: z.enum(['Business', 'Personal']),
  first_name: z.string(),
  last_name: z.string(),
  phone_number: z.string(),
  gender: z.string(),
  date_of_birth: timestamp,
  id_number: z.string(),
  id_type: z.string(),
  id_issue_date: timestamp,
  id_issue_expiry_date: timestamp,
  city: z.string(),
  residency: z.string(),
  title: z.string(),
  permit_number: z.string(),
})
export type EntityListItem = z.output<typeof entityListItem>

export const entityOperations = {
  create: operation({
    name: 'entity_create',
    subject: 'svc.entity.<partner_id>.create',
    permission: 'write',
    summary: 'Create a business or personal entity (a personal one also gets its single user). ' +
      "The entity's names are screened against the sanctions lists: the reply header " +
      '`Screening-Status` is `clear`, or `review` when a name came close to a listed one; the ' +
      'entity is then held (no account opens for it, 422 `screening_review`) until the bank ' +
      'clears it.',
    request: entityCreateRequest,
    // A personal entity's reply also names its automatic user (user_ready is then true).
    response: z.object({ id: z.string(), user_ready: z.boolean().optional(),
      user_id: z.string().optional() }),
    replyHeaders: { screening_status: 'Screening-Status' },
  }),
  info: operation({
    name: 'entity_info',
    subject: 'svc.entity.<partner_id>.info',
    permission: 'read',
    summary: 'Get one entity (its address is read with get_address). The reply header ' +
      '`Screening-Status` says where its sanctions screening stands: `clear`, `review` (held ' +
      'until the bank decides) or `confirmed` (held).',
    request: z.strictObject({ entity_id: uuid() }),
    response: entityInfo,
    replyHeaders: { screening_status: 'Screening-Status' },
  }),
  list: operation({
    name: 'entity_list',
    subject: 'svc.entity.<partner_id>.list-entities',
    permission: 'read',
    summary: "List the caller's entities, oldest first.",
    request: z.strictObject({}),
    response: z.object({ entities: z.array(entityListItem) }),
  }),
  getAddress: operation({
    name: 'entity_get_address',
    subject: 'svc.entity.<partner_id>.get_address',
    permission: 'read',
    summary: "An entity's stored address (null until one is written).",
    request: z.strictObject({ entity_id: uuid() }),
    response: z.object({ entity_id: z.string(), address: entityAddress }),
  }),
  updateAddress: operation({
    name: 'entity_update_address',
    subject: 'svc.entity.<partner_id>.update_address',
    permission: 'write',
    summary: "Write (replace) an entity's address.",
    request: addressSchema.extend({ entity_id: uuid() }),
    response: z.strictObject({}),
  }),
}

/**
 * Any partner's entities as an operator reads them, with their review state (`ops.entity.list`).
 */
export const entityOperatorOperations = {
  entityList: operation({
    name: 'ops_entity_list',
    sdk: 'entities.list',
    subject: 'ops.entity.list',
    permission: 'operator',
    summary: "A partner's entities with their review state.",
    request: z.strictObject({ partner_id: uuid() }),
    response: z.object({
      entities: z.array(
        entityListItem.extend({ partner_id: z.string(), review_status: z.string(),
          is_root: z.boolean(), tax_number: z.string(), purpose: z.string() }),
      ),
    }),
  }),
}
