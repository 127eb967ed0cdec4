import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { centsAmount } from '../transfers/transfer-contract.ts'

// Payments other banks send to the bank's accounts: the payer's details of one, and (sandbox
// only) another bank paying in through the clearing-house simulator.

const payer = z.object({ name: z.string(), account_number: z.string(), branch_code: z.string() })

export const incomingDetails = z.object({
  tx_id: z.string(),
  account_id: z.string(),
  amount: centsString,
  payment_type: z.enum(['EFT', 'RTC']),
  payer,
  reference: z.string().nullable(),
  end_to_end_id: z.string(),
  message_id: z.string(),
  settlement_date: z.string(),
  received_at: timestamp,
})

export const incomingOperations = {
  details: operation({
    name: 'account_incoming_details',
    subject: 'svc.account.<partner_id>.incoming_details',
    permission: 'read',
    summary: "An incoming payment's payer (name, account number, branch code), reference and " +
      'clearing ids, by the tx_id of its `incoming` transaction.',
    request: z.strictObject({ tx_id: uuid() }),
    response: incomingDetails,
  }),
  sandboxIncoming: operation({
    name: 'ops_sandbox_incoming',
    sdk: 'sandbox.incoming',
    subject: 'ops.sandbox.incoming',
    permission: 'operator',
    summary: 'Sandbox only: another bank pays `amount` cents into the account with ' +
      '`account_number`, through the clearing-house simulator (an incoming pacs.008), and the ' +
      'bank applies it before answering: `credited` with its tx_id, or `returned` (AC01 when ' +
      'no account has that number).',
    request: z.strictObject({
      account_number: z.string().regex(/^\d{6,16}$/, { error: 'must be 6 to 16 digits' }),
      amount: centsAmount().min(1, { error: 'must be at least 1 cent' }),
      payer_name: text(1, 140).optional(),
      payer_account_number: z.string().regex(/^\d{6,16}$/,
        { error: 'must be 6 to 16 digits' }).optional(),
      payer_branch_code: z.string().regex(/^\d{6}$/, { error: 'must be 6 digits' }).optional(),
      reference: text(1, 140).optional(),
      payment_type: z.enum(['EFT', 'RTC']).optional(),
    }),
    response: z.object({
      status: z.enum(['credited', 'returned']),
      tx_id: z.string().nullable(),
      reason_code: z.string().nullable(),
      message_id: z.string(),
      end_to_end_id: z.string(),
    }),
    cli: { positionals: ['account_number', 'amount'], names: { amount: 'amount_cents' } },
  }),
}
