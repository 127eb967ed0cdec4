import { randomUUID } from 'node:crypto'
import type { Selectable } from 'kysely'
import { formatTimestamp } from '../contract/format.ts'
import type { AuthorizationView, AuthorizeRequest, DeclineReason } from './card-contract.ts'
import type { CardRow } from './card-service.ts'
import type { CardTables } from './card-tables.ts'

// An authorization's row as it is first written, and as the network answers it.

export type AuthorizationRow = Selectable<CardTables['card_authorizations']>

export function newAuthorization(
  card: CardRow,
  r: AuthorizeRequest,
  now: Date,
  reason: DeclineReason | null,
  message: string | null,
): AuthorizationRow {
  return {
    id: randomUUID(),
    partner_id: card.partner_id,
    card_id: card.id,
    account_id: card.account_id,
    tx_id: null,
    status: 'declined',
    decline_reason: reason,
    decline_message: message,
    amount: BigInt(r.amount),
    held: 0n,
    reversed: 0n,
    cleared: 0n,
    merchant_name: r.merchant_name,
    mcc: r.mcc,
    merchant_country: r.merchant_country,
    channel: r.channel,
    entry_mode: r.entry_mode,
    created_at: now,
    updated_at: now,
  }
}

export function authorizationView(row: AuthorizationRow): AuthorizationView {
  return {
    authorization_id: row.id,
    card_id: row.card_id,
    account_id: row.account_id,
    approved: row.status !== 'declined',
    decline_reason: row.decline_reason,
    decline_message: row.decline_message,
    status: row.status,
    amount: Number(row.amount),
    held: Number(row.held),
    reversed: Number(row.reversed),
    cleared: Number(row.cleared),
    tx_id: row.tx_id,
    merchant_name: row.merchant_name,
    mcc: row.mcc,
    merchant_country: row.merchant_country,
    channel: row.channel,
    entry_mode: row.entry_mode,
    created_at: formatTimestamp(row.created_at),
  }
}
