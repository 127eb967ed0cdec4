import { z } from 'zod'
import { timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

/** Account metadata: names to string values (the reference client reads a map of strings). */
export const accountMetadata = z.record(z.string(), z.string())

/**
 * Every account this bank opens is a current account. The incumbent's reference client
 * reads `account_type` in its account records, so replies carry it.
 */
export const accountType = z.literal('current')

export const accountCreated = z.object({
  account_id: z.string(),
  entity_id: z.string(),
  account_number: z.string(),
  country: z.string(),
  created_at: timestamp,
  account_type: accountType,
})
export type AccountCreated = z.output<typeof accountCreated>

export const accountSummary = z.object({
  account_id: z.string(),
  account_number: z.string(),
  created_at: timestamp,
  account_type: accountType,
  metadata: accountMetadata,
})

/** Integer cents as a decimal string. */
export const centsString = z.string().regex(/^-?\d+$/)

export const accountDetails = z.object({
  account_id: z.string(),
  account_number: z.string(),
  balance: centsString,
  available_balance: centsString,
  account_type: accountType,
  metadata: accountMetadata,
})
export type AccountDetails = z.output<typeof accountDetails>

export const accountOperations = {
  create: operation({
    name: 'account_create',
    subject: 'svc.account.<partner_id>.create',
    permission: 'write',
    summary: 'Open a further account for an approved entity.',
    request: z.strictObject({ entity_id: uuid() }),
    response: accountCreated,
  }),
  getByEntity: operation({
    name: 'account_get_by_entity',
    subject: 'svc.account.<partner_id>.get_by_entity',
    permission: 'read',
    summary: "An entity's accounts, oldest first.",
    request: z.strictObject({ entity_id: uuid() }),
    response: z.object({ entity_id: z.string(), accounts: z.array(accountSummary) }),
  }),
  getDetails: operation({
    name: 'account_get_details',
    subject: 'svc.account.<partner_id>.get_details',
    permission: 'read',
    summary: "One account's number, balances and metadata. Its status (active, frozen, " +
      'blocked, dormant, closed) travels in the reply header `Account-Status` (the reference ' +
      "client's reader fails on any key it does not know); `status` says why.",
    request: z.strictObject({ account_id: uuid() }),
    response: accountDetails,
    replyHeaders: { status: 'Account-Status' },
  }),
}

/** An account's status as an operator reads it (the partner's in the `Account-Status` header). */
const accountStatus = z.enum(['active', 'frozen', 'blocked', 'dormant', 'closed'])

/**
 * Any partner's accounts as an operator reads them (`ops.account.*`): the partner's own
 * views (above) with the owner and kind added. Served by the operator service, which reads
 * them through the account service.
 */
export const accountOperatorOperations = {
  accountList: operation({
    name: 'ops_account_list',
    sdk: 'accounts.list',
    subject: 'ops.account.list',
    permission: 'operator',
    summary: "An entity's accounts, oldest first, each with its kind, status, balance and available balance (balance less holds), in cents.",
    request: z.strictObject({ entity_id: uuid() }),
    response: z.object({ entity_id: z.string(),
      accounts: z.array(accountSummary.extend({ kind: z.string(), partner_id: z.string(),
        status: accountStatus, balance: centsString, available_balance: centsString })) }),
  }),
  accountShow: operation({
    name: 'ops_account_show',
    sdk: 'accounts.show',
    subject: 'ops.account.show',
    permission: 'operator',
    summary: "One account of any partner: its owner, kind, number, status, balance and available balance (balance less holds), in cents.",
    request: z.strictObject({ account_id: uuid() }),
    response: accountDetails.extend({ partner_id: z.string(), entity_id: z.string(),
      kind: z.string(), country: z.string(), created_at: timestamp,
      status: accountStatus }),
  }),
}
