import { z } from 'zod'
import { country, emptyResponse, text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Cards (docs/guides/cards.md): a partner requests a card for a user of one of its entities,
// a user of the entity approves it, and the card is issued on one account for one holder.
// The records are those of the incumbent's reference SDK (its CardService): every component
// present in a reply, `null`, `0` or `false` for unset ones, no key beyond the record's.
// The card network is simulated in the sandbox (`ops.sandbox.card.*`, an operator playing it);
// a card network connected for real calls the same operations on its own subjects
// (`net.card.*`) with a credential of its own.

export const card_limits = {
  name_length_min: 2,
  name_length_max: 50,
  merchant_name_length_max: 100,
  /** The largest limit or amount: a Java `int`, as the reference SDK reads and writes it. */
  cents_max: 2_147_483_647,
  user_ids_max: 100,
  /** An authorization not cleared within this many days expires and releases its hold. */
  authorization_expiry_days: 7,
  /** A clearing may exceed the authorized amount by at most this many per cent. */
  over_clearing_percent: 15,
  /** Wrong PINs at terminals before PIN use is blocked (until a new PIN is set). */
  wrong_pins_max: 3,
  /** A card is valid for this many months after it is issued. */
  validity_months: 36,
} as const

export const cardStatuses = [
  'inactive',
  'active',
  'frozen',
  'stopped',
  'cancelled',
  'expired',
] as const
export type CardStatus = (typeof cardStatuses)[number]
export const cardRequestStatuses = ['pending', 'approved', 'rejected'] as const
export type CardRequestStatus = (typeof cardRequestStatuses)[number]

export const declineReasons = [
  'insufficient_funds',
  'account_frozen',
  'account_closed',
  'card_inactive',
  'card_frozen',
  'card_stopped',
  'card_expired',
  'feature_disabled',
  'limit_exceeded',
  'incorrect_pin',
  'pin_blocked',
  'partner_declined',
] as const
export type DeclineReason = (typeof declineReasons)[number]

export const cardChannels = ['pos', 'e_commerce', 'atm'] as const
export const entryModes = ['chip', 'contactless', 'magstripe', 'manual'] as const
export const authorizationStatuses = [
  'pending',
  'cleared',
  'reversed',
  'expired',
  'declined',
] as const
export type AuthorizationStatus = (typeof authorizationStatuses)[number]

const flag = () => z.boolean({ error: 'must be true or false' })
const limitCents = () =>
  z
    .int({ error: 'must be a whole number of cents' })
    .min(0, { error: 'must not be negative' })
    .max(card_limits.cents_max, { error: `must be at most ${card_limits.cents_max} cents` })

export const cardFeatures = z.strictObject({
  domestic: flag(),
  international: flag(),
  e_commerce: flag(),
  atm: flag(),
  pos: flag(),
  contactless: flag(),
})
export type CardFeatures = z.output<typeof cardFeatures>

export const cardLimits = z.strictObject({
  transaction_enabled: flag(),
  transaction: limitCents(),
  daily_enabled: flag(),
  daily: limitCents(),
  monthly_enabled: flag(),
  monthly: limitCents(),
  yearly_enabled: flag(),
  yearly: limitCents(),
})
export type CardLimits = z.output<typeof cardLimits>

/** Missing booleans are false and missing amounts 0, as the reference SDK writes unset ones. */
const partialFeatures = cardFeatures.partial()
const partialLimits = cardLimits.partial()

/**
 * `auto_lock`: an RFC 3339 time at which the card becomes frozen. `{}` (the reference SDK's
 * empty time record) or absent means none.
 */
const autoLock = z.union(
  [
    z.iso.datetime({
      offset: true,
      error: 'must be an RFC 3339 timestamp like 2026-12-31T22:00:00Z',
    }),
    z.strictObject({}).transform(() => undefined),
  ],
  { error: 'must be an RFC 3339 timestamp like 2026-12-31T22:00:00Z, or {} for none' },
)
export const cardExtras = z.strictObject({ auto_lock: autoLock.optional() })

/** A reply's extras: `auto_lock` is null when none is set. */
const extrasView = z.object({ auto_lock: timestamp.nullable() })

/** `user_ids`: a list of holders to narrow to; `{}`, `[]` or absent means every holder. */
const userIds = z.union(
  [
    z.array(uuid()).max(card_limits.user_ids_max, {
      error: `must list at most ${card_limits.user_ids_max} users`,
    }),
    z.strictObject({}).transform(() => [] as string[]),
  ],
  { error: 'must be a list of user ids, or {} for every user' },
)

const cardType = z
  .int({ error: 'must be 0 (virtual) or 1 (physical)' })
  .refine((value) => value === 0 || value === 1, { error: 'must be 0 (virtual) or 1 (physical)' })
const useType = z
  .int({ error: 'must be 0 (reusable) or 1 (single use)' })
  .refine((value) => value === 0 || value === 1, {
    error: 'must be 0 (reusable) or 1 (single use)',
  })
const cardName = () => text(card_limits.name_length_min, card_limits.name_length_max)

export const cardRequestRequest = z.strictObject({
  account_id: uuid(),
  user_id: uuid(),
  name: cardName(),
  type: cardType,
  use_type: useType,
  features: partialFeatures.optional(),
  limits: partialLimits.optional(),
  extras: cardExtras.optional(),
})
export type CardRequestRequest = z.output<typeof cardRequestRequest>

export const cardRequestView = z.object({
  id: z.string(),
  name: z.string(),
  type: z.number(),
  use_type: z.number(),
  created_at: timestamp,
  requested_by: z.string(),
  assigned_to: z.string(),
  features: cardFeatures,
  limits: cardLimits,
  extras: extrasView,
  status: z.enum(cardRequestStatuses),
})
export type CardRequestView = z.output<typeof cardRequestView>

export const cardView = z.object({
  id: z.string(),
  name: z.string(),
  type: z.number(),
  use_type: z.number(),
  last_4: z.string(),
  date_created: timestamp,
  user_id: z.string(),
  org_id: z.string(),
  features: cardFeatures,
  limits: cardLimits,
  extras: extrasView,
  status: z.enum(cardStatuses),
})
export type CardView = z.output<typeof cardView>

export const respondRequest = z.strictObject({
  entity_id: uuid(),
  account_id: uuid(),
  initiator: uuid(),
  request_id: uuid(),
  approved: flag(),
})
export type RespondRequest = z.output<typeof respondRequest>

export const editRequest = z.strictObject({
  entity_id: uuid(),
  card_id: uuid(),
  name: cardName().optional(),
  features: partialFeatures.optional(),
  limits: partialLimits.optional(),
  extras: cardExtras.optional(),
})
export type EditRequest = z.output<typeof editRequest>

/**
 * The card an operation acts on, and the user acting: the holder or a KYC-approved user of its
 * entity.
 */
const cardAction = { account_id: uuid(), initiator: uuid(), id: uuid() }

export const updateStatusRequest = z.strictObject({
  ...cardAction,
  status: z.enum(cardStatuses, { error: 'must be active, frozen, stopped or cancelled' }),
})
export const activateRequest = z.strictObject({
  ...cardAction,
  last_4: z
    .string({ error: 'must be a string' })
    .regex(/^\d{4}$/, { error: 'must be the 4 last digits of the card number' }),
})
export const setPinRequest = z.strictObject({
  ...cardAction,
  pin: z.string({ error: 'must be a string' }).regex(/^\d{4}$/, { error: 'must be 4 digits' }),
})
export const detailsRequest = z.strictObject(cardAction)

// The card network: its requests and replies, simulated in the sandbox and sent for real.

const amount = () =>
  z
    .int({ error: 'must be a whole number of cents' })
    .min(1, { error: 'must be at least 1 cent' })
    .max(card_limits.cents_max, { error: `must be at most ${card_limits.cents_max} cents` })
const merchantName = () => text(1, card_limits.merchant_name_length_max)

export const authorizeRequest = z.strictObject({
  card_id: uuid(),
  amount: amount(),
  merchant_name: merchantName(),
  mcc: z
    .string({ error: 'must be a string' })
    .regex(/^\d{4}$/, { error: 'must be a 4-digit merchant category code' }),
  merchant_country: country(),
  channel: z.enum(cardChannels, { error: 'must be pos, e_commerce or atm' }),
  entry_mode: z.enum(entryModes, { error: 'must be chip, contactless, magstripe or manual' }),
  pin: z
    .string({ error: 'must be a string' })
    .regex(/^\d{4}$/, { error: 'must be 4 digits' })
    .optional(),
})
export type AuthorizeRequest = z.output<typeof authorizeRequest>

export const authorizationView = z.object({
  authorization_id: z.string(),
  card_id: z.string(),
  account_id: z.string(),
  approved: z.boolean(),
  decline_reason: z.enum(declineReasons).nullable(),
  /** Why the partner declined, when it gave a reason. */
  decline_message: z.string().nullable(),
  status: z.enum(authorizationStatuses),
  /** Authorized in all (increments included, reversals not subtracted). */
  amount: z.number(),
  /** Still held on the account. */
  held: z.number(),
  reversed: z.number(),
  cleared: z.number(),
  tx_id: z.string().nullable(),
  merchant_name: z.string(),
  mcc: z.string(),
  merchant_country: z.string(),
  channel: z.enum(cardChannels),
  entry_mode: z.enum(entryModes),
  created_at: timestamp,
})
export type AuthorizationView = z.output<typeof authorizationView>

export const refundView = z.object({
  card_id: z.string(),
  account_id: z.string(),
  amount: z.number(),
  tx_id: z.string(),
})

export const cardOperations = {
  request: operation({
    name: 'card_request',
    sdk: 'cards.request',
    subject: 'svc.card.<partner_id>.request',
    permission: 'write',
    summary: "Request a card (type 0 virtual, 1 physical; use_type 0 reusable, 1 single use) on an account for its holder, a KYC-approved user of the account's entity; a physical card needs the holder's address. Answers the request's id; a user of the entity approves it with respond_to_request.",
    request: cardRequestRequest,
    response: z.object({ id: z.string() }),
  }),
  listRequests: operation({
    name: 'card_list_requests',
    sdk: 'cards.listRequests',
    subject: 'svc.card.<partner_id>.list_requests',
    permission: 'read',
    summary: 'The card requests of an account, newest first; user_ids narrows to those holders ({} or [] for all).',
    request: z.strictObject({ account_id: uuid(), user_ids: userIds.optional() }),
    response: z.object({ id: z.string(), requests: z.array(cardRequestView) }),
  }),
  respondToRequest: operation({
    name: 'card_respond_to_request',
    sdk: 'cards.respondToRequest',
    subject: 'svc.card.<partner_id>.respond_to_request',
    permission: 'write',
    summary: 'Approve or reject a pending card request. The initiator is a KYC-approved user of the entity and, for a business entity, not the holder (four eyes). Approval issues the card: active if virtual, inactive until activated if physical.',
    request: respondRequest,
    response: emptyResponse,
  }),
  edit: operation({
    name: 'card_edit',
    sdk: 'cards.edit',
    subject: 'svc.card.<partner_id>.edit',
    permission: 'write',
    summary: "Change a card's name, features, limits or auto-lock time; what is absent stays as it is.",
    request: editRequest,
    response: emptyResponse,
  }),
  listCards: operation({
    name: 'card_list_cards',
    sdk: 'cards.list',
    subject: 'svc.card.<partner_id>.list_cards',
    permission: 'read',
    summary: "The cards of an entity's account, newest first; user_ids narrows to those holders. Only the last 4 digits show.",
    request: z.strictObject({
      entity_id: uuid(),
      account_id: uuid(),
      user_ids: userIds.optional(),
    }),
    response: z.object({ id: z.string(), cards: z.array(cardView) }),
  }),
  getDetails: operation({
    name: 'card_get_details',
    sdk: 'cards.getDetails',
    subject: 'svc.card.<partner_id>.get_details',
    permission: 'card_details',
    summary: "A card's full number, expiry (MM/YY) and CVV, for a credential with the card_details permission only; every call is audited.",
    request: detailsRequest,
    response: z.object({ card_number: z.string(), expiry_date: z.string(), cvv: z.string() }),
  }),
  updateStatus: operation({
    name: 'card_update_status',
    sdk: 'cards.updateStatus',
    subject: 'svc.card.<partner_id>.update_status',
    permission: 'write',
    summary: 'Freeze (frozen) or unfreeze (active) a card, or end it for good: stopped (lost or stolen) or cancelled.',
    request: updateStatusRequest,
    response: emptyResponse,
  }),
  activate: operation({
    name: 'card_activate',
    sdk: 'cards.activate',
    subject: 'svc.card.<partner_id>.activate_card',
    permission: 'write',
    summary: 'Activate a physical card the holder has received, proven by its last 4 digits.',
    request: activateRequest,
    response: emptyResponse,
  }),
  setPin: operation({
    name: 'card_set_pin',
    sdk: 'cards.setPin',
    subject: 'svc.card.<partner_id>.set_pin',
    permission: 'write',
    summary: "Set the card's 4-digit PIN (never answered back); a new PIN lifts a block after 3 wrong PINs.",
    request: setPinRequest,
    response: emptyResponse,
  }),
}

/** A decision subject in the partner's own NATS account: `decisions.` and one to eight tokens. */
const decisionSubject = z
  .string({ error: 'must be a string' })
  .regex(/^decisions(\.[A-Za-z0-9_-]{1,64}){1,8}$/, {
    error: 'must be a NATS subject under decisions., e.g. decisions.cards (no wildcards)',
  })
const decisionSettings = z.object({
  subject: z.string().nullable(),
  stand_in: z.enum(['approve', 'decline']),
})

export const cardDecisionOperations = {
  setDecisions: operation({
    name: 'card_set_authorization_decisions',
    sdk: 'cards.setAuthorizationDecisions',
    subject: 'svc.card.<partner_id>.set_authorization_decisions',
    permission: 'write',
    summary: "Serve real-time authorization decisions: once the bank's own checks pass, it asks `subject` (in the partner's own NATS account) and waits at most 1 s for {approve, reason?}; no answer in time is the stand-in choice (decline unless approve). Without a subject the bank decides alone.",
    request: z.strictObject({
      subject: decisionSubject.optional(),
      stand_in: z.enum(['approve', 'decline'], { error: 'must be approve or decline' }).optional(),
    }),
    response: decisionSettings,
  }),
  getDecisions: operation({
    name: 'card_get_authorization_decisions',
    sdk: 'cards.getAuthorizationDecisions',
    subject: 'svc.card.<partner_id>.get_authorization_decisions',
    permission: 'read',
    summary: 'The subject the partner serves authorization decisions on (null: none) and its stand-in choice.',
    request: z.strictObject({}),
    response: decisionSettings,
  }),
}

// The card network's requests, one schema each, shared by the sandbox's simulator
// (`ops.sandbox.card.*`) and the network's own subjects (`net.card.*`): the two take and
// answer exactly the same bodies.
const incrementRequest = z.strictObject({ authorization_id: uuid(), amount: amount() })
const reverseRequest = z.strictObject({ authorization_id: uuid(), amount: amount().optional() })
const clearRequest = z.strictObject({ authorization_id: uuid(), amount: amount() })
const refundRequest =
  z.strictObject({ card_id: uuid(), amount: amount(), merchant_name: merchantName() })

/**
 * The card network simulated in the sandbox: an operator plays the network, with an
 * operator credential, and each call is an operator action in the audit trail. The
 * incumbent's reference SDK and tests call these; their names and bodies stay as they are.
 */
export const cardNetworkOperations = {
  authorize: operation({
    name: 'ops_sandbox_card_authorize',
    subject: 'ops.sandbox.card.authorize',
    permission: 'operator',
    summary: 'Simulate a card authorization (sandbox only): the bank checks the card, its features and limits, the PIN when one is given and the funds; approved, it holds the amount with a Pending CARD transaction; declined, nothing moves and decline_reason says why.',
    request: authorizeRequest,
    response: authorizationView,
    cli: { positionals: ['card_id'], names: { card_id: 'card-id' } },
  }),
  increment: operation({
    name: 'ops_sandbox_card_increment',
    subject: 'ops.sandbox.card.increment',
    permission: 'operator',
    summary: 'Simulate an incremental authorization (sandbox only): adds `amount` to a pending authorization, checked as an authorization.',
    request: incrementRequest,
    response: authorizationView,
    cli: { positionals: ['authorization_id'], names: { authorization_id: 'authorization-id' } },
  }),
  reverse: operation({
    name: 'ops_sandbox_card_reverse',
    subject: 'ops.sandbox.card.reverse',
    permission: 'operator',
    summary: 'Simulate a reversal (sandbox only): releases `amount` of a pending authorization, or all it still holds when absent.',
    request: reverseRequest,
    response: authorizationView,
    cli: { positionals: ['authorization_id'], names: { authorization_id: 'authorization-id' } },
  }),
  clear: operation({
    name: 'ops_sandbox_card_clear',
    subject: 'ops.sandbox.card.clear',
    permission: 'operator',
    summary: 'Simulate the clearing of a pending authorization (sandbox only): posts `amount` (less than held, or up to 15 % over it) and releases the hold.',
    request: clearRequest,
    response: authorizationView,
    cli: { positionals: ['authorization_id'], names: { authorization_id: 'authorization-id' } },
  }),
  refund: operation({
    name: 'ops_sandbox_card_refund',
    subject: 'ops.sandbox.card.refund',
    permission: 'operator',
    summary: "Simulate a merchant's refund to a card (sandbox only): credits the card's account.",
    request: refundRequest,
    response: refundView,
    cli: { positionals: ['card_id'], names: { card_id: 'card-id' } },
  }),
}

/**
 * The card network connected for real (docs/guides/cards.md, "Connecting a card network"):
 * the same five calls on subjects of its own, in production and in the sandbox, answered by
 * the same code as the simulator's. Only a card network credential (`cnk_…`, issued by
 * `bank credential create-card-network`) may send them; a partner's or an operator's gets
 * 403, and a card network credential gets 403 on every `svc.` and `ops.` subject. The
 * network is not a person: its calls write no operator audit row (each one's events and
 * ledger rows are its record).
 */
export const networkCardOperations = {
  authorize: operation({
    name: 'net_card_authorize',
    sdk: 'card.authorize',
    subject: 'net.card.authorize',
    permission: 'card_network',
    summary: 'A card authorization from the card network: the bank checks the card, its features and limits, the PIN when one is given and the funds (and asks the partner when it decides); approved, it holds the amount with a Pending CARD transaction; declined, nothing moves and decline_reason says why.',
    request: authorizeRequest,
    response: authorizationView,
  }),
  increment: operation({
    name: 'net_card_increment',
    sdk: 'card.increment',
    subject: 'net.card.increment',
    permission: 'card_network',
    summary: 'An incremental authorization from the card network: adds `amount` to a pending authorization, checked as an authorization.',
    request: incrementRequest,
    response: authorizationView,
  }),
  reverse: operation({
    name: 'net_card_reverse',
    sdk: 'card.reverse',
    subject: 'net.card.reverse',
    permission: 'card_network',
    summary: 'A reversal from the card network: releases `amount` of a pending authorization, or all it still holds when absent.',
    request: reverseRequest,
    response: authorizationView,
  }),
  clear: operation({
    name: 'net_card_clear',
    sdk: 'card.clear',
    subject: 'net.card.clear',
    permission: 'card_network',
    summary: 'The clearing of a pending authorization, from the card network: posts `amount` (less than held, or up to 15 % over it) and releases the hold; the same clearing again answers it again.',
    request: clearRequest,
    response: authorizationView,
  }),
  refund: operation({
    name: 'net_card_refund',
    sdk: 'card.refund',
    subject: 'net.card.refund',
    permission: 'card_network',
    summary: "A merchant's refund to a card, from the card network: credits the card's account.",
    request: refundRequest,
    response: refundView,
  }),
}
